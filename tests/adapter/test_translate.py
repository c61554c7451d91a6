"""The translator on every recorded transcript, plus golden expectations for five of them."""

from __future__ import annotations

import json

import pytest

from adapter.events import (
    AvailableCommands,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionRequest,
    Reasoning,
    SessionStatus,
    TaskEvent,
    ToolCall,
    ToolInputDelta,
    ToolUpdate,
)
from adapter.translate import Translator
from claudecode.messages import ResultMessage
from normalize import ModifyFile, ReadFile, ShellExec, SubagentTask
from tests.support.transcripts import (
    NAMES,
    assistant_texts,
    check_round_trip,
    check_tool_lifecycle,
    emitted_texts,
    main_text,
    of_type,
    processes,
    replay,
    replay_all,
    turns,
)

# ------------------------------------------------------------------ every transcript


@pytest.mark.parametrize("name", NAMES)
def test_every_transcript_gives_a_sensible_sequence(name: str) -> None:
    """Text once, tool calls completed, one Complete per result, JSON round trip."""
    for process in processes(name):
        translator = Translator()
        events = replay(process, translator)
        results = [m for m in process.messages if isinstance(m, ResultMessage)]

        check_round_trip(events)
        check_tool_lifecycle(events)
        assert len(results) == len(of_type(events, Complete))
        assert not any(
            isinstance(e, ErrorEvent) and e.kind in ("internal", "protocol") for e in events
        )
        # the session is announced once, first (after the initialize answer)
        statuses = [i for i, e in enumerate(events) if isinstance(e, SessionStatus)]
        assert statuses and statuses[0] == len(of_type(events[: statuses[0]], AvailableCommands))
        # every message's text and thinking exactly as the assistant lines tell it
        expected = assistant_texts(process.messages)
        emitted = emitted_texts(events)
        assert {k: v for k, v in emitted.items() if not k[0].startswith("result:")} == expected
        # each turn shows its result text exactly once, and ends with nothing open
        for turn, result in zip(turns(events), results, strict=True):
            if result.result:
                assert main_text(turn).count(result.result) == 1
            assert isinstance(turn[-1], Complete) or isinstance(turn[-2], Complete)
        # every turn ended with a result: closing adds nothing
        assert not translator.turn_open
        assert [] == translator.close(None)
        assert () == translator.pending_tool_calls


@pytest.mark.parametrize("name", NAMES)
def test_complete_comes_after_every_tool_update_of_its_turn(name: str) -> None:
    """Within a turn no ToolUpdate follows the Complete; the error follows the Complete."""
    for events in replay_all(name):
        for turn in turns(events):
            index, complete = next((i, e) for i, e in enumerate(turn) if isinstance(e, Complete))
            assert not of_type(turn[index + 1 :], ToolUpdate)
            errors = of_type(turn, ErrorEvent)
            assert all(turn.index(e) > index for e in errors)
            assert bool(errors) == complete.is_error


# ---------------------------------------------------------------------------- golden


def _one(name: str) -> list[Event]:
    (events,) = replay_all(name)
    return events


def test_basic_golden() -> None:
    """Thinking and text stream token by token; the assistant lines add nothing."""
    events = _one("basic.jsonl")
    kinds = [type(e).__name__ for e in events]
    assert [
        "AvailableCommands",
        "SessionStatus",
        "Reasoning",
        "Reasoning",
        "Reasoning",
        "MessageChunk",
        "MessageChunk",
        "MessageChunk",
        "ContextWindow",
        "ContextWindow",
        "Complete",
    ] == kinds
    commands = events[0]
    assert isinstance(commands, AvailableCommands)
    assert "deep-research" in [c.name for c in commands.commands]
    assert all(c.description for c in commands.commands[:3])
    status = events[1]
    assert isinstance(status, SessionStatus)
    assert status.status == "new"
    assert status.cli_session_id == "fc7a8aac-8db4-406b-8588-ef1187b140dc"
    assert status.cli_version == "2.1.332"
    assert status.model == "claude-opus-5-5"
    assert status.permission_mode == "default"
    assert status.cwd == "/sandbox/basic/cwd"
    assert "Task" in status.tools and "Bash" in status.tools
    assert [] == status.mcp_servers
    mid = "msg_vCjZyauqccjsvWlYYcH004nU"
    assert [
        Reasoning(message_id=mid, text=t) for t in ("The user says hi", ". I should greet", ".")
    ] == events[2:5]
    assert [
        MessageChunk(message_id=mid, text=t)
        for t in ("Hello from the f", "ake API! How can", " I help?")
    ] == events[5:8]
    # 2569 input + 48 output; the size is only known from the result's modelUsage
    assert ContextWindow(size=200_000, used=2617, remaining=197_383, percent=1.31) == events[8]
    assert ContextWindow(size=1_000_000, used=2617, remaining=997_383, percent=0.26) == events[9]
    complete = events[10]
    assert isinstance(complete, Complete)
    assert complete.is_error is False
    assert complete.subtype == "success"
    assert complete.result == "Hello from the fake API! How can I help?"
    assert complete.cost_usd == pytest.approx(0.011236)
    assert (complete.duration_ms, complete.duration_api_ms, complete.num_turns) == (167, 36, 1)
    assert (complete.tokens.input, complete.tokens.output) == (2569, 48)
    assert (complete.tokens.cache_read, complete.tokens.cache_creation) == (0, 0)
    assert (complete.stop_reason, complete.terminal_reason) == ("end_turn", "completed")
    assert complete.model == "claude-opus-5-5"
    # the text line's uuid, confirmed by the successful result
    assert complete.last_message_uuid == "0e311412-cd81-475f-9bad-8b38cb621b2f"
    assert complete.permission_denials == []
    assert complete.synthetic is False


def test_bash_deny_golden() -> None:
    """Streamed tool input, the call, the prompt, the denial as an error update, denials."""
    events = _one("bash_deny.jsonl")
    tool_id = "toolu_QxMKWiY95Y3AUpfjR6QARHY4"
    deltas = of_type(events, ToolInputDelta)
    assert {d.tool_call_id for d in deltas} == {tool_id}
    streamed = json.loads("".join(d.partial_json for d in deltas))
    assert {"command": "rm -rf /tmp/definitely-not-here", "description": "Delete"} == streamed
    (call,) = of_type(events, ToolCall)
    assert events.index(deltas[-1]) < events.index(call)
    assert (call.tool_call_id, call.tool_name, call.status) == (tool_id, "Bash", "running")
    assert call.title == "Run `rm -rf /tmp/definitely-not-here`"
    assert call.action_type == "command"
    assert isinstance(call.normalized, ShellExec)
    assert call.normalized.command == "rm -rf /tmp/definitely-not-here"

    (ask,) = of_type(events, PermissionRequest)
    assert ask.pending_id == "bf3638f6-8886-4f6e-aaea-fb01e447f830"
    assert (ask.tool_name, ask.tool_call_id) == ("Bash", tool_id)
    assert ask.input == {"command": "rm -rf /tmp/definitely-not-here", "description": "Delete"}
    assert isinstance(ask.normalized, ShellExec)
    assert ask.action_type == "command"
    assert ask.blocked_path == "/tmp/definitely-not-here"
    assert [s["type"] for s in ask.suggestions] == ["addRules", "addDirectories", "setMode"]
    assert [o.id for o in ask.options] == ["allow", "allow_always", "deny"]
    assert ask.decision_reason is None and ask.parent_tool_call_id is None

    (update,) = of_type(events, ToolUpdate)
    assert (update.tool_call_id, update.status, update.tool_name) == (tool_id, "error", "Bash")
    assert isinstance(update.normalized, ShellExec)
    assert update.normalized.error == "driver says no"
    assert update.synthetic is False

    assert main_text(events) == "OK, I will not delete it."
    complete = of_type(events, Complete)[0]
    assert complete.permission_denials == [
        {
            "tool_name": "Bash",
            "tool_use_id": tool_id,
            "tool_input": {"command": "rm -rf /tmp/definitely-not-here", "description": "Delete"},
        }
    ]
    assert complete.num_turns == 2
    assert complete.last_message_uuid == "7714a946-7900-4dd7-9ef4-741ec4481dd6"


def test_file_tools_golden() -> None:
    """Write, Read, Edit: titles relative to the cwd, results enriched, two prompts."""
    events = _one("file_tools.jsonl")
    calls = of_type(events, ToolCall)
    assert [(c.tool_name, c.title, c.action_type) for c in calls] == [
        ("Write", "Create hello.txt", "file_write"),
        ("Read", "Read hello.txt", "file_read"),
        ("Edit", "Edit hello.txt", "file_write"),
    ]
    updates = {u.tool_call_id: u for u in of_type(events, ToolUpdate)}
    assert [updates[c.tool_call_id].status for c in calls] == ["complete"] * 3
    write, read, edit = (updates[c.tool_call_id].normalized for c in calls)
    assert isinstance(write, ModifyFile) and write.mutations[0].type == "create"
    assert write.mutations[0].content == "hello world\n"
    assert isinstance(read, ReadFile) and read.output is not None
    assert read.output.content == "hello world\n"
    assert isinstance(edit, ModifyFile)
    diff = edit.mutations[0].diff or ""
    assert "-hello world" in diff and "+hello there" in diff

    asks = of_type(events, PermissionRequest)
    assert [(a.tool_name, a.tool_call_id) for a in asks] == [
        ("Write", calls[0].tool_call_id),
        ("Edit", calls[2].tool_call_id),
    ]
    assert all([o.id for o in a.options] == ["allow", "allow_always", "deny"] for a in asks)
    assert asks[0].suggestions == [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    ]
    # each prompt comes after its call and before its result
    for ask in asks:
        call = next(c for c in calls if c.tool_call_id == ask.tool_call_id)
        assert events.index(call) < events.index(ask) < events.index(updates[call.tool_call_id])

    assert main_text(events) == "Creating the file.Wrote, read and edited hello.txt."
    complete = of_type(events, Complete)[0]
    assert complete.num_turns == 4
    assert complete.last_message_uuid == "f55e7c9e-1e01-4f17-8884-67035cd93bf8"


def test_task_subagent_golden() -> None:
    """The sub-agent's tool call nests under the Agent call; task events name it."""
    events = _one("task_subagent.jsonl")
    agent_id = "toolu_ZCQ9BMXHDMiXeP5FVlF5srFZ"
    bash_id = "toolu_VHRZ41a8qbsDuP7195ySRki1"
    agent, bash = of_type(events, ToolCall)
    assert (agent.tool_call_id, agent.tool_name, agent.parent_tool_call_id) == (
        agent_id,
        "Agent",
        None,
    )
    assert isinstance(agent.normalized, SubagentTask)
    assert agent.title == "Agent: Count files"
    assert (bash.tool_call_id, bash.parent_tool_call_id) == (bash_id, agent_id)
    bash_done, agent_done = of_type(events, ToolUpdate)
    assert (bash_done.tool_call_id, bash_done.parent_tool_call_id) == (bash_id, agent_id)
    assert isinstance(bash_done.normalized, ShellExec) and bash_done.normalized.output is not None
    assert bash_done.normalized.output.stdout == "0"
    assert (agent_done.tool_call_id, agent_done.status) == (agent_id, "complete")
    assert isinstance(agent_done.normalized, SubagentTask) and agent_done.normalized.result

    tasks = of_type(events, TaskEvent)
    assert [t.phase for t in tasks] == ["started", "progress", "updated", "notification"]
    assert {t.tool_call_id for t in tasks} == {agent_id}
    assert {t.task_id for t in tasks} == {"a74154aaa4afa9cdf"}
    assert tasks[0].background is False and tasks[0].description == "Count files"
    assert tasks[1].last_tool_name == "Bash"
    assert tasks[2].status == "completed"
    assert tasks[3].summary == "Sub-agent here: there are 0 files."
    assert events.index(tasks[0]) < events.index(bash) < events.index(agent_done)

    # the sub-agent's prompt (a user text line) shows nothing; the main text is not nested
    assert main_text(events) == "The sub-agent says there are 0 files."
    assert all(c.parent_tool_call_id is None for c in of_type(events, MessageChunk))
    # the sub-agent's user lines are a side chain: not committed
    assert of_type(events, Complete)[0].last_message_uuid == "beb62918-7831-4c51-8f94-b42734b0918a"


def test_interrupt_golden() -> None:
    """The partial text once, complete before error, the next turn fine."""
    events = _one("interrupt.jsonl")
    first, second = turns(events)
    assert main_text(first) == "word word word word "
    complete = of_type(first, Complete)[0]
    assert complete.is_error is True
    assert complete.subtype == "error_during_execution"
    assert complete.terminal_reason == "aborted_streaming"
    assert complete.result is None
    # the aborted assistant line is not confirmed; the interruption note (a user line) is
    assert complete.last_message_uuid == "25d1b04e-1aba-469f-a139-b8b8f98c34f7"
    error = events[events.index(complete) + 1]
    assert ErrorEvent(message="interrupted", kind="interrupted") == error
    assert main_text(second) == "Second turn after interrupt."
    done = of_type(second, Complete)[0]
    assert (done.is_error, done.last_message_uuid) == (
        False,
        "ba2fd241-7193-4caa-a39c-649b1deac4e0",
    )
    assert not of_type(second, ErrorEvent)


def test_api_error_turns_show_the_error_text_once() -> None:
    """The synthetic assistant message carries the API error; the result does not repeat it."""
    first, *_ = replay_all("exit_code.jsonl")
    assert main_text(first) == "API Error: 400 fake bad request"
    complete = of_type(first, Complete)[0]
    assert complete.is_error and complete.terminal_reason == "api_error"
    assert complete.last_message_uuid is None
    # The request id is the synthetic message's: the result does not say it.
    assert (
        ErrorEvent(
            message="API Error: 400 fake bad request",
            kind="api_error",
            status=400,
            request_id="req_mibLtzAay3QZqE8yrpO2ZxdI",
        )
        == first[-1]
    )


def test_set_model_and_mode() -> None:
    """A mode change is reported once; a model change re-announces the session."""
    (events,) = replay_all("set_model_and_mode.jsonl")
    statuses = of_type(events, SessionStatus)
    assert [s.model for s in statuses] == ["claude-opus-5-5", "claude-haiku-4-5"]
    assert statuses[1].permission_mode == "acceptEdits"
    assert [m.mode for m in of_type(events, ModeChanged)] == ["acceptEdits"]
    # the haiku turn uses haiku's window once the result reports it
    windows = of_type(events, ContextWindow)
    assert windows[-1].size == 200_000


def test_multi_turn_drops_replayed_prompts() -> None:
    """Four turns, four Completes; replayed user messages give nothing and are not committed."""
    (events,) = replay_all("multi_turn.jsonl")
    completes = of_type(events, Complete)
    assert [c.result for c in completes][:2] == ["first answer", "second answer"]
    assert len(completes) == 4
    assert len(of_type(events, SessionStatus)) == 1
    replayed = {"beb353a3-707f-4c6e-8b65-2132ad081568", "60801a04-f844-4b38-95df-d5e05c83a36f"}
    assert not replayed & {c.last_message_uuid for c in completes}


def test_v2_1_197_sizes_its_window_from_the_suffixed_model_key() -> None:
    """``claude-opus-4-8[1m]`` in init and modelUsage, ``claude-opus-4-8`` from the API."""
    (events,) = replay_all("v2.1.197/basic.jsonl")
    assert {w.size for w in of_type(events, ContextWindow)} == {1_000_000}
    assert of_type(events, Complete)[0].model == "claude-opus-4-8"
