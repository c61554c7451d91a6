"""Control characters from the model or tools never reach the terminal raw."""

from __future__ import annotations

import io
import json
import re

from hypothesis import given
from hypothesis import strategies as st

from adapter._escape import UNSAFE_CHARACTERS, escape_control, escape_json_line
from adapter.commands.run_render import TerminalRenderer
from adapter.events import (
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionDenied,
    Reasoning,
    SessionStatus,
    ToolCall,
    ToolUpdate,
    decode_event,
    encode_event,
)
from normalize import normalize_tool_result, normalize_tool_use

HOSTILE = "\x1b]0;pwned\x07\x1b[2Jgone\x9b31m\u202eevil\rback\x00"
#: What the renderer itself writes: SGR colours and the spinner's line reset.
_OWN = re.compile(r"\x1b\[[0-9;]*m|\r\x1b\[2K")

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)))


def _unsafe_in(text: str) -> set[str]:
    return {c for c in text if ord(c) in UNSAFE_CHARACTERS}


@given(texts)
def test_escaped_text_has_no_control_characters_but_newlines_and_tabs(text: str) -> None:
    escaped = escape_control(text)
    assert not _unsafe_in(escaped)
    assert escaped.count("\n") == text.count("\n")
    assert escaped.count("\t") == text.count("\t")


@given(texts.filter(lambda t: not _unsafe_in(t)))
def test_safe_text_is_unchanged(text: str) -> None:
    assert text == escape_control(text)


def test_escapes_are_visible() -> None:
    assert "\\x1b]0;pwned\\x07\\x1b[2Jgone\\x9b31m\\u202eevil\\x0dback\\x00" == escape_control(
        HOSTILE
    )
    assert "a\nb\tc\n" == escape_control("a\r\nb\tc\n")


@given(texts)
def test_json_lines_keep_their_value_and_lose_raw_controls(text: str) -> None:
    line = escape_json_line(encode_event(MessageChunk(message_id="m", text=text)))
    decoded = decode_event(line)
    assert isinstance(decoded, MessageChunk) and text == decoded.text
    assert not _unsafe_in(line.decode())
    assert json.loads(line)["text"] == text


def _shell_update(output: str) -> ToolUpdate:
    payload = normalize_tool_use("Bash", {"command": "cat x"})
    payload = normalize_tool_result(
        payload,
        content=output,
        is_error=False,
        tool_use_result={"stdout": output, "stderr": "", "interrupted": False},
    )
    return ToolUpdate(
        tool_call_id="t1", status="complete", title=f"Run {HOSTILE}", normalized=payload
    )


def _events() -> list[Event]:
    call = normalize_tool_use("Bash", {"command": HOSTILE})
    return [
        SessionStatus(status="new", model=HOSTILE, cli_session_id=HOSTILE),
        Reasoning(message_id="m", text=HOSTILE),
        MessageChunk(message_id="m", text=f"line one\n{HOSTILE}\n\tindented"),
        ToolCall(tool_call_id="t1", tool_name="Bash", title=f"Run {HOSTILE}", normalized=call),
        _shell_update(f"out\n{HOSTILE}\nmore"),
        PermissionDenied(tool_name=HOSTILE, message=HOSTILE),
        ErrorEvent(message=HOSTILE),
        Complete(),
    ]


def test_renderer_escapes_everything_it_prints() -> None:
    for color, live in ((False, False), (True, True)):
        out = io.StringIO()
        renderer = TerminalRenderer(out, color=color, live=live)
        for event in _events():
            renderer.render(event)
            renderer.tick()
        text = _OWN.sub("", out.getvalue())
        assert not _unsafe_in(text), sorted(_unsafe_in(text))
        assert "\\x1b]0;pwned\\x07" in text
        assert "line one\n" in text and "\n\tindented" in text  # newlines and tabs kept
