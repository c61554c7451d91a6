#!/usr/bin/env bash
# Debian's Chromium for the browser tests (driven headless by Playwright with
# executable_path=/usr/bin/chromium; Playwright's own browser download cannot work here).
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "10-chromium: /usr/bin/chromium is missing; install Debian's chromium package (as root: apt-get install chromium)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
