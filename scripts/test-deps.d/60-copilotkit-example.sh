#!/usr/bin/env bash
# The CopilotKit example page (examples/copilotkit: React, @copilotkit/react-core, vite),
# pinned by its committed package-lock.json; the browser test builds it and drives it in
# Debian's chromium with playwright-core (from 50-agui-clients.sh).
set -euo pipefail
cd "$(dirname "$0")/../../examples/copilotkit"
installed=node_modules/@copilotkit/react-core/package.json
if [[ -f $installed ]] && grep -q '"version": "1.74.0"' "$installed" \
    && [[ -f node_modules/vite/package.json ]]; then
    exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
