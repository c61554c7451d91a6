"""The page's chat model (webui/static/chat.js, usertext.js) against adapter.chat, in headless
Chromium: the same events folded live give the same entries (ids included) and turn ends
as the server's chat view, whether the page started from seq 1 or from a snapshot taken
anywhere in the stream. So a page shows slash commands, their output, interruptions, IDE
selections and system reminders the same way live and after a reload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.chat import ChatView, parse_user_text
from adapter.events import (
    ApiRetry,
    AvailableCommands,
    Command,
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionCancelled,
    PermissionRequest,
    PermissionResolved,
    Question,
    QuestionOption,
    QuestionRequest,
    TaskEvent,
    ToolCall,
    ToolProgress,
    UserMessage,
)
from adapter.history import load_events
from normalize import normalize_tool_use
from tests.support.transcripts import NAMES, processes, replay

from ._webui import open_page, serve

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

TESTS = Path(__file__).resolve().parents[1]
HISTORY = TESTS / "fixtures" / "history" / "projects" / "-work-demo"

# What both sides show of an entry (defaults that the server's JSON omits filled in).
PROJECT = """
const project = (e) => [
  e.kind, e.id, e.parent_id || null, e.text ?? (e.kind === "interrupt" ? "Interrupted" : null),
  e.name ?? null, e.kind === "command" ? (e.args || "") : null, e.output ?? null,
  (e.selections || []).join("|"), e.images || 0, e.message_id ?? null, e.title ?? null,
  e.tool_name ?? null, e.status || (e.kind === "tool" ? "running" : null),
  e.state || (e.kind === "permission" ? "open" : null), e.pending_id ?? null,
  e.task_status ?? null, e.progress ?? null, e.elapsed_seconds ?? null,
  e.error_kind || (e.kind === "error" ? "execution" : null),
  e.normalized ? JSON.stringify(e.normalized) : null,
  e.reads ? e.reads.map((r) => r.id + "/" + r.status).join() : null,
  e.state || (e.kind === "question" ? "open" : null), e.decision ?? null, e.by ?? null,
  e.message ?? null, e.answers ? JSON.stringify(e.answers) : null,
  e.questions ? JSON.stringify(e.questions) : null, e.request_id ?? null,
];
"""

# Real texts the CLI (2.1.332) records or echoes for slash commands, and the tags it wraps
# prompts in; each a prompt of its own.
USER_TEXTS = [
    "<command-name>/context</command-name>\n            <command-message>context</command-message>"
    "\n            <command-args></command-args>",
    "<local-command-stdout>## Context Usage\n\x1b[1mTokens:\x1b[22m 3.9k</local-command-stdout>",
    "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
    "<command-args>keep the plan</command-args>",
    "<local-command-stdout>Compacted </local-command-stdout>",
    "<local-command-stderr>no such command</local-command-stderr>",
    "/compact keep it",
    "/usr/bin is where it lives",
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
    "<ide_selection>lines 1-3 of a.py</ide_selection>explain this"
    "<system-reminder>ignore this</system-reminder>",
    "<ide_opened_file>a.py</ide_opened_file>",
    "<system-reminder>only a reminder</system-reminder>",
    "  plain prompt with <b>markup</b>  ",
]


def _numbered(events: list[Event]) -> list[Event]:
    """Events as a session publishes them: seq from 1."""
    return [msgspec.structs.replace(e, seq=i) for i, e in enumerate(events, 1)]


def _tags_and_tools() -> list[Event]:
    shell = normalize_tool_use("Bash", {"command": "ls"})
    events: list[Event] = [UserMessage(text=t) for t in USER_TEXTS]
    events += [
        AvailableCommands(
            commands=[Command(name="compact"), Command(name="review", description="r")]
        ),
        UserMessage(text="", images=2),
        MessageChunk(message_id="m1", text="a"),
        UserMessage(text="<local-command-stdout>after text</local-command-stdout>"),
        MessageChunk(message_id="m1", text="b"),
        ToolCall(tool_call_id="T1", tool_name="Agent", title="agent", normalized=shell),
        ToolProgress(tool_call_id="T1", elapsed_seconds=2.0, message="working"),
        TaskEvent(phase="started", tool_call_id="T1", status="running"),
        MessageChunk(message_id="m1", text="c"),
        ApiRetry(attempt=2, error="overloaded"),
        ErrorEvent(message="stopped", kind="interrupted"),
        ErrorEvent(message="boom", kind="api_error"),
        # A failed turn: the CLI's synthetic message, then the error with the same text.
        MessageChunk(message_id="synthetic", text="API Error: 529 Overloaded"),
        ErrorEvent(
            message="API Error: 529 Overloaded",
            kind="api_error",
            status=529,
            request_id="req_011CTest",
        ),
        *_questions_and_decisions(),
        Complete(cost_usd=0.5),
    ]
    return events


def _questions_and_decisions() -> list[Event]:
    """A question answered, one declined by the policy, one withdrawn, one left open when
    the turn ends; a permission denied and one allowed always."""
    shell = normalize_tool_use("Bash", {"command": "ls"})
    options = [QuestionOption(label="Formal", description="Dear ..."), QuestionOption(label="B")]
    asked = [
        Question(question="Which greeting style?", header="Style", options=options),
        Question(question="Which toppings?", options=options, multi_select=True),
    ]
    out: list[Event] = []
    for i in range(4):
        out.append(QuestionRequest(pending_id=f"q{i}", questions=asked, tool_call_id=f"A{i}"))
    out += [
        PermissionResolved(
            pending_id="q0",
            decision="answered",
            answers={"Which greeting style?": ["Formal"], "Which toppings?": ["B", "own"]},
        ),
        PermissionResolved(pending_id="q1", decision="declined", by="policy", message="nobody"),
        PermissionCancelled(pending_id="q2", reason="timeout"),
        PermissionResolved(pending_id="nobody", decision="allow"),
    ]
    for i, decision in enumerate(("deny", "allow_always")):
        out.append(
            PermissionRequest(
                pending_id=f"p{i}", tool_name="Bash", input={}, normalized=shell, title="ls"
            )
        )
        out.append(PermissionResolved(pending_id=f"p{i}", decision=decision, message="no"))
    return out


def _corpora() -> Iterator[tuple[str, list[Event]]]:
    for name in NAMES:
        for i, process in enumerate(processes(name)):
            yield f"{name}#{i}", _numbered(replay(process))
    yield "tags", _numbered(_tags_and_tools())
    for path in sorted(HISTORY.glob("*.jsonl")):
        yield f"history {path.name}", _numbered(load_events(path))
        yield f"history {path.name} turns", _numbered(load_events(path, turn_ends=True))


def _json(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


def _python_view(events: list[Event]) -> ChatView:
    view = ChatView()
    view.apply(events)
    return view


FOLD = (
    """async ([events, snaps]) => {
  const { Chat } = await import("/ui/chat.js");
"""
    + PROJECT
    + """
  const live = new Chat();
  for (const ev of events) live.apply(ev);
  const out = { live: [...live.entries.values()].map(project), resumed: [] };
  out.commands = live.commands;
  out.turns = live.turns;
  out.resumedTurns = [];
  for (const snap of snaps) {
    const chat = Chat.fromSnapshot(snap);
    for (const ev of events) chat.apply(ev);   // those up to last_seq are ignored
    out.resumed.push([...chat.entries.values()].map(project));
    out.resumedTurns.push(chat.turns);
  }
  return out;
}"""
)

PROJECT_ALL = "(entries) => {" + PROJECT + "return entries.map(project); }"


def test_live_events_fold_into_what_the_server_view_shows(tmp_path: Path, browser: Any) -> None:
    """Every recorded transcript, the slash-command / tag corpus and a real history file: the
    page folding the events from seq 1, and the page folding them onto a snapshot taken
    after any of several events, both equal the server's view of all of them."""
    with serve(tmp_path, str(tmp_path / "none")) as url:
        page = open_page(browser, url)
        checked = with_turns = 0
        for name, events in _corpora():
            whole = _python_view(events)
            expected = page.evaluate(PROJECT_ALL, _json(whole.snapshot().entries))
            cuts = sorted({1, len(events) // 3, len(events) // 2, len(events) - 1} - {0})
            snaps = [_json(_python_view(events[:k]).snapshot()) for k in cuts]
            got = page.evaluate(FOLD, [_json(events), snaps])
            assert expected == got["live"], name
            assert list(whole.snapshot().commands) == got["commands"], name
            turns = _json(whole.snapshot().turns)
            assert turns == got["turns"], name
            for k, resumed in zip(cuts, got["resumed"], strict=True):
                assert expected == resumed, f"{name}: snapshot after {k} events, then live"
            for k, resumed in zip(cuts, got["resumedTurns"], strict=True):
                assert turns == resumed, f"{name}: turns after a snapshot after {k} events"
            with_turns += bool(turns)
            checked += 1
        assert checked > 10 and with_turns > 3
        assert [] == page.errors


_PIECES = st.sampled_from(
    [
        "<command-name>",
        "</command-name>",
        "<command-args>",
        "</command-args>",
        "<command-message>x</command-message>",
        "<local-command-stdout>",
        "</local-command-stdout>",
        "<local-command-stderr>",
        "</local-command-stderr>",
        "<system-reminder>",
        "</system-reminder>",
        "<ide_selection>",
        "</ide_selection>",
        "<ide_opened_file>",
        "</ide_opened_file>",
        "[Request interrupted by user]",
        "/",
        "/cost",
        "/é-x:y.z",
        " ",
        "\t",
        "\n",
        "\x1c",
        "\x85",
        "\u00a0",
        "\ufeff",
        "\x1b[1m",
        "a",
        "é",
        "1",
        "_",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=12).map("".join) | st.text(max_size=20)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(texts=st.lists(_TEXTS, min_size=20, max_size=60))
def test_user_text_parser_matches_python(tmp_path: Path, browser: Any, texts: list[str]) -> None:
    """usertext.js gives what adapter.chat.parse_user_text gives, on texts made of the CLI's
    tags, Python-only and JavaScript-only whitespace, ANSI codes and arbitrary text."""
    expected = [
        {"kind": p.kind, "text": p.text, "name": p.name, "args": p.args, "sel": list(p.selections)}
        for p in map(parse_user_text, texts)
    ]
    with serve(tmp_path, str(tmp_path / "none")) as url:
        page = open_page(browser, url)
        got = page.evaluate(
            """async (texts) => {
              const { parseUserText } = await import("/ui/usertext.js");
              return texts.map((t) => {
                const p = parseUserText(t);
                return { kind: p.kind, text: p.text || "", name: p.name || "",
                         args: p.args || "", sel: p.selections || [] };
              });
            }""",
            texts,
        )
        page.context.close()
    for text, want, have in zip(texts, expected, got, strict=True):
        assert want == have, repr(text)
