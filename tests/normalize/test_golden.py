"""Golden tests: real transcript lines normalise to the recorded payloads.

``golden.json`` holds the expected JSON of every call in ``tests/fixtures/normalize``.
Set ``NORMALIZE_UPDATE_GOLDEN=1`` to rewrite it after an intended change, then review the
diff.
"""

from __future__ import annotations

import json
import os

import pytest

from normalize import (
    CodeSearch,
    CreateTask,
    Generic,
    ManageTodos,
    Misc,
    ModifyFile,
    ReadFile,
    ShellExec,
    SubagentTask,
    action_type_for,
    decode_payload,
    encode_payload,
    normalize_tool_result,
    title_for,
)
from tests.normalize.normalize_helpers import FIXTURES, Call, replay

GOLDEN = FIXTURES / "golden.json"
EXCERPTS = sorted(path.name for path in FIXTURES.glob("*.jsonl"))


def transcript(name: str) -> list[Call]:
    return replay(FIXTURES / name)


def _actual() -> dict[str, object]:
    out: dict[str, object] = {}
    for name in EXCERPTS:
        for call in replay(FIXTURES / name):
            out[f"{name}#{call.tool_use_id}"] = json.loads(encode_payload(call.on_result))
    return out


def test_golden_file_matches() -> None:
    """Every real tool call normalises exactly to its recorded golden payload."""
    actual = _actual()
    if os.environ.get("NORMALIZE_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", "utf-8")
    expected = json.loads(GOLDEN.read_text("utf-8"))
    assert actual == expected


@pytest.mark.parametrize("name", EXCERPTS)
def test_golden_payloads_round_trip(name: str) -> None:
    """Payloads from real lines survive a JSON round trip, before and after the result."""
    for call in transcript(name):
        for payload in (call.on_use, call.on_result):
            assert decode_payload(encode_payload(payload)) == payload


def test_bash_success() -> None:
    """Bash: stdout/stderr come from tool_use_result, exit code 0 on success."""
    call = transcript("bash.jsonl")[0]
    payload = call.on_result
    assert isinstance(payload, ShellExec)
    assert payload.command == "echo hello"
    assert payload.description == "Print hello"
    assert payload.output is not None
    assert (payload.output.exit_code, payload.output.stdout, payload.output.stderr) == (
        0,
        "hello",
        "",
    )
    assert payload.error is None
    assert title_for(payload) == "Run `echo hello`"
    assert action_type_for(payload) == "command"


def test_bash_denials_are_errors_not_exit_codes() -> None:
    """A permission denial, a hook veto or a blocked path sets ``error``, no exit code."""
    denied = [call.on_result for call in transcript("bash.jsonl")[1:]]
    assert [type(p) for p in denied] == [ShellExec, ShellExec, ShellExec]
    assert [p.error for p in denied][:2] == [
        "driver says no",
        "PreToolUse:Bash hook error: driver hook says deny",
    ]
    assert denied[2].error is not None
    assert denied[2].error.startswith("touch in '/sandbox/no_prompt_tool/cwd/")
    assert all(p.output is None for p in denied if isinstance(p, ShellExec))


def test_write_read_edit() -> None:
    """Write (create), Read (line numbers stripped) and Edit (structuredPatch diff)."""
    write, read, edit = (call.on_result for call in transcript("files.jsonl"))
    path = "/sandbox/file_tools/cwd/hello.txt"

    assert isinstance(write, ModifyFile)
    assert write.file_path == path
    assert [m.type for m in write.mutations] == ["create"]
    assert write.mutations[0].content == "hello world\n"
    assert title_for(write, work_dir="/sandbox/file_tools/cwd") == "Create hello.txt"

    assert isinstance(read, ReadFile)
    assert read.output is not None
    assert read.output.content == "hello world\n"
    assert read.output.line_count == 2
    assert read.output.file_type == "text"
    assert action_type_for(read) == "file_read"

    assert isinstance(edit, ModifyFile)
    (mutation,) = edit.mutations
    assert (mutation.type, mutation.old_content, mutation.new_content) == (
        "patch",
        "world",
        "there",
    )
    assert mutation.diff == (
        f"--- {path}\n+++ {path}\n@@ -1,1 +1,1 @@\n-hello world\n+hello there\n"
    )
    assert (mutation.start_line, mutation.end_line) == (1, 1)
    assert title_for(edit, work_dir="/sandbox/file_tools/cwd/") == "Edit hello.txt"


def test_read_without_structured_result_strips_line_numbers() -> None:
    """The ``cat -n`` text alone gives the same content as the structured result."""
    call = transcript("files.jsonl")[1]
    payload = normalize_tool_result(call.on_use, content=call.content, tool_use_result=None)
    assert isinstance(payload, ReadFile)
    assert payload.output is not None
    assert payload.output.content == "hello world\n"
    assert payload.output.line_count == 2


def test_mcp_tool_is_generic_with_server_split_out() -> None:
    """``mcp__fe__echo`` → generic with server ``fe`` and name ``echo``."""
    (call,) = transcript("mcp.jsonl")
    payload = call.on_result
    assert isinstance(payload, Generic)
    assert (payload.tool, payload.server, payload.name) == ("mcp__fe__echo", "fe", "echo")
    assert payload.input == {"text": "hi from model"}
    assert payload.output == "echo: hi from model"
    assert action_type_for(payload) == "other"


@pytest.mark.parametrize("name", ["agent.jsonl", "agent.v2.1.197.jsonl"])
def test_agent_report(name: str) -> None:
    """Agent: the report text without harness framing, plus id, duration, tokens, tools."""
    agent = next(c.on_result for c in transcript(name) if c.name == "Agent")
    assert isinstance(agent, SubagentTask)
    assert (agent.description, agent.subagent_type) == ("Count files", "general-purpose")
    assert agent.prompt == "Count the files in the cwd and report."
    assert agent.result is not None
    assert agent.result.status == "completed"
    assert agent.result.output == "Sub-agent here: there are 0 files."
    assert agent.result.tool_use_count == 1
    assert agent.result.agent_id is not None
    assert agent.result.total_tokens is not None
    assert agent.result.duration_ms is not None
    assert title_for(agent) == "Agent: Count files"


def test_subagent_bash_without_tool_use_result() -> None:
    """A sub-agent's Bash result has ``tool_use_result: null``: stdout comes from the text."""
    bash = next(c for c in transcript("agent.jsonl") if c.name == "Bash")
    assert bash.tool_use_result is None
    assert isinstance(bash.on_result, ShellExec)
    assert bash.on_result.output is not None
    assert (bash.on_result.output.exit_code, bash.on_result.output.stdout) == (0, "0")


def test_unavailable_tool_and_tool_search() -> None:
    """A refused TodoWrite keeps its items and gets the unwrapped error; ToolSearch is misc."""
    todo, search = (call.on_result for call in transcript("tool_availability.jsonl"))
    assert isinstance(todo, ManageTodos)
    assert [(i.description, i.status, i.active_form) for i in todo.items] == [("x", "pending", "x")]
    assert todo.error is not None
    assert todo.error.startswith("No such tool available: TodoWrite.")
    assert isinstance(search, Misc)
    assert (search.label, search.details) == ("Search tools", "select:TaskCreate")
    assert search.output == "No matching deferred tools found"


def test_task_create_gets_its_id() -> None:
    """TaskCreate → create_task with the id from ``{"task": {"id": "1"}}``."""
    (call,) = transcript("tasks.v2.1.197.jsonl")
    payload = call.on_result
    assert isinstance(payload, CreateTask)
    assert (payload.title, payload.description, payload.task_id) == ("a task", "d", "1")
    assert title_for(payload) == "Create task: a task"


def test_no_golden_call_falls_back_to_generic_by_accident() -> None:
    """Only MCP tools are generic among the real calls."""
    for name in EXCERPTS:
        for call in replay(FIXTURES / name):
            if isinstance(call.on_result, Generic):
                assert call.name.startswith("mcp__")
            if isinstance(call.on_result, CodeSearch):  # pragma: no cover - none recorded
                raise AssertionError
