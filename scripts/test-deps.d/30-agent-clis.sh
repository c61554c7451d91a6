#!/usr/bin/env bash
# The agent CLIs the terminal-session tests start in a pseudo-terminal (Codex, Gemini CLI,
# GitHub Copilot CLI), pinned by tests/agent-clis/package-lock.json and installed with
# `npm ci` into tests/agent-clis/node_modules (gitignored). Install scripts are not run:
# the CLIs need none (their native parts come as prebuilt platform packages).
set -euo pipefail
cd "$(dirname "$0")/../../tests/agent-clis"
if ! command -v npm >/dev/null; then
    echo "30-agent-clis: npm is missing; install Node.js >= 20 with npm" >&2
    exit 1
fi
stamp=node_modules/.claudecode-bridge-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    exit 0
fi
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
echo "$want" > "$stamp"
