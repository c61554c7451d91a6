#!/usr/bin/env bash
# The official ACP TypeScript SDK (@agentclientprotocol/sdk, pinned by the committed
# package-lock.json) that the ACP agent tests drive `claudecode-bridge acp` with.
set -euo pipefail
cd "$(dirname "$0")/../../tests/acp_agent/client"
installed=node_modules/@agentclientprotocol/sdk/package.json
if [[ -f $installed ]] && grep -q '"version": "2.4.0"' "$installed"; then
    exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
