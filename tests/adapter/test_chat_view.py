"""The chat view model: entries from events, deltas, read coalescing, batch invariance."""

from __future__ import annotations

import itertools
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from adapter.chat import (
    AssistantText,
    ChatDelta,
    ChatEntry,
    ChatSnapshot,
    ChatView,
    CommandEntry,
    ErrorEntry,
    InterruptEntry,
    PermissionEntry,
    ReadGroup,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
    parse_user_text,
)
from adapter.events import (
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionCancelled,
    PermissionRequest,
    Reasoning,
    SessionStatus,
    TokenUsage,
    ToolCall,
    ToolProgress,
    ToolUpdate,
    UserMessage,
)
from normalize import normalize_tool_result, normalize_tool_use
from tests.support.transcripts import NAMES, processes, replay


def replica_apply(entries: list[ChatEntry], delta: ChatDelta) -> list[ChatEntry]:
    """What a UI does with a delta: drop removed, replace updated in place, append added."""
    removed = set(delta.removed)
    out = [e for e in entries if e.id not in removed]
    updated = {e.id: e for e in delta.updated}
    assert set(updated) <= {e.id for e in out}, "an update for an entry the UI does not have"
    out = [updated.get(e.id, e) for e in out]
    known = {e.id for e in out}
    assert not any(e.id in known for e in delta.added), "an added entry the UI already has"
    return out + list(delta.added)


def build(events: list[Event], cuts: list[int] | None = None) -> tuple[ChatView, list[ChatEntry]]:
    view = ChatView()
    replica: list[ChatEntry] = []
    bounds = [0, *sorted(set(cuts or [])), len(events)]
    for start, end in itertools.pairwise(bounds):
        replica = replica_apply(replica, view.apply(events[start:end]))
    return view, replica


def call(tool_id: str, name: str, parent: str | None = None, **tool_input: Any) -> ToolCall:
    payload = normalize_tool_use(name, tool_input)
    return ToolCall(
        tool_call_id=tool_id,
        tool_name=name,
        title=name,
        normalized=payload,
        parent_tool_call_id=parent,
    )


def done(
    tool_id: str,
    name: str,
    content: str = "ok",
    *,
    error: bool = False,
    parent: str | None = None,
    **tool_input: Any,
) -> ToolUpdate:
    payload = normalize_tool_result(
        normalize_tool_use(name, tool_input), content=content, is_error=error
    )
    return ToolUpdate(
        tool_call_id=tool_id,
        status="error" if error else "complete",
        title=name,
        normalized=payload,
        tool_name=name,
        parent_tool_call_id=parent,
    )


def read(tool_id: str, *, error: bool = False) -> list[Event]:
    return [
        call(tool_id, "Read", file_path=f"/{tool_id}"),
        done(tool_id, "Read", "1\tx", error=error, file_path=f"/{tool_id}"),
    ]


# ------------------------------------------------------------------------ units


def test_text_grows_one_entry_and_tools_split_runs() -> None:
    view, replica = build(
        [
            UserMessage(text="hello"),
            Reasoning(message_id="m1", text="hm"),
            Reasoning(message_id="m1", text="m"),
            MessageChunk(message_id="m1", text="Hel"),
            MessageChunk(message_id="m1", text="lo"),
            call("T1", "Bash", command="ls"),
            done("T1", "Bash", "a\nb", command="ls"),
            MessageChunk(message_id="m1", text="after"),
        ],
        cuts=[2, 4, 6],
    )
    assert view.entries == replica
    kinds = [type(e) for e in view.entries]
    assert [UserEntry, ReasoningEntry, AssistantText, ToolEntry, AssistantText] == kinds
    user, thinking, first, tool, second = view.entries
    assert isinstance(user, UserEntry) and "hello" == user.text
    assert isinstance(thinking, ReasoningEntry) and "hmm" == thinking.text
    assert isinstance(first, AssistantText) and "Hello" == first.text
    assert isinstance(second, AssistantText) and "after" == second.text
    assert first.id != second.id
    assert isinstance(tool, ToolEntry) and "complete" == tool.status and "T1" == tool.id


def test_consecutive_successful_reads_coalesce_with_a_stable_id() -> None:
    events = [*read("R1"), *read("R2"), *read("R3"), *read("R4", error=True), *read("R5")]
    view, replica = build(events, cuts=[1, 3, 5])
    assert view.entries == replica
    group, failed, last = view.entries
    assert isinstance(group, ReadGroup) and "R1" == group.id
    assert ["R1", "R2", "R3"] == [r.id for r in group.reads]
    assert isinstance(failed, ToolEntry) and "error" == failed.status
    assert isinstance(last, ToolEntry) and "R5" == last.id
    # recomputing from scratch gives the same ids
    again, _ = build(events)
    assert [e.id for e in again.entries] == [e.id for e in view.entries]


def test_parallel_reads_completing_out_of_order_still_coalesce() -> None:
    events: list[Event] = [
        call("R1", "Read", file_path="/a"),
        call("R2", "Read", file_path="/b"),
        done("R2", "Read", file_path="/b"),
        done("R1", "Read", file_path="/a"),
    ]
    view, replica = build(events, cuts=[3])
    assert view.entries == replica
    [group] = view.entries
    assert isinstance(group, ReadGroup) and ("R1", ["R1", "R2"]) == (
        group.id,
        [r.id for r in group.reads],
    )


def test_sub_agent_work_is_nested_under_its_agent_call() -> None:
    events: list[Event] = [
        call("A1", "Agent", description="look", prompt="look around"),
        MessageChunk(message_id="s1", text="sub says", parent_tool_call_id="A1"),
        call("B1", "Bash", parent="A1", command="ls"),
        MessageChunk(message_id="m2", text="main says"),
        MessageChunk(message_id="s1", text=" more", parent_tool_call_id="A1"),
    ]
    view, _ = build(events)
    by_id = {e.id: e for e in view.entries}
    assert "A1" == by_id["B1"].parent_id
    sub_texts = [e for e in view.entries if isinstance(e, AssistantText) and e.parent_id == "A1"]
    # the sub-agent's text run was broken by its own Bash call, not by the main thread
    assert ["sub says", " more"] == [e.text for e in sub_texts]


def test_slash_commands_outputs_interrupts_and_selections() -> None:
    view, _ = build(
        [
            UserMessage(
                text="<command-name>/cost</command-name>\n<command-message>cost</command-message>"
                "\n<command-args></command-args>"
            ),
            UserMessage(text="<local-command-stdout>Total cost: $0.01</local-command-stdout>"),
            UserMessage(text="/compact keep the plan"),
            UserMessage(text="[Request interrupted by user]"),
            UserMessage(
                text="<ide_selection>lines 1-3 of a.py</ide_selection>explain this"
                "<system-reminder>ignore</system-reminder>"
            ),
            UserMessage(text="/usr/bin is where it lives"),
        ]
    )
    cost, compact, interrupt, selected, path = view.entries
    assert isinstance(cost, CommandEntry)
    assert ("cost", "Total cost: $0.01") == (cost.name, cost.output)
    assert isinstance(compact, CommandEntry)
    assert ("compact", "keep the plan") == (compact.name, compact.args)
    assert isinstance(interrupt, InterruptEntry)
    assert isinstance(selected, UserEntry)
    assert ("explain this", ("lines 1-3 of a.py",)) == (selected.text, selected.selections)
    assert isinstance(path, UserEntry) and path.text.startswith("/usr/bin")


def test_permissions_open_and_close() -> None:
    ask = PermissionRequest(
        pending_id="p1",
        tool_name="Bash",
        input={"command": "rm x"},
        normalized=normalize_tool_use("Bash", {"command": "rm x"}),
        title="rm x",
        tool_call_id="T1",
    )
    view = ChatView()
    view.apply([call("T1", "Bash", command="rm x"), ask])
    assert ["p1"] == [p.pending_id for p in view.open_permissions()]
    delta = view.apply([done("T1", "Bash", command="rm x")])
    assert [] == view.open_permissions()
    assert {"T1", "permission:p1"} == {e.id for e in delta.updated}
    other = msgspec.structs.replace(ask, pending_id="p2", tool_call_id="T2")
    view.apply([other, PermissionCancelled(pending_id="p2")])
    entry = view.entry("permission:p2")
    assert isinstance(entry, PermissionEntry) and "closed" == entry.state


def test_todos_usage_context_and_model() -> None:
    todos = {"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]}
    view, _ = build(
        [
            SessionStatus(status="new", model="m-1", permission_mode="default", tools=["Bash"]),
            call("W1", "TodoWrite", **todos),
            Complete(cost_usd=0.5, tokens=TokenUsage(input=10, output=5), model="m-2"),
            Complete(cost_usd=0.25, tokens=TokenUsage(input=1, output=1)),
            ContextWindow(size=1000, used=100, remaining=900, percent=10.0),
            ErrorEvent(message="boom", kind="api_error"),
            ErrorEvent(message="stopped", kind="interrupted"),
        ]
    )
    assert ["a"] == [t.description for t in view.todos]
    assert (0.75, 2, 11, 6) == (
        view.usage.cost_usd,
        view.usage.turns,
        view.usage.input_tokens,
        view.usage.output_tokens,
    )
    assert "m-2" == view.model and "default" == view.permission_mode
    assert view.context_window is not None and 100 == view.context_window.used
    assert [ToolEntry, ErrorEntry, InterruptEntry] == [type(e) for e in view.entries]
    snap = view.snapshot()
    assert snap == msgspec.json.decode(msgspec.json.encode(snap), type=ChatSnapshot)


def test_progress_of_a_running_tool_updates_its_entry() -> None:
    view = ChatView()
    view.apply([call("T1", "Bash", command="sleep 9")])
    delta = view.apply([ToolProgress(tool_call_id="T1", elapsed_seconds=2.0)])
    [entry] = delta.updated
    assert isinstance(entry, ToolEntry) and 2.0 == entry.elapsed_seconds


def test_a_result_without_its_call_still_shows() -> None:
    view, _ = build([done("X1", "Bash", "out", command="ls")])
    [entry] = view.entries
    assert isinstance(entry, ToolEntry) and "X1" == entry.id


def test_user_text_parser_never_raises_on_odd_input() -> None:
    for text in ["", "<command-name>", "</command-name>", "/", "//x", "<ide_selection>x"]:
        parse_user_text(text)


# ------------------------------------------------------------------ real transcripts


@pytest.mark.parametrize("name", NAMES)
def test_real_transcripts_build_a_consistent_view(name: str) -> None:
    for process in processes(name):
        events = replay(process)
        view, replica = build(events, cuts=list(range(1, len(events), 3)))
        assert view.entries == replica
        whole, _ = build(events)
        assert whole.snapshot() == view.snapshot()
        ids = [e.id for e in view.entries]
        assert len(ids) == len(set(ids))
        shown: set[str] = set()
        for entry in view.entries:
            if isinstance(entry, ReadGroup):
                assert len(entry.reads) >= 2
                assert all(r.status == "complete" for r in entry.reads)
                shown |= {r.id for r in entry.reads}
            elif isinstance(entry, ToolEntry):
                shown.add(entry.id)
                assert entry.status != "running", "every call of a finished turn completed"
        calls = {e.tool_call_id for e in events if isinstance(e, ToolCall)}
        assert calls <= shown
        # Every text is shown: as assistant text, or (a failed turn's API Error message) as
        # the text of the error entry that stands for it.
        text = "".join(e.text for e in events if isinstance(e, MessageChunk))
        assert text == "".join(
            e.text if isinstance(e, AssistantText) else e.message
            for e in view.entries
            if isinstance(e, AssistantText)
            or (isinstance(e, ErrorEntry) and e.message in text and e.error_kind == "api_error")
        )


# ------------------------------------------------------------------ property


_TEXTS = st.sampled_from(
    [
        "hi",
        "/cost",
        "<local-command-stdout>x</local-command-stdout>",
        "[Request interrupted by user]",
    ]
)
_TOOLS = st.sampled_from(["T1", "T2", "T3", "T4"])
_PARENTS = st.sampled_from([None, None, "T1"])


def _tool_event(kind: str, tool_id: str, parent: str | None, name: str, error: bool) -> Event:
    if kind == "call":
        return call(tool_id, name, parent, file_path="/f", command="ls")
    if kind == "progress":
        return ToolProgress(tool_call_id=tool_id, elapsed_seconds=1.0)
    return done(tool_id, name, error=error, parent=parent, file_path="/f", command="ls")


_EVENTS = st.one_of(
    st.builds(UserMessage, text=_TEXTS),
    st.builds(
        MessageChunk,
        message_id=st.sampled_from(["m1", "m2"]),
        text=st.sampled_from(["a", "b"]),
        parent_tool_call_id=_PARENTS,
    ),
    st.builds(
        Reasoning,
        message_id=st.sampled_from(["m1", "m2"]),
        text=st.just("t"),
        parent_tool_call_id=_PARENTS,
    ),
    st.builds(
        _tool_event,
        st.sampled_from(["call", "done", "progress"]),
        _TOOLS,
        _PARENTS,
        st.sampled_from(["Read", "Read", "Bash", "Agent"]),
        st.booleans(),
    ),
    st.builds(
        PermissionRequest,
        pending_id=st.sampled_from(["p1", "p2"]),
        tool_name=st.just("Bash"),
        input=st.just({}),
        normalized=st.just(normalize_tool_use("Bash", {})),
        title=st.just("Bash"),
        tool_call_id=_TOOLS,
    ),
    st.builds(PermissionCancelled, pending_id=st.sampled_from(["p1", "p2"])),
    st.builds(Complete, cost_usd=st.just(0.1)),
    st.builds(ErrorEvent, message=st.just("e"), kind=st.sampled_from(["api_error", "interrupted"])),
)


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_EVENTS, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8),
)
def test_whole_equals_incremental_in_any_split(events: list[Event], cuts: list[int]) -> None:
    """Same entries and snapshot however the events are batched; deltas rebuild the list."""
    whole, whole_replica = build(events)
    parts, parts_replica = build(events, [c for c in cuts if c <= len(events)])
    assert whole.snapshot() == parts.snapshot()
    assert whole.entries == whole_replica
    assert parts.entries == parts_replica
    ids = [e.id for e in whole.entries]
    assert len(ids) == len(set(ids))


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_EVENTS, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8),
    ways=st.lists(st.sampled_from(["fold", "apply", "fold+read"]), min_size=9, max_size=9),
)
def test_fold_equals_apply_in_any_split(
    events: list[Event], cuts: list[int], ways: list[str]
) -> None:
    """``fold`` (no delta; chunks kept as pieces until someone looks) gives the same view as
    ``apply``, whatever the batches, the mix of both, and the reads in between."""
    whole, _ = build(events)
    view = ChatView()
    bounds = [0, *sorted({c for c in cuts if c <= len(events)}), len(events)]
    for (start, end), way in zip(itertools.pairwise(bounds), ways, strict=False):
        if way == "apply":
            view.apply(events[start:end])
        else:
            view.fold(events[start:end])
            if way == "fold+read":
                assert [e.id for e in view.entries] == [e.id for e in view.entries]
    assert view.snapshot() == whole.snapshot()
    assert view.entries == whole.entries


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_EVENTS, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8),
)
def test_open_permissions_are_the_open_permission_entries(
    events: list[Event], cuts: list[int]
) -> None:
    """The view keeps the permission requests it may still have to close apart (a tool result
    closes its call's): after any batch, they are exactly the open permission entries, in
    display order."""
    view = ChatView()
    bounds = [0, *sorted({c for c in cuts if c <= len(events)}), len(events)]
    for start, end in itertools.pairwise(bounds):
        view.apply(events[start:end])
        scanned = [e for e in view.entries if isinstance(e, PermissionEntry) and e.state == "open"]
        assert view.open_permissions() == scanned


def test_a_long_streamed_message_is_joined_when_read() -> None:
    """Thousands of chunks folded one at a time (a follower's small batches): the text is
    exact when read, and the pieces an open entry keeps stay bounded."""
    view = ChatView()
    chunks = [f"{i:05d}." for i in range(5000)]
    for text in chunks:
        view.fold([MessageChunk(message_id="m1", text=text)])
    assert all(len(pieces) <= 256 for pieces in view._pieces.values())
    (entry,) = view.entries
    assert isinstance(entry, AssistantText)
    assert entry.text == "".join(chunks)
    view.fold([MessageChunk(message_id="m1", text="end")])
    delta = view.apply([MessageChunk(message_id="m1", text="!")])
    assert delta.updated and delta.updated[0].text.endswith("end!")  # type: ignore[union-attr]


# ------------------------------------------------------------------ failed turns

API_ERROR = "API Error: 529 Overloaded. <b>try</b> later"


def _kinds(view: ChatView) -> list[str]:
    return [msgspec.to_builtins(e)["kind"] for e in view.entries]


def _failed_turn(text: str = API_ERROR, status: int | None = 529) -> list[Event]:
    """A turn the API failed, as the translator publishes it: the CLI's synthetic assistant
    message, the result's Complete, then the turn's error."""
    return [
        UserMessage(text="hi", seq=1),
        MessageChunk(message_id="synthetic-1", text=text, seq=2),
        Complete(is_error=True, subtype="success", terminal_reason="api_error", seq=3),
        ErrorEvent(message=API_ERROR, kind="api_error", status=status, seq=4),
    ]


def test_a_failed_turns_api_error_is_one_error_entry() -> None:
    """The synthetic ``API Error`` text and the turn's error are one entry: the error, with
    the HTTP status and the CLI's text as it was written."""
    view, replica = build(_failed_turn())
    assert (
        [
            UserEntry(id="user:1", text="hi"),
            ErrorEntry(id="error:4", message=API_ERROR, error_kind="api_error", status=529),
        ]
        == view.entries
        == replica
    )
    assert {"kind": "error", "status": 529} == {
        k: v for k, v in msgspec.to_builtins(view.entries[1]).items() if k in ("kind", "status")
    }


def test_the_dropped_echo_is_a_removal_for_a_ui_that_showed_it() -> None:
    view = ChatView()
    first = view.apply(_failed_turn()[:3])
    assert ["user:1", "text:synthetic-1"] == [e.id for e in first.added]
    delta = view.apply(_failed_turn()[3:])
    assert ("text:synthetic-1",) == delta.removed
    assert ["error:4"] == [e.id for e in delta.added]


def test_different_text_before_an_error_stays() -> None:
    """Only the error's own text is folded in: an answer that says something else, text of
    a sub-agent, or an echo that is not the main thread's last entry all stay."""
    answer, _ = build(_failed_turn(text="Here is half an answer"))
    assert ["user", "text", "error"] == _kinds(answer)
    nested = [
        UserMessage(text="hi", seq=1),
        MessageChunk(message_id="m", text=API_ERROR, parent_tool_call_id="A1", seq=2),
        ErrorEvent(message=API_ERROR, kind="api_error", seq=3),
    ]
    assert ["user", "text", "error"] == _kinds(build(nested)[0])
    interrupted = [
        MessageChunk(message_id="m", text="stopped", seq=1),
        ErrorEvent(message="stopped", kind="interrupted", seq=2),
    ]
    assert ["text", "interrupt"] == _kinds(build(interrupted)[0])


def test_an_error_without_echo_keeps_its_status() -> None:
    view, _ = build([ErrorEvent(message="boom", kind="api_error", status=500)])
    assert [ErrorEntry(id="error:h1", message="boom", error_kind="api_error", status=500)] == (
        view.entries
    )


_FAILURES = st.lists(
    st.one_of(
        _EVENTS,
        st.sampled_from(["e", "a", "ab"]).flatmap(
            lambda text: st.just(
                [
                    MessageChunk(message_id="synthetic", text=text),
                    ErrorEvent(message=text, kind="api_error", status=529),
                ]
            )
        ),
    ),
    max_size=20,
)


def _flat(items: list[Any]) -> list[Event]:
    return [e for item in items for e in (item if isinstance(item, list) else [item])]


@settings(max_examples=300, deadline=None)
@given(items=_FAILURES, cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=8))
@example(  # the answer said the error's words before the failure: it stays, its echo goes
    items=[
        MessageChunk(message_id="m1", text="a"),
        [
            MessageChunk(message_id="synthetic", text="a"),
            ErrorEvent(message="a", kind="api_error", status=529),
        ],
    ],
    cuts=[],
)
def test_failed_turns_show_each_error_once_in_any_split(items: list[Any], cuts: list[int]) -> None:
    """Whatever came before and however it is batched: no failure's echo (the CLI's
    synthetic message, here ``synthetic``) is left as the text entry just before its error
    on the main thread, the deltas rebuild the list, and batches do not change the result.
    (An earlier answer that happens to say the same words is another message: it stays.)"""
    events = _flat(items)
    whole, whole_replica = build(events)
    parts, parts_replica = build(events, [c for c in cuts if c <= len(events)])
    assert whole.snapshot() == parts.snapshot()
    assert whole.entries == whole_replica and parts.entries == parts_replica
    main = [e for e in whole.entries if e.parent_id is None]
    for before, entry in itertools.pairwise(main):
        echo = isinstance(before, AssistantText) and before.message_id == "synthetic"
        if echo and isinstance(entry, ErrorEntry):
            assert getattr(before, "text", None) != entry.message
    errors = sum(isinstance(e, ErrorEvent) and e.kind != "interrupted" for e in events)
    assert errors == sum(isinstance(e, ErrorEntry) for e in whole.entries)
    turn_anchors = {t.after for t in whole.turns} - {None}
    assert turn_anchors <= {e.id for e in whole.entries}
