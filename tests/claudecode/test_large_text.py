"""Huge tool results stay bytes: a ``tool_result`` text longer than ``LARGE_TEXT_BYTES`` on the
wire arrives as a :class:`LargeText` (decoded on demand), everything else as before."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from claudecode import ClaudeCodeProtocol, LargeText, decode_line, encode_message
from claudecode.content import LARGE_TEXT_BYTES, TextBlock, ToolResultBlock
from claudecode.messages import UserMessage

# Mostly ASCII with CJK, a check mark, accents, an emoji and escapes on every line: the text
# a str would hold with 4 bytes per character.
_PATTERN = 'line 出力 ✓ résumé 😀 "quoted" tab\there\\path\n'


def _huge_text(nbytes: int = LARGE_TEXT_BYTES + 1000) -> str:
    unit = len(_PATTERN.encode())
    return _PATTERN * (nbytes // unit + 1)


def _user_line(blocks: list[dict[str, Any]], *, ensure_ascii: bool = False) -> bytes:
    obj = {
        "type": "user",
        "message": {"role": "user", "content": blocks},
        "parent_tool_use_id": None,
        "session_id": "s1",
        "uuid": "u1",
        "tool_use_result": {"stdout": "short", "stderr": ""},
    }
    return json.dumps(obj, ensure_ascii=ensure_ascii).encode()


@pytest.mark.parametrize("ensure_ascii", [False, True], ids=["utf8", "ascii-escapes"])
def test_a_huge_tool_result_arrives_as_large_text(ensure_ascii: bool) -> None:
    text = _huge_text()
    line = _user_line(
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": text, "is_error": False},
            {"type": "tool_result", "tool_use_id": "t2", "content": "small"},
            {
                "type": "tool_result",
                "tool_use_id": "t3",
                "content": [{"type": "text", "text": "x"}],
            },
            {"type": "tool_result", "tool_use_id": "t4"},
            {"type": "text", "text": "note"},
        ],
        ensure_ascii=ensure_ascii,
    )
    assert len(line) > LARGE_TEXT_BYTES
    msg = decode_line(line, 1)
    assert isinstance(msg, UserMessage)
    assert msg.lenient is None
    assert (msg.session_id, msg.uuid) == ("s1", "u1")
    assert msg.tool_use_result_value() == {"stdout": "short", "stderr": ""}
    big, small, listed, absent, note = msg.message.content
    assert isinstance(big, ToolResultBlock) and isinstance(big.content, LargeText)
    assert (big.tool_use_id, big.is_error) == ("t1", False)
    assert str(big.content) == text
    assert big.content.head(100) == text[: len(big.content.head(100))]
    assert len(big.content.head(100).encode()) >= 100
    # The rest is decoded as it always was.
    assert small == ToolResultBlock(tool_use_id="t2", content="small")
    assert listed == ToolResultBlock(tool_use_id="t3", content=[{"type": "text", "text": "x"}])
    assert absent == ToolResultBlock(tool_use_id="t4")
    assert note == TextBlock(text="note")
    # Written back (the huge text as it came), it decodes to the same message.
    again = encode_message(msg)
    assert msgspec.json.decode(again)["message"] == json.loads(line)["message"]
    assert decode_line(again.rstrip(b"\n")) == msg


def test_below_the_threshold_a_text_stays_a_str() -> None:
    text = "x" * (LARGE_TEXT_BYTES - 100)
    line = _user_line([{"type": "tool_result", "tool_use_id": "t1", "content": text}])
    msg = decode_line(line)
    assert isinstance(msg, UserMessage)
    (block,) = msg.message.content
    assert isinstance(block, ToolResultBlock) and block.content == text


def test_other_huge_lines_decode_as_before() -> None:
    text = _huge_text()
    assistant = {
        "type": "assistant",
        "message": {"id": "m", "model": "x", "role": "assistant", "content": []},
        "session_id": "s1",
    }
    assistant["message"]["content"] = [{"type": "text", "text": text}]  # type: ignore[index]
    msg = decode_line(json.dumps(assistant).encode())
    assert msg.message.content[0].text == text  # type: ignore[union-attr]
    # A huge user line whose tool result content has the wrong type: the careful path.
    line = _user_line(
        [{"type": "tool_result", "tool_use_id": "t1", "content": 5}, {"type": "text", "text": text}]
    )
    msg = decode_line(line)
    assert isinstance(msg, UserMessage)
    assert msg.lenient is not None


@pytest.mark.parametrize("chunk", [1 << 16, 1 << 20, LARGE_TEXT_BYTES * 2])
def test_the_protocol_gives_what_decode_line_gives(chunk: int) -> None:
    text = _huge_text()
    huge = _user_line([{"type": "tool_result", "tool_use_id": "t1", "content": text}])
    small = b'{"type":"keep_alive"}'
    data = small + b"\n" + huge + b"\n" + small + b"\n" + huge
    protocol = ClaudeCodeProtocol()
    out = []
    for offset in range(0, len(data), chunk):
        out += protocol.receive_data(data[offset : offset + chunk])
    out += protocol.receive_data(b"")
    assert [type(m).__name__ for m in out] == [
        "KeepAlive",
        "UserMessage",
        "KeepAlive",
        "UserMessage",
    ]
    assert out[1] == decode_line(huge) == out[3]
    assert isinstance(out[1].message.content[0].content, LargeText)  # type: ignore[union-attr]


@given(
    text=st.text(min_size=0, max_size=300),
    max_bytes=st.integers(0, 400),
    ensure_ascii=st.booleans(),
)
def test_head_is_a_prefix_with_at_least_the_bytes_asked_for(
    text: str, max_bytes: int, ensure_ascii: bool
) -> None:
    literal = json.dumps(text, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
    large = LargeText(literal)
    assert str(large) == text
    head = large.head(max_bytes)
    assert text.startswith(head)
    assert len(head.encode("utf-8", "surrogatepass")) >= min(
        max_bytes, len(text.encode("utf-8", "surrogatepass"))
    )


def test_large_text_basics() -> None:
    large = LargeText.from_text("héllo 😀")
    assert str(large) == "héllo 😀"
    assert large == LargeText(msgspec.json.encode("héllo 😀"))
    assert large != "héllo 😀"
    assert large.nbytes == len(msgspec.json.encode("héllo 😀"))
    assert "héllo" in repr(large)
    assert hash(large) == hash(LargeText.from_text("héllo 😀"))


def test_lone_surrogates_and_bad_bytes_read_as_replacement_characters() -> None:
    # JavaScript writes "\ud83d" for a string cut in the middle of an emoji.
    literal = b'"ab\\ud83d cd' + b"x" * 200 + b'"'
    large = LargeText(literal)
    assert str(large) == "ab\ufffd cd" + "x" * 200
    assert large.head(5).startswith("ab\ufffd cd")
    assert str(LargeText(b'"ok \xff"')) == "ok \ufffd"


def test_the_sdk_drop_in_gets_the_whole_text_as_a_str() -> None:
    from claudecode.sdk import ToolResultBlock as SdkToolResultBlock
    from claudecode.sdk._convert import to_sdk_message

    text = _huge_text()
    line = _user_line([{"type": "tool_result", "tool_use_id": "t1", "content": text}])
    converted = to_sdk_message(decode_line(line))
    block = converted.content[0]  # type: ignore[union-attr]
    assert isinstance(block, SdkToolResultBlock)
    assert block.content == text
