"""TerminalRenderer: what a person sees for a turn."""

from __future__ import annotations

import io

from adapter.commands.run_render import TerminalRenderer
from adapter.events import Complete, MessageChunk, TokenUsage, ToolCall, ToolUpdate
from normalize import ModifyFile, Mutation, ShellExec, ShellOutput


def call(tool_id: str = "t1") -> ToolCall:
    return ToolCall(
        tool_call_id=tool_id,
        tool_name="Bash",
        title="Run `ls`",
        normalized=ShellExec(command="ls"),
    )


def test_plain_rendering_of_a_turn() -> None:
    """Text, a tool with its output, an edit with its diff, and the summary line."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False, live=False)
    renderer.render(MessageChunk(message_id="m", text="Hello "))
    renderer.render(MessageChunk(message_id="m", text="world"))
    renderer.render(call())
    renderer.render(
        ToolUpdate(
            tool_call_id="t1",
            status="complete",
            title="Run `ls`",
            normalized=ShellExec(command="ls", output=ShellOutput(exit_code=0, stdout="a\nb\n")),
        )
    )
    diff = "--- f\n+++ f\n@@ -1 +1 @@\n-old\n+new\n"
    renderer.render(
        ToolUpdate(
            tool_call_id="t2",
            status="error",
            title="Edit f",
            normalized=ModifyFile(file_path="f", mutations=[Mutation(type="patch", diff=diff)]),
        )
    )
    renderer.render(Complete(cost_usd=0.0123, tokens=TokenUsage(input=10, output=5), num_turns=2))
    text = out.getvalue()
    assert text.startswith("Hello world\n⏺ Run `ls`  … running\n✓ Run `ls`\n    a\n    b\n")
    assert "✗ Edit f\n" in text
    assert "    -old\n    +new\n" in text
    assert "done · $0.0123 · 10 in / 5 out tokens" in text


def test_live_spinner_is_replaced_by_the_outcome() -> None:
    """On a terminal the running line spins and the outcome overwrites it."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False, live=True)
    renderer.render(call())
    renderer.tick()
    renderer.tick()
    renderer.render(
        ToolUpdate(
            tool_call_id="t1", status="complete", title="Run `ls`", normalized=call().normalized
        )
    )
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 3  # two ticks and the final replacement
    assert text.endswith("\r\x1b[2K✓ Run `ls`\n")
    renderer.tick()  # nothing running: nothing written
    assert text == out.getvalue()


def test_pause_ends_the_spinner_line() -> None:
    """Before a prompt, the spinner line is ended and stops spinning."""
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False, live=True)
    renderer.render(call())
    renderer.pause()
    before = out.getvalue()
    renderer.tick()
    assert before.endswith("\n") and before == out.getvalue()
