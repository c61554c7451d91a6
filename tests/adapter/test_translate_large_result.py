"""A huge tool result (a ``LargeText`` from the client) is shown by its head: the payload gets
the first ``DEFAULT_MAX_OUTPUT_BYTES`` of it, marked truncated, and the rest is never decoded
into a ``str``."""

from __future__ import annotations

from adapter.events import ToolUpdate
from adapter.translate import Translator
from claudecode import LargeText
from claudecode.content import LARGE_TEXT_BYTES
from normalize import DEFAULT_MAX_OUTPUT_BYTES, ShellExec, truncate_text
from tests.support.transcripts import assistant, feed, init, line, tool_result, tool_use


def test_a_huge_result_is_shown_by_its_head() -> None:
    text = "out 出力 😀\n" * (LARGE_TEXT_BYTES // 10)
    message = line(tool_result("T1", text))
    assert isinstance(message.message.content[0].content, LargeText)  # type: ignore[union-attr]
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1", command="cat big.log")))
    (update,) = t.feed(message)
    assert isinstance(update, ToolUpdate) and update.status == "complete"
    assert isinstance(update.normalized, ShellExec) and update.normalized.output is not None
    output = update.normalized.output
    assert output.truncated
    assert output.stdout == truncate_text(text, DEFAULT_MAX_OUTPUT_BYTES)[0]


def test_a_huge_structured_result_is_not_decoded() -> None:
    """The CLI repeats a tool's output in ``tool_use_result``; at that size it is left undecoded
    (a str of it can take four times its size) and the block's text stands for it."""
    content = "from the block 😀\n" * (LARGE_TEXT_BYTES // 10)
    structured = {"stdout": "from the structured result\n" * (LARGE_TEXT_BYTES // 20)}
    t = Translator()
    feed(t, init(), assistant("m1", tool_use("T1", command="cat big.log")))
    (update,) = t.feed(line(tool_result("T1", content, tool_use_result=structured)))
    assert isinstance(update, ToolUpdate)
    assert isinstance(update.normalized, ShellExec) and update.normalized.output is not None
    assert update.normalized.output.truncated
    assert (update.normalized.output.stdout or "").startswith("from the block 😀\n")
    # A structured result of ordinary size is still used.
    small = {"stdout": "from the structured result\n", "stderr": ""}
    feed(t, assistant("m2", tool_use("T2", command="ls")))
    (update,) = feed(t, tool_result("T2", "from the block\n", tool_use_result=small))
    assert isinstance(update.normalized, ShellExec) and update.normalized.output is not None
    assert update.normalized.output.stdout == "from the structured result\n"
