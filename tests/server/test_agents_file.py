"""The agents file (``serve --agents``): every valid file means what it says, every other
text is a worded AgentsFileError naming where it went wrong, never another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.backend import SessionSpec
from adapter.server import AgentsFileError, load_agents, parse_agents
from adapter.server.agents import DEFAULT_AGENT, default_agent

_NAMES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True)
_CHARS = st.characters(codec="utf-8", exclude_characters="\x00")
_TEXT = st.text(_CHARS, min_size=1).filter(str.strip)
_RULES = st.lists(_TEXT.filter(lambda s: "," not in s), max_size=3)


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes, plus DEL, which TOML wants escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_document(agents: dict[str, dict[str, Any]], top: dict[str, Any] | None = None) -> str:
    """The agents as TOML tables (``[agents."name"]``), with ``top`` keys first."""
    lines = [f"{toml_string(k)} = {toml_value(v)}" for k, v in (top or {}).items()]
    for name, entry in agents.items():
        lines.append(f"[agents.{toml_string(name)}]")
        lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


_SERVERS = st.dictionaries(
    _NAMES,
    st.one_of(
        st.fixed_dictionaries(
            {"command": _TEXT},
            optional={
                "type": st.just("stdio"),
                "args": st.lists(st.text(_CHARS), max_size=3),
                "env": st.dictionaries(_NAMES, _TEXT, max_size=2),
            },
        ),
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["http", "sse"]),
                "url": st.sampled_from(["http://127.0.0.1:9/mcp", "https://example.com/m"]),
            },
            optional={"headers": st.dictionaries(_NAMES, _TEXT, max_size=2)},
        ),
    ),
    max_size=2,
)

_ENTRIES = st.fixed_dictionaries(
    {},
    optional={
        "description": _TEXT,
        "cwd": st.sampled_from(["/", "/tmp", "."]),
        "model": _TEXT,
        "policy": st.sampled_from(["supervised", "autonomous", "plan"]),
        "effort": st.sampled_from(["low", "medium", "high", "xhigh", "max"]),
        "system_prompt": _TEXT,
        "append_system_prompt": _TEXT,
        "allowed_tools": _RULES,
        "disallowed_tools": _RULES,
        "add_dirs": st.lists(st.sampled_from(["/", "/tmp"]), max_size=2),
        "mcp_servers": _SERVERS,
    },
)
_FILES = st.dictionaries(_NAMES, _ENTRIES, min_size=1, max_size=4)


def expected_spec(name: str, entry: dict[str, Any], base: Path) -> SessionSpec:
    fields = {k: v for k, v in entry.items() if k not in ("description", "mcp_servers")}
    fields["named_agent"] = name  # its sessions say which agent they came from
    if "cwd" in fields:
        fields["cwd"] = str(base / fields["cwd"]) if fields["cwd"] == "." else fields["cwd"]
    for key in ("allowed_tools", "disallowed_tools", "add_dirs"):
        if not fields.get(key, True):
            del fields[key]
    servers = {}
    for name, server in entry.get("mcp_servers", {}).items():
        kind = server.get("type", "stdio")
        if kind == "stdio":
            servers[name] = {
                "type": "stdio",
                "command": server["command"],
                "args": server.get("args", []),
                "env": server.get("env", {}),
            }
        else:
            servers[name] = {
                "type": kind,
                "url": server["url"],
                "headers": server.get("headers", {}),
            }
    if servers:
        fields["mcp_servers"] = servers
    return SessionSpec(**fields)


@given(_FILES)
def test_a_valid_file_means_what_it_says(agents: dict[str, dict[str, Any]]) -> None:
    base = Path("/tmp")
    parsed = parse_agents(toml_document(agents), base_dir=base)
    assert list(agents) == [agent.name for agent in parsed]
    for agent, (name, entry) in zip(parsed, agents.items(), strict=True):
        assert entry.get("description", DEFAULT_AGENT.description) == agent.description
        assert expected_spec(name, entry, base) == agent.spec


@given(st.text())
def test_any_text_is_agents_or_a_worded_error(text: str) -> None:
    try:
        agents = parse_agents(text)
    except AgentsFileError as exc:
        message = str(exc)
    else:
        assert agents and all(isinstance(agent.spec, SessionSpec) for agent in agents)
        assert all(agent.spec.named_agent == agent.name for agent in agents)
        return
    assert message.startswith("agents file: ")


_BAD_KEY = _NAMES.filter(lambda k: k not in {"agents", "description", "cwd", "model", "policy",
    "effort", "system_prompt", "append_system_prompt", "allowed_tools", "disallowed_tools",
    "add_dirs", "mcp_servers", "type", "command", "args", "env", "url", "headers"})  # fmt: skip


@given(_FILES, _BAD_KEY, st.sampled_from(["top", "agent", "server"]), st.data())
def test_an_unknown_key_anywhere_is_refused_by_name(
    agents: dict[str, dict[str, Any]], key: str, where: str, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(agents)))
    top = {key: 1} if where == "top" else None
    if where == "agent":
        agents[name][key] = "x"
    if where == "server":
        agents[name]["mcp_servers"] = {"srv": {"command": "node", key: "x"}}
    with pytest.raises(AgentsFileError) as caught:
        parse_agents(toml_document(agents, top))
    message = str(caught.value)
    assert f"unknown key {key!r}" in message
    if where != "top":
        assert f"agent {name!r}" in message


_WRONG: dict[str, list[Any]] = {
    "description": [1, ["x"], ""],
    "cwd": [True, ["/tmp"]],
    "model": [3, "  "],
    "policy": ["yolo", 1],
    "effort": ["extreme", 2],
    "system_prompt": [["a"], {"a": "b"}],
    "append_system_prompt": [1.5],
    "allowed_tools": ["Bash", [1], ["Bash(a,b)"], [""]],
    "disallowed_tools": [{"a": "b"}],
    "add_dirs": ["/tmp", [3]],
    "mcp_servers": [1, {"x": 1}, {"x": {"type": "ws"}}, {"x": {"args": ["a"]}},
                    {"x": {"type": "http", "url": "ftp://x"}}, {"bad name": {"command": "x"}},
                    {"x": {"command": "x", "env": {"A": 1}}}],
}  # fmt: skip


@given(_FILES, st.sampled_from(sorted(_WRONG)), st.data())
def test_a_value_of_the_wrong_kind_is_refused_naming_agent_and_key(
    agents: dict[str, dict[str, Any]], key: str, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(agents)))
    agents[name][key] = data.draw(st.sampled_from(_WRONG[key]))
    with pytest.raises(AgentsFileError) as caught:
        parse_agents(toml_document(agents), base_dir="/tmp")
    message = str(caught.value)
    assert f"agent {name!r}" in message and repr(key) in message, message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "no agents"),
        ("[agents]\n", "no agents"),
        ("agents = 3\n", "'agents' must hold tables"),
        ("[agents.x\n", "not valid TOML"),
        ('[agents."a b"]\n', "not a valid agent name"),
        ('[agents."-x"]\n', "not a valid agent name"),
        (f"[agents.{'x' * 65}]\n", "not a valid agent name"),
        ("agents = [1]\n", "'agents' must hold tables"),
        ('[agents.x]\nmodel = "a\\u0000b"\n', "NUL"),
    ],
)
def test_files_that_are_refused_and_why(text: str, words: str) -> None:
    with pytest.raises(AgentsFileError, match=words):
        parse_agents(text)


def test_paths_are_the_files_own_and_must_exist(tmp_path: Path) -> None:
    """Relative paths are from the file's directory; a missing one is named; a gateway
    (check_dirs=False) leaves them to its workers."""
    (tmp_path / "repo").mkdir()
    path = tmp_path / "agents.toml"
    path.write_text('[agents.a]\ncwd = "repo"\nadd_dirs = ["repo", "~"]\n')
    (agent,) = load_agents(path)
    assert str(tmp_path / "repo") == agent.spec.cwd
    assert [str(tmp_path / "repo"), str(Path.home())] == agent.spec.add_dirs
    path.write_text('[agents.a]\ncwd = "gone"\n')
    with pytest.raises(AgentsFileError, match=r"agent 'a': 'cwd': .*gone' does not exist"):
        load_agents(path)
    (tmp_path / "file").write_text("")
    path.write_text('[agents.a]\nadd_dirs = ["file"]\n')
    with pytest.raises(AgentsFileError, match="is not a directory"):
        load_agents(path)
    path.write_text('[agents.a]\ncwd = "gone"\n')
    assert str(tmp_path / "gone") == load_agents(path, check_dirs=False)[0].spec.cwd
    with pytest.raises(AgentsFileError, match="cannot read it"):
        load_agents(tmp_path / "missing.toml")
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(AgentsFileError, match="not UTF-8"):
        load_agents(path)


def test_the_default_agent_is_the_one_named_default_else_the_first() -> None:
    first, named = parse_agents('[agents.first]\n[agents.default]\ndescription = "D"\n')
    assert named is default_agent((first, named))
    assert first is default_agent((first,))
    assert DEFAULT_AGENT is default_agent(())
