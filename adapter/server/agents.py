"""Named agents: the agents file (``serve --agents FILE``) and what each one starts.

One server can offer several agents, each a CopilotKit ``agentId`` (and an AG-UI path), and
a ``named_agent`` a WebSocket client (the web UI) may start a session from: each with
its own working directory, model, permission policy, effort, system prompt, permission
rules, extra directories and MCP servers. The file is TOML, one table per agent::

    [agents.reviewer]
    description = "Reviews the code; changes nothing"
    cwd = "~/src/app"                       # relative paths: from the file's directory
    model = "sonnet"
    policy = "plan"                         # supervised | autonomous | plan
    effort = "high"                         # low | medium | high | xhigh | max
    system_prompt = "You review code."      # replaces Claude Code's (or append_system_prompt)
    allowed_tools = ["Read", "Grep"]        # run without asking
    disallowed_tools = ["Bash"]             # never run
    add_dirs = ["../docs"]

    [agents.reviewer.mcp_servers.docs]
    type = "http"                           # stdio (command, args, env) | http | sse (url, headers)
    url = "http://127.0.0.1:9000/mcp"

Every key is optional but the table itself; what an agent leaves out is the server's own
setting (``--cwd``, ``--model``, ``--policy``...). The file is checked as a whole when the
server starts: any fault (not TOML, an unknown key, a value of the wrong type, a working
directory that does not exist, a name that cannot be an id) is an :class:`AgentsFileError`
whose message names the agent and the key, and the server does not start.

Without a file the server offers one agent, :data:`DEFAULT_AGENT` (``default``, CopilotKit's
own default id), with the server's settings.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from claudecode.options import EFFORT_LEVELS

from ..backend import SessionSpec
from ..errors import UnknownAgentError
from ..specs import SPEC_POLICIES

__all__ = (
    "AGENT_NAME_PATTERN",
    "Agent",
    "AGENTS_ENV_VAR",
    "AgentsFileError",
    "DEFAULT_AGENT",
    "default_agent",
    "find_agent",
    "load_agents",
    "offered_agents",
    "parse_agents",
)

#: The environment variable ``serve --agents`` defaults to.
AGENTS_ENV_VAR = "CLAUDECODE_BRIDGE_AGENTS"

#: What an agent id may be: it is a path segment of the CopilotKit and AG-UI routes.
AGENT_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_NAME = re.compile(AGENT_NAME_PATTERN)
_MCP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_KEYS = frozenset(
    {
        "description",
        "cwd",
        "model",
        "policy",
        "effort",
        "system_prompt",
        "append_system_prompt",
        "allowed_tools",
        "disallowed_tools",
        "add_dirs",
        "mcp_servers",
    }
)
_MCP_KEYS = {
    "stdio": frozenset({"type", "command", "args", "env"}),
    "http": frozenset({"type", "url", "headers"}),
    "sse": frozenset({"type", "url", "headers"}),
}


class AgentsFileError(ValueError):
    """The agents file cannot be used (its message says where and why)."""


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent the server offers: its id, what a client is told about it, and the spec
    its sessions start from (unset fields: the server's settings). An agent of the agents
    file puts its name in that spec's ``named_agent``, so its sessions' info says which
    agent they came from; :data:`DEFAULT_AGENT`'s spec names none (no file, no name)."""

    name: str
    description: str = "Claude Code, through claudecode-bridge"
    spec: SessionSpec = field(default_factory=SessionSpec)

    def session_spec(self, **changes: Any) -> SessionSpec:
        """The spec a session of this agent starts from: :attr:`spec` with ``changes``
        (fields of :class:`~adapter.backend.SessionSpec`; a ``None`` leaves the agent's own,
        so a front end passes what its client set and nothing else)."""
        return msgspec.structs.replace(
            self.spec, **{key: value for key, value in changes.items() if value is not None}
        )


#: The one agent of a server without an agents file.
DEFAULT_AGENT = Agent("default")


def offered_agents(agents: tuple[Agent, ...]) -> tuple[Agent, ...]:
    """The agents a server configured with ``agents`` offers: those, or :data:`DEFAULT_AGENT`
    alone when there are none."""
    return agents or (DEFAULT_AGENT,)


def find_agent(agents: tuple[Agent, ...], name: str) -> Agent:
    """The agent called ``name`` among those a server configured with ``agents`` offers.

    Raises:
        UnknownAgentError: it offers none of that name.
    """
    found = next((agent for agent in offered_agents(agents) if agent.name == name), None)
    if found is None:
        known = ", ".join(agent.name for agent in offered_agents(agents))
        raise UnknownAgentError(f"no agent {name[:64]!r} here (this server offers: {known})")
    return found


def default_agent(agents: tuple[Agent, ...]) -> Agent:
    """The agent a client that names none gets (the plain ``/agui`` endpoint): the one
    named ``default``, else the first."""
    if not agents:
        return DEFAULT_AGENT
    return next((agent for agent in agents if agent.name == "default"), agents[0])


def load_agents(path: str | os.PathLike[str], *, check_dirs: bool = True) -> tuple[Agent, ...]:
    """The agents of the file at ``path`` (see :func:`parse_agents`).

    Raises:
        AgentsFileError: the file cannot be read, or :func:`parse_agents` refuses it.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise AgentsFileError(f"{os.fspath(path)}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise AgentsFileError(f"{os.fspath(path)}: not UTF-8 text") from None
    base = Path(path).expanduser().resolve().parent
    return parse_agents(text, source=os.fspath(path), base_dir=base, check_dirs=check_dirs)


def parse_agents(
    text: str,
    *,
    source: str = "agents file",
    base_dir: str | os.PathLike[str] | None = None,
    check_dirs: bool = True,
) -> tuple[Agent, ...]:
    """The agents of an agents file's ``text``, in the file's order.

    Paths (``cwd``, ``add_dirs``) have ``~`` expanded and are taken from ``base_dir`` (the
    file's directory; default: the current one) when relative. ``check_dirs=False`` leaves
    their existence unchecked (a cluster gateway: the workers have the directories).

    Raises:
        AgentsFileError: anything in the file that is not as described in this module.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentsFileError(f"{source}: not valid TOML: {exc}") from None
    unknown = sorted(key for key in data if key != "agents")
    if unknown:
        raise AgentsFileError(
            f"{source}: unknown key {unknown[0]!r} (the file holds [agents.NAME] tables only)"
        )
    table = data.get("agents")
    if table is not None and not isinstance(table, dict):
        raise AgentsFileError(f"{source}: 'agents' must hold tables ([agents.NAME])")
    if not table:
        raise AgentsFileError(f"{source}: no agents: add at least one [agents.NAME] table")
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    return tuple(
        _agent(f"{source}: agent {name!r}", name, entry, base, check_dirs)
        for name, entry in table.items()
    )


def _agent(where: str, name: str, entry: Any, base: Path, check_dirs: bool) -> Agent:
    if not _NAME.fullmatch(name):
        raise AgentsFileError(
            f"{where}: not a valid agent name (letters, digits, '-' and '_', at most 64, "
            "starting with a letter or digit)"
        )
    if not isinstance(entry, dict):
        raise AgentsFileError(f"{where}: must be a table ([agents.{name}])")
    unknown = sorted(key for key in entry if key not in _KEYS)
    if unknown:
        known = ", ".join(sorted(_KEYS))
        raise AgentsFileError(f"{where}: unknown key {unknown[0]!r} (known: {known})")
    fields: dict[str, Any] = {}
    description = _text(where, entry, "description")
    cwd = _text(where, entry, "cwd")
    if cwd is not None:
        fields["cwd"] = _directory(f"{where}: 'cwd'", cwd, base, check_dirs)
    for key in ("model", "system_prompt", "append_system_prompt"):
        value = _text(where, entry, key)
        if value is not None:
            fields[key] = value
    for key, choices in (("policy", sorted(SPEC_POLICIES)), ("effort", list(EFFORT_LEVELS))):
        value = _text(where, entry, key)
        if value is not None and value not in choices:
            raise AgentsFileError(f"{where}: {key!r} must be one of {', '.join(choices)}")
        if value is not None:
            fields[key] = value
    for key in ("allowed_tools", "disallowed_tools"):
        rules = _texts(where, entry, key)
        bad = next((rule for rule in rules if "," in rule), None)
        if bad is not None:
            # The CLI takes the rules comma-separated: a comma would split one in two.
            raise AgentsFileError(f"{where}: {key!r}: {bad!r} has a comma; list it apart")
        if rules:
            fields[key] = rules
    dirs = _texts(where, entry, "add_dirs")
    if dirs:
        fields["add_dirs"] = [_directory(f"{where}: 'add_dirs'", d, base, check_dirs) for d in dirs]
    servers = entry.get("mcp_servers")
    if servers is not None:
        fields["mcp_servers"] = _mcp_servers(f"{where}: 'mcp_servers'", servers)
    return Agent(
        name,
        description if description is not None else DEFAULT_AGENT.description,
        SessionSpec(named_agent=name, **fields),
    )


def _text(where: str, entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AgentsFileError(f"{where}: {key!r} must be a non-empty string")
    if "\x00" in value:
        # It becomes a command-line argument, which cannot hold a NUL.
        raise AgentsFileError(f"{where}: {key!r} holds a NUL character")
    return value


def _texts(where: str, entry: Mapping[str, Any], key: str) -> list[str]:
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(item, str) and item.strip() and "\x00" not in item for item in value
    ):
        raise AgentsFileError(f"{where}: {key!r} must be a list of non-empty strings")
    return list(value)


def _directory(where: str, value: str, base: Path, check: bool) -> str:
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base / path
    if check and not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise AgentsFileError(f"{where}: {str(path)!r} {what}")
    return str(path)


def _mcp_servers(where: str, servers: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(servers, dict):
        raise AgentsFileError(f"{where}: must be a table of servers ([...mcp_servers.NAME])")
    out: dict[str, dict[str, Any]] = {}
    for name, server in servers.items():
        at = f"{where}: server {name!r}"
        if not _MCP_NAME.fullmatch(name):
            raise AgentsFileError(f"{at}: not a valid server name (letters, digits, '-', '_')")
        if not isinstance(server, dict):
            raise AgentsFileError(f"{at}: must be a table")
        kind = server.get("type", "stdio")
        if kind not in _MCP_KEYS:
            raise AgentsFileError(f"{at}: 'type' must be one of stdio, http, sse")
        unknown = sorted(key for key in server if key not in _MCP_KEYS[kind])
        if unknown:
            known = ", ".join(sorted(_MCP_KEYS[kind]))
            raise AgentsFileError(f"{at}: unknown key {unknown[0]!r} for {kind} (known: {known})")
        if kind == "stdio":
            command = _text(at, server, "command")
            if command is None:
                raise AgentsFileError(f"{at}: a stdio server needs 'command'")
            out[name] = {
                "type": "stdio",
                "command": command,
                "args": _texts_or_empty(at, server, "args"),
                "env": _string_table(at, server, "env"),
            }
        else:
            url = _text(at, server, "url")
            if url is None or not url.startswith(("http://", "https://")):
                raise AgentsFileError(f"{at}: an {kind} server needs an http(s) 'url'")
            out[name] = {"type": kind, "url": url, "headers": _string_table(at, server, "headers")}
    return out


def _texts_or_empty(where: str, entry: Mapping[str, Any], key: str) -> list[str]:
    """A list of strings that may be empty ones (a command's arguments)."""
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(
        isinstance(item, str) and "\x00" not in item for item in value
    ):
        raise AgentsFileError(f"{where}: {key!r} must be a list of strings")
    return list(value)


def _string_table(where: str, entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(item, str) and "\x00" not in item and "\x00" not in name
        for name, item in value.items()
    ):
        raise AgentsFileError(f"{where}: {key!r} must be a table of strings")
    return dict(value)
