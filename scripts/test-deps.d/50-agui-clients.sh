#!/usr/bin/env bash
# The real AG-UI / CopilotKit clients the AG-UI end-to-end tests drive: @ag-ui/client 1.0.0
# and 0.0.59 (the version CopilotKit pins) side by side, and @copilotkit/core 1.75.0, pinned
# by the committed package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/../../tests/agui_clients"
installed=node_modules/@copilotkit/core/package.json
if [[ -f $installed ]] && grep -q '"version": "1.75.0"' "$installed" \
    && [[ -f node_modules/agui-client-0.0.59/package.json ]] \
    && [[ -f node_modules/agui-client-1.0.0/package.json ]]; then
    exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
