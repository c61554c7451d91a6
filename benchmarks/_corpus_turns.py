"""The corpus's turns, line by line: ``system/init``, then per API call a status line, the
streamed message (a thinking block, a text block, a tool call but on the last call, each with
its ``assistant`` line) and the tool's result, then the ``result`` line. Deterministic: every
choice comes from one seeded :class:`random.Random`, in a fixed order.
"""

from __future__ import annotations

import random
from typing import Any

from ._corpus_tools import ToolLines
from ._corpus_vocab import CAPABILITIES, MODEL, SESSION_ID, SLASH, TOOLS, WORDS, dumps

__all__ = ("TurnGenerator", "result_message")


class TurnGenerator(ToolLines):
    """Generates whole turns into :attr:`out` (compact JSON lines, no newlines)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.out: list[bytes] = []

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"

    def ident(self, prefix: str) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return prefix + "".join(self.rng.choice(alphabet) for _ in range(24))

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def emit(self, obj: dict[str, Any]) -> None:
        self.out.append(dumps(obj))

    def stream(self, event: dict[str, Any], msg_id: str, **extra: Any) -> None:
        self.emit(
            {
                "type": "stream_event",
                "event": event,
                "session_id": SESSION_ID,
                "parent_tool_use_id": None,
                "uuid": self.uuid(),
                **extra,
                "api_message_id": msg_id,
            }
        )

    def usage(self, input_tokens: int, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def init(self) -> None:
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": "/sandbox/bench/cwd",
                "session_id": SESSION_ID,
                "tools": TOOLS,
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": "default",
                "slash_commands": SLASH,
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": "2.1.332",
                "output_style": "default",
                "agents": ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"],
                "skills": SLASH[:16],
                "plugins": [
                    {
                        "name": "cc-plugin-agents-md",
                        "path": "builtin",
                        "source": "cc-plugin-agents-md@builtin",
                    },
                    {
                        "name": "cc-plugin-privacy",
                        "path": "builtin",
                        "source": "cc-plugin-privacy@builtin",
                    },
                ],
                "capabilities": CAPABILITIES,
                "analytics_disabled": True,
                "product_feedback_disabled": True,
                "served_by_anthropic": False,
                "uuid": self.uuid(),
                "sandbox_enabled": False,
                "memory_paths": {
                    "auto": "/sandbox/bench/home/.claude/projects/-sandbox-bench-cwd/memory/"
                },
                "original_cwd": "/sandbox/bench/cwd",
                "additional_directories": [],
                "fast_mode_state": "off",
                "fast_mode_disabled_reason": "sdk_opt_in_required",
                "per_turn_effort_active": True,
                "view_mode": "default",
            }
        )

    def assistant(self, msg_id: str, block: dict[str, Any], input_tokens: int) -> None:
        self.emit(
            {
                "type": "assistant",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [block],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": self.usage(input_tokens, 1),
                    "context_management": None,
                },
                "parent_tool_use_id": None,
                "session_id": SESSION_ID,
                "uuid": self.uuid(),
                "timestamp": "2026-11-25T22:17:38.676Z",
                "request_id": self.ident("req_"),
            }
        )

    def thinking_block(self, msg_id: str, input_tokens: int) -> None:
        # As the CLI streams extended thinking (basic.jsonl): every line of the block carries
        # ``thinking_display``, the signature comes as one ``signature_delta`` at the end.
        self.stream(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            msg_id,
            thinking_display="updates",
        )
        parts = []
        for _ in range(self.rng.randint(8, 40)):
            piece = self.words(self.rng.randint(1, 5)) + " "
            parts.append(piece)
            self.stream(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": piece},
                },
                msg_id,
                thinking_display="updates",
            )
        signature = "fakesig_" + f"{self.rng.getrandbits(128):032x}"
        self.stream(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": signature},
            },
            msg_id,
        )
        # The CLI writes a block's ``assistant`` line before its ``content_block_stop``.
        self.assistant(
            msg_id,
            {"type": "thinking", "thinking": "".join(parts), "signature": signature},
            input_tokens,
        )
        self.stream({"type": "content_block_stop", "index": 0}, msg_id, thinking_display="updates")

    def text_block(self, msg_id: str, input_tokens: int) -> str:
        self.stream(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            msg_id,
        )
        parts = []
        for _ in range(self.rng.randint(15, 80)):
            piece = self.words(self.rng.randint(1, 5)) + " "
            parts.append(piece)
            self.stream(
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "text_delta", "text": piece},
                },
                msg_id,
            )
        text = "".join(parts)
        self.assistant(msg_id, {"type": "text", "text": text}, input_tokens)
        self.stream({"type": "content_block_stop", "index": 1}, msg_id)
        return text

    def turn(self) -> None:
        self.init()
        calls = self.rng.randint(2, 6)
        msg_ids = []
        text = ""
        input_tokens = 2573
        for call in range(calls):
            last = call == calls - 1
            msg_id = self.ident("msg_")
            msg_ids.append(msg_id)
            self.emit(
                {
                    "type": "system",
                    "subtype": "status",
                    "status": "requesting",
                    "session_id": SESSION_ID,
                    "uuid": self.uuid(),
                }
            )
            self.stream(
                {
                    "type": "message_start",
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": MODEL,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": self.usage(input_tokens, 1),
                    },
                },
                msg_id,
                ttft_ms=self.rng.randint(20, 900),
                thinking_display="updates",
            )
            self.thinking_block(msg_id, input_tokens)
            text = self.text_block(msg_id, input_tokens)
            tool = None if last else self.tool_call(msg_id, input_tokens)
            self.stream(
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": "end_turn" if last else "tool_use",
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": self.rng.randint(20, 400)},
                },
                msg_id,
            )
            self.stream({"type": "message_stop"}, msg_id)
            if tool is not None:
                self.tool_result(*tool)
            input_tokens += self.rng.randint(100, 3000)
        self.emit(result_message(text, self.uuid(), msg_ids, input_tokens))


def result_message(text: str, uuid: str, msg_ids: list[str], input_tokens: int) -> dict[str, Any]:
    """The ``result/success`` line ending a turn whose last text is ``text``."""
    model_usage = {
        "inputTokens": input_tokens,
        "outputTokens": 52,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": 0.021944,
        "contextWindow": 1000000,
        "maxOutputTokens": 128000,
    }
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 288,
        "duration_api_ms": 113,
        "num_turns": len(msg_ids),
        "result": text,
        "stop_reason": "end_turn",
        "session_id": SESSION_ID,
        "total_cost_usd": 0.021944,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 52,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
        },
        "modelUsage": {MODEL: model_usage},
        "permission_denials": [],
        "terminal_reason": "completed",
        "fast_mode_state": "off",
        "uuid": uuid,
        "begun_message_ids": msg_ids,
        "ttft_ms": 157,
    }
