"""Shared helpers for the real-CLI client scenarios: a stdout-recording session, typed-line checks.

Every scenario asserts that **every line the real CLI wrote** decoded into a specific message
type — not :class:`~claudecode.messages.UnknownMessage`, not
:class:`~claudecode.messages.MalformedLine` — so a CLI version that adds a message kind makes a
test fail instead of losing data silently. The consumer does not see every line (control
responses resolve our requests; control requests answered by callbacks never reach the
stream), so :func:`open_recorded` gives the session a :class:`RecordingTransport`: the
project's own :class:`~claudecode.transport.SubprocessTransport`, built exactly as
``Session`` builds it, that also keeps a copy of the raw stdout bytes.

Typical use::

    session, stdout = open_recorded(cli_options(), can_use_tool=allow_all)
    async with session:
        ...
    lines = assert_every_line_typed(stdout, seen)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from claudecode import messages as m
from claudecode._codec import decode_line
from claudecode._discovery import find_cli
from claudecode.callbacks import CanUseTool, HookMatcher
from claudecode.content import TextBlock, ToolResultBlock, ToolUseBlock
from claudecode.mcp import SdkMcpServer
from claudecode.options import ClaudeCodeOptions
from claudecode.session import Session
from claudecode.stream_events import ContentBlockDelta, TextDelta
from claudecode.transport import SubprocessTransport

from .fake_api import RecordedRequest

__all__ = (
    "RecordingTransport",
    "api_tool_results",
    "assert_all_typed",
    "assert_every_line_typed",
    "answered_tool_ids",
    "assistant_texts",
    "open_recorded",
    "result_text",
    "text_deltas",
    "tool_results",
    "tool_uses",
)

_UNTYPED = (m.UnknownMessage, m.MalformedLine)


class RecordingTransport(SubprocessTransport):
    """A :class:`SubprocessTransport` that also keeps every byte the CLI wrote on stdout."""

    def __init__(self, argv: Sequence[str], **kwargs: Any) -> None:
        super().__init__(argv, **kwargs)
        self.stdout = bytearray()
        """Everything read from the CLI's stdout so far."""

    async def receive(self) -> bytes:
        data = await super().receive()
        self.stdout += data
        return data

    def lines(self) -> list[bytes]:
        """The complete (newline-terminated), non-blank lines read so far."""
        *complete, _partial = bytes(self.stdout).split(b"\n")
        return [line for line in complete if line.strip()]

    @property
    def partial_tail(self) -> bytes:
        """Bytes after the last newline (non-empty only if the CLI died mid-line)."""
        return bytes(self.stdout).rpartition(b"\n")[2]


def open_recorded(
    options: ClaudeCodeOptions,
    *,
    can_use_tool: CanUseTool | None = None,
    hooks: Mapping[str, Sequence[HookMatcher]] | None = None,
    mcp_servers: Sequence[SdkMcpServer] = (),
) -> tuple[Session, RecordingTransport]:
    """A :class:`Session` over a :class:`RecordingTransport` built from ``options``.

    The transport gets the argv, working directory, environment and shutdown timings that
    ``Session`` itself would use (SDK MCP servers declared in ``--mcp-config``).
    """
    argv = options.to_argv(
        find_cli(options.cli_path),
        sdk_mcp_servers=[s.name for s in mcp_servers],
        permission_callback=can_use_tool is not None,
    )
    transport = RecordingTransport(
        argv,
        cwd=options.cwd,
        env=options.build_env(),
        close_grace=options.close_grace,
        kill_after=options.kill_after,
        stderr_tail_lines=options.stderr_tail_lines,
        on_stderr=options.stderr,
        user=options.user,
    )
    session = Session(
        options,
        can_use_tool=can_use_tool,
        hooks=hooks,
        mcp_servers=mcp_servers,
        transport=transport,
    )
    return session, transport


def assert_all_typed(messages: Iterable[object]) -> None:
    """Fail if any message is an :class:`UnknownMessage` or a :class:`MalformedLine`."""
    bad = [x for x in messages if isinstance(x, _UNTYPED)]
    assert not bad, f"lines that did not decode into a specific type: {bad!r}"


def assert_every_line_typed(
    transport: RecordingTransport,
    seen: Iterable[object] = (),
    *,
    allow_partial_tail: bool = False,
) -> list[m.InboundMessage]:
    """Decode every line the CLI wrote and fail on any that is not a specific type.

    Also checks ``seen`` (what the consumer received). A trailing unterminated line fails
    unless ``allow_partial_tail`` (a CLI killed mid-write). Returns the decoded lines in order.
    """
    decoded = [decode_line(line, n) for n, line in enumerate(transport.lines(), 1)]
    assert decoded, "the CLI wrote nothing on stdout"
    assert_all_typed(decoded)
    assert_all_typed(seen)
    if not allow_partial_tail:
        assert not transport.partial_tail.strip(), transport.partial_tail[:200]
    return decoded


# ------------------------------------------------------------------- small extractors


def text_deltas(seen: Iterable[object]) -> list[str]:
    """The ``text_delta`` pieces of the main conversation's stream events, in order."""
    return [
        x.event.delta.text
        for x in seen
        if isinstance(x, m.StreamEvent)
        and x.parent_tool_use_id is None
        and isinstance(x.event, ContentBlockDelta)
        and isinstance(x.event.delta, TextDelta)
    ]


def assistant_texts(seen: Iterable[object], *, parent: str | None = None) -> list[str]:
    """The text blocks of ``assistant`` lines whose ``parent_tool_use_id`` is ``parent``."""
    return [
        block.text
        for x in seen
        if isinstance(x, m.AssistantMessage) and x.parent_tool_use_id == parent
        for block in x.message.content
        if isinstance(block, TextBlock)
    ]


def tool_uses(seen: Iterable[object], *, parent: str | None = None) -> list[ToolUseBlock]:
    """The tool_use blocks of ``assistant`` lines whose ``parent_tool_use_id`` is ``parent``."""
    return [
        block
        for x in seen
        if isinstance(x, m.AssistantMessage) and x.parent_tool_use_id == parent
        for block in x.message.content
        if isinstance(block, ToolUseBlock)
    ]


def tool_results(
    seen: Iterable[object], *, parent: str | None = None
) -> list[tuple[m.UserMessage, ToolResultBlock]]:
    """``(user line, tool_result block)`` pairs of lines whose parent is ``parent``."""
    out: list[tuple[m.UserMessage, ToolResultBlock]] = []
    for x in seen:
        if not isinstance(x, m.UserMessage) or x.parent_tool_use_id != parent:
            continue
        content = x.message.content
        if isinstance(content, list):
            out.extend((x, b) for b in content if isinstance(b, ToolResultBlock))
    return out


def api_tool_results(body: Any) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of every user message of a recorded Messages API body."""
    found: list[dict[str, Any]] = []
    for message in body.get("messages", []) if isinstance(body, dict) else []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            found.extend(
                b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            )
    return found


def result_text(block: ToolResultBlock | Mapping[str, Any]) -> str:
    """The text of a tool result's content (string or list of text items)."""
    content = block.get("content") if isinstance(block, Mapping) else block.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(item.get("text", "")) for item in content if isinstance(item, Mapping))
    return ""


def answered_tool_ids(request: RecordedRequest) -> list[str]:
    """The tool_use ids the fake API generated in its answer to ``request``."""
    assert request.answer is not None, request
    return [tool.id for tool in request.answer.tool_uses]


async def run_turn(session: Any, prompt: str) -> list[Any]:
    """Send ``prompt`` and return every message up to and including the turn's result."""
    await session.send(prompt)
    return [message async for message in session.receive_response()]
