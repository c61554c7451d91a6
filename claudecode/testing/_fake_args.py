"""The fake CLI's command line: the real CLI's flags it parses (leniently, as the real one
would take them), and what it reads from them: the initial permission mode, the MCP servers
it reports, and the contents of the files the client passes inline JSON through.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from . import _fake_messages as m

__all__ = (
    "arg_files",
    "Args",
    "initial_mode",
    "mcp_servers",
)

Json = dict[str, Any]

# Flags of the real CLI that take a value; anything else starting with "-" is a switch
# unless written as --flag=value or followed by a non-flag word.
_VALUE_FLAGS = frozenset(
    {
        "--model",
        "--permission-mode",
        "--resume",
        "-r",
        "--session-id",
        "--permission-prompt-tool",
        "--input-format",
        "--output-format",
        "--mcp-config",
        "--resume-session-at",
        "--max-turns",
        "--append-system-prompt",
        "--system-prompt",
        "--allowedTools",
        "--allowed-tools",
        "--disallowedTools",
        "--disallowed-tools",
        "--add-dir",
        "--settings",
        "--max-thinking-tokens",
        "--setting-sources",
        "--fallback-model",
        "--agents",
        "--json-schema",
        "--thinking",
    }
)
_SWITCHES = frozenset(
    {
        "-p",
        "--print",
        "--verbose",
        "--include-partial-messages",
        "--replay-user-messages",
        "--fork-session",
        "--continue",
        "-c",
        "--strict-mcp-config",
        "--debug",
        "--dangerously-skip-permissions",
        "--version",
        "-v",
    }
)


@dataclass
class Args:
    """The parts of the real CLI's argv the fake acts on."""

    argv: list[str]
    values: dict[str, str] = field(default_factory=dict)
    switches: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, argv: list[str]) -> Args:
        """Parse ``argv`` leniently: unknown flags are accepted and ignored."""
        args = cls(list(argv))
        i = 0
        while i < len(argv):
            tok = argv[i]
            if tok.startswith("--") and "=" in tok:
                key, _, value = tok.partition("=")
                args.values[key] = value
            elif tok in _VALUE_FLAGS and i + 1 < len(argv):
                args.values[tok] = argv[i + 1]
                i += 1
            elif tok in _SWITCHES:
                args.switches.add(tok)
            elif tok.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                args.values[tok] = argv[i + 1]
                i += 1
            elif tok.startswith("-"):
                args.switches.add(tok)
            i += 1
        return args

    def value(self, *names: str) -> str | None:
        """The value of the first of ``names`` that was given."""
        for name in names:
            if name in self.values:
                return self.values[name]
        return None


def initial_mode(flag: str | None) -> str:
    if flag == "manual" or flag not in m.PERMISSION_MODES:
        return "default"
    return flag


def mcp_servers(config: str | None) -> list[Json]:
    if not config:
        return []
    try:
        if config.lstrip().startswith("{"):
            data = json.loads(config)
        else:
            with open(config, encoding="utf-8") as f:
                data = json.load(f)
        servers = data.get("mcpServers") or {}
    except (OSError, ValueError, AttributeError):
        return []
    return [
        {
            "name": name,
            "status": "connected",
            "source": "sdk" if (spec or {}).get("type") == "sdk" else "config",
        }
        for name, spec in servers.items()
    ]


def arg_files(argv: list[str]) -> dict[str, str]:
    """The contents of the files named by --mcp-config / --settings (the client passes
    inline JSON through private files that are gone once the session ends)."""
    files: dict[str, str] = {}
    for i, arg in enumerate(argv):
        flag, eq, value = arg.partition("=")
        if not eq:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        if flag in ("--mcp-config", "--settings") and os.path.isfile(value):
            with open(value, encoding="utf-8") as fh:
                files[value] = fh.read()
    return files
