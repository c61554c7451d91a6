"""What the fake Messages API answers: a per-test script of turns, and how a turn is rendered.

A :class:`Script` holds queues of :class:`Turn` objects. Each main-conversation request (a
``POST /v1/messages`` whose body carries tools) takes the next turn of ``main``; sub-agent
requests (header ``x-claude-code-agent-id``) take turns from ``subagent``; requests without
tools (side requests such as the model probe after ``set_model``) get ``side`` and never consume
a scripted turn. :class:`Rule` objects are checked first and match on the text of the last user
message, so an error can stay "sticky" across the CLI's retries. When a queue is empty the
request gets ``exhausted`` (a plain "script exhausted" text).

Example::

    Script(
        main=[
            tool_turn("Bash", {"command": "touch made.txt", "description": "Create"}),
            text_turn("done"),
        ],
        rules=[Rule("break it", error_turn(500, "fake server error"))],
    )

:func:`sse_events` and :func:`json_message` turn a resolved turn into the Anthropic wire shapes.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = (
    "Block",
    "HTTPError",
    "Rule",
    "Script",
    "StreamError",
    "Text",
    "Thinking",
    "ToolUse",
    "Turn",
    "error_turn",
    "json_message",
    "new_id",
    "sse_events",
    "text_turn",
    "tool_turn",
)

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    """Return an Anthropic-looking identifier such as ``toolu_...`` or ``msg_...``."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(24))


@dataclass(frozen=True)
class Text:
    """A text content block."""

    text: str


@dataclass(frozen=True)
class Thinking:
    """A thinking block; streamed as ``thinking_delta`` events and one ``signature_delta``."""

    thinking: str
    signature: str = ""
    """Generated (``fakesig_...``) when empty."""


@dataclass(frozen=True)
class ToolUse:
    """A tool call, e.g. ``ToolUse("Bash", {"command": "ls"})``; streamed as input_json_delta."""

    name: str
    input: Mapping[str, Any]
    id: str = ""
    """Generated (``toolu_...``) when empty; the recorded answer holds the generated id."""


Block = Text | Thinking | ToolUse

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class HTTPError:
    """Answer with an HTTP error status and an Anthropic-shaped error body instead of a message."""

    status: int
    message: str = "fake API error"
    type: str = ""
    """The ``error.type``; derived from ``status`` when empty (529 -> ``overloaded_error``...)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. ``{"retry-after": "0"}``."""

    @property
    def error_type(self) -> str:
        """The error type sent on the wire."""
        return self.type or _ERROR_TYPES.get(self.status, "api_error")

    def body(self, request_id: str) -> dict[str, Any]:
        """The JSON error body the real API sends."""
        return {
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        }


@dataclass(frozen=True)
class StreamError:
    """Break a streamed answer with an SSE ``event: error`` after ``after_blocks`` full blocks."""

    after_blocks: int = 0
    type: str = "overloaded_error"
    message: str = "fake mid-stream error"


@dataclass(frozen=True)
class Turn:
    """One answer to one request.

    ``chunk`` is the number of characters per delta event and ``delay`` the seconds slept before
    each delta (use it to interrupt a turn mid-stream). ``stop_reason`` defaults to ``tool_use``
    when a block is a :class:`ToolUse`, else ``end_turn``. ``usage`` overrides token counts
    (``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``...). ``error`` answers with
    an HTTP error instead; ``stream_error`` breaks the SSE stream. ``headers`` are added to the
    response.
    """

    blocks: Sequence[Block] = ()
    chunk: int = 16
    delay: float = 0.0
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    error: HTTPError | None = None
    stream_error: StreamError | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def resolved(self) -> Turn:
        """Return a copy with every missing tool_use id and thinking signature generated."""
        blocks: list[Block] = []
        for block in self.blocks:
            if isinstance(block, ToolUse) and not block.id:
                block = replace(block, id=new_id("toolu_"))
            elif isinstance(block, Thinking) and not block.signature:
                block = replace(block, signature="fakesig_" + secrets.token_hex(16))
            blocks.append(block)
        return replace(self, blocks=tuple(blocks))

    @property
    def tool_uses(self) -> list[ToolUse]:
        """The tool_use blocks of this turn (ids are set once the turn is resolved)."""
        return [b for b in self.blocks if isinstance(b, ToolUse)]

    @property
    def effective_stop_reason(self) -> str:
        """``stop_reason`` or its default."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_uses else "end_turn"


def text_turn(text: str, **options: Any) -> Turn:
    """A turn answering with one text block; ``options`` are other :class:`Turn` fields."""
    return Turn(blocks=(Text(text),), **options)


def tool_turn(
    name: str, input: Mapping[str, Any], *, text: str | None = None, **options: Any
) -> Turn:
    """A turn calling one tool, optionally preceded by a text block."""
    blocks: list[Block] = [] if text is None else [Text(text)]
    blocks.append(ToolUse(name, input))
    return Turn(blocks=tuple(blocks), **options)


def error_turn(status: int, message: str = "fake API error", **options: Any) -> Turn:
    """A turn answering with HTTP ``status`` (e.g. 429, 500, 529) and an Anthropic error body."""
    headers: Mapping[str, str] = options.pop("error_headers", {})
    return Turn(error=HTTPError(status, message, headers=headers), **options)


@dataclass
class Rule:
    """An answer for every main or sub-agent request whose last user message contains a text.

    Rules are checked before the queues and consume no scripted turn. ``times=None`` makes the
    rule sticky forever (errors that survive the CLI's retries); ``times=N`` answers N requests
    and then stops matching ("fail N times then succeed" with the success in the queue).
    """

    last_user_contains: str
    #: The answer, or a function of the matching text that builds it (a tool call whose
    #: input comes from the prompt).
    answer: Turn | Callable[[str], Turn]
    times: int | None = None
    hits: int = 0
    """How many requests this rule answered so far."""

    def active(self) -> bool:
        """Whether the rule may still answer."""
        return self.times is None or self.hits < self.times


@dataclass
class Script:
    """Everything the fake API answers during one test; see the module docstring."""

    main: list[Turn] = field(default_factory=list)
    subagent: list[Turn] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    side: Turn = field(default_factory=lambda: text_turn("ok"))
    exhausted: Turn = field(default_factory=lambda: text_turn("script exhausted"))


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _block_length(block: Block) -> int:
    if isinstance(block, Text):
        return len(block.text)
    if isinstance(block, Thinking):
        return len(block.thinking)
    return len(json.dumps(block.input))


def _usage(turn: Turn, input_tokens: int) -> tuple[dict[str, Any], int]:
    start: dict[str, Any] = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
        "service_tier": "standard",
    }
    start.update({k: v for k, v in turn.usage.items() if k != "output_tokens"})
    computed = 1 + sum(_block_length(b) for b in turn.blocks) // 4
    return start, turn.usage.get("output_tokens", computed)


def _content_block(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}


def _block_events(index: int, block: Block, chunk: int) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    if isinstance(block, Text):
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.text, chunk)]
    elif isinstance(block, Thinking):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block.thinking, chunk)]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        payload = json.dumps(dict(block.input))
        deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(payload, chunk)]
    events.append(
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    )
    events.extend(
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def sse_events(
    turn: Turn, *, model: str, message_id: str, input_tokens: int
) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event name, data)`` pairs of a streamed answer, in the order the real API sends.

    ``message_start``, ``ping``, per block start / deltas / stop, ``message_delta`` (stop_reason
    and output tokens), ``message_stop``. With a :class:`StreamError` the list ends with an
    ``error`` event after ``after_blocks`` blocks. ``turn`` must be resolved.
    """
    start_usage, output_tokens = _usage(turn, input_tokens)
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(turn.blocks):
        if turn.stream_error is not None and index == turn.stream_error.after_blocks:
            break
        events.extend(_block_events(index, block, turn.chunk))
    if turn.stream_error is not None:
        error = {"type": turn.stream_error.type, "message": turn.stream_error.message}
        events.append(("error", {"type": "error", "error": error}))
        return events
    delta = {"stop_reason": turn.effective_stop_reason, "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def json_message(turn: Turn, *, model: str, message_id: str, input_tokens: int) -> dict[str, Any]:
    """The non-streaming answer: one complete ``message`` object. ``turn`` must be resolved."""
    usage, output_tokens = _usage(turn, input_tokens)
    usage["output_tokens"] = output_tokens
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_content_block(b) for b in turn.blocks],
        "stop_reason": turn.effective_stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }
