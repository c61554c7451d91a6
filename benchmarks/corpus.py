"""A deterministic, realistic stream-json corpus: what the CLI writes on stdout over many turns.

Every line shape is copied from the recorded real-CLI transcripts (``tests/fixtures/
transcripts``), written compactly as the CLI does. One turn is::

    system/init
    per API call (2-6 of them):
        system/status, stream_event message_start,
        a thinking block: content_block_start, 8-40 thinking_delta lines, a signature_delta,
                      an ``assistant`` line carrying the block, content_block_stop,
        a text block: content_block_start, 15-80 text_delta lines, an ``assistant`` line
                      carrying the block, content_block_stop,
        except on the last call, a tool_use block (Bash, Read, Edit, Grep, Glob or WebFetch):
                      content_block_start,
                      5-40 input_json_delta lines, ``assistant`` line, content_block_stop,
        message_delta, message_stop,
        for the tool call: a ``user`` tool_result line of ~2-8 KB with a structured
                      ``tool_use_result`` (Bash stdout, Read file, Edit patch, Grep matches
                      in content or files mode, Glob file names, WebFetch page summary)
    result/success

The default corpus has about 120k lines and 50 MB. It is generated once per (size, seed,
version) and cached as an NDJSON file under ``benchmarks/.cache``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = (
    "CACHE_DIR",
    "CORPUS_VERSION",
    "Corpus",
    "DEFAULT_LINES",
    "DEFAULT_SEED",
    "END_UUID",
    "final_result_line",
    "generate_lines",
    "load_corpus",
)

#: Bump when the generator changes, so cached corpora are rebuilt.
CORPUS_VERSION = 3
DEFAULT_LINES = 120_000
DEFAULT_SEED = 6
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
#: The ``uuid`` of the final ``result`` line the emitter appends after the corpus.
END_UUID = "00000000-0000-4000-8000-00000000e0d0"

SESSION_ID = "34bae207-b45d-4516-b9ab-119ad1ad1013"
MODEL = "claude-opus-5-5"


def _split(text: str) -> list[str]:
    return text.split()


_WORDS = _split(
    "the a to of and in is it that for on with as this be are file function test value "
    "return data line stream session event message tool result error python import class "
    "def self none true false list dict string bytes async await read write decode encode "
    "buffer channel subscriber client adapter protocol json schema field type union struct "
    "I will now check we can see here should would could run command output directory path "
    "config option default timeout process exit code signal pipe stdout stdin stderr"
)

_TOOLS = _split(
    "Task AskUserQuestion Bash CronCreate CronDelete CronList Edit EnterPlanMode EnterWorktree "
    "ExitPlanMode ExitWorktree ListAgents Monitor NotebookEdit Read ReportFindings "
    "ScheduleWakeup SendMessage Skill TaskStop ToolSearch WebFetch WebSearch Workflow Write"
)

_SLASH = _split(
    "deep-research dataviz update-config verify debug code-review simplify batch "
    "fewer-permission-prompts doctor loop claude-api workflow-authoring run run-skill-generator "
    "plugin-authoring agents auto-mode-setup autocompact clear color compact config "
    "output-style context effort fast focus heapdump init mcp model rename security-review "
    "usage insights recap goal list-agents team-onboarding"
)

_CAPABILITIES = _split(
    "interrupt_receipt_v1 interrupt_cancel_queued_v1 interrupt_send_now_v1 "
    "interrupt_requeue_taken_v1 msg_lifecycle_v1 request_marker_lists_v1 "
    "ask_user_question_unanswered_v1 lifecycle_wakeup_source_v1 sdk_mcp_tools_list_changed "
    "sdk_mcp_manifests mcp_read_resource_v1 mcp_tool_ui_meta_v1 ui_surface_v1 "
    "mcp_call_result_not_for_model_v1 mcp_call_soft_error_result_v1 "
    "mcp_call_check_permissions_v1 withdrawn_files_note_v2 withdrawn_tools_v1"
)


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True)
class Corpus:
    """A generated corpus: its lines (without newlines), turn count and NDJSON file."""

    lines: list[bytes]
    turns: int
    path: Path

    @property
    def nbytes(self) -> int:
        """Size of the NDJSON form (newlines included)."""
        return sum(len(line) for line in self.lines) + len(self.lines)

    @property
    def data(self) -> bytes:
        """The NDJSON bytes, as the CLI would write them."""
        return b"\n".join(self.lines) + b"\n"


class _Gen:
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
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def emit(self, obj: dict[str, Any]) -> None:
        self.out.append(_dumps(obj))

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
                "tools": _TOOLS,
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": "default",
                "slash_commands": _SLASH,
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": "2.1.332",
                "output_style": "default",
                "agents": ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"],
                "skills": _SLASH[:16],
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
                "capabilities": _CAPABILITIES,
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

    def tool_call(self, msg_id: str, input_tokens: int) -> tuple[str, str, dict[str, Any]]:
        name = self.rng.choice(("Bash", "Read", "Edit", "Grep", "Glob", "WebFetch"))
        tool_id = self.ident("toolu_")
        path = f"/sandbox/bench/cwd/src/{self.rng.choice(_WORDS)}_{self.rng.randint(1, 99)}.py"
        tool_input: dict[str, Any]
        if name == "Bash":
            tool_input = {
                "command": f"ls -la {path} && {self.words(6)}",
                "description": self.words(4),
            }
        elif name == "Read":
            tool_input = {"file_path": path}
        elif name == "Grep":
            tool_input = {
                "pattern": f"def {self.rng.choice(_WORDS)}",
                "path": "/sandbox/bench/cwd",
                "output_mode": self.rng.choice(("content", "files_with_matches")),
                "-n": True,
            }
        elif name == "Glob":
            tool_input = {"pattern": f"**/*{self.rng.choice(_WORDS)}*.py"}
        elif name == "WebFetch":
            tool_input = {
                "url": f"https://docs.example.com/{self.rng.choice(_WORDS)}/{self.words(1)}",
                "prompt": self.words(8),
            }
        else:
            tool_input = {
                "file_path": path,
                "old_string": self.words(8),
                "new_string": self.words(9),
            }
        self.stream(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
            },
            msg_id,
        )
        encoded = json.dumps(tool_input)
        pieces = self.rng.randint(5, 40)
        step = max(1, len(encoded) // pieces + 1)
        for start in range(0, len(encoded), step):
            self.stream(
                {
                    "type": "content_block_delta",
                    "index": 2,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": encoded[start : start + step],
                    },
                },
                msg_id,
            )
        self.assistant(
            msg_id,
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
            input_tokens,
        )
        self.stream({"type": "content_block_stop", "index": 2}, msg_id)
        return name, tool_id, tool_input

    def tool_result(self, name: str, tool_id: str, tool_input: dict[str, Any]) -> None:
        body_lines = [f"{i + 1}\t{self.words(self.rng.randint(5, 14))}" for i in range(50)]
        body = "\n".join(body_lines)
        result: dict[str, Any]
        content = body
        if name == "Bash":
            result = {
                "stdout": body,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            }
        elif name == "Grep":
            content, result = self._grep(tool_input)
        elif name == "Glob":
            content, result = self._glob()
        elif name == "WebFetch":
            content, result = self._web_fetch(tool_input, body)
        elif name == "Read":
            file_text = "\n".join(line.split("\t", 1)[1] for line in body_lines) + "\n"
            result = {
                "type": "text",
                "file": {
                    "filePath": tool_input["file_path"],
                    "content": file_text,
                    "numLines": 50,
                    "startLine": 1,
                    "totalLines": 50,
                },
            }
        else:
            content = (
                f"The file {tool_input['file_path']} has been updated successfully. "
                "(file state is current in your context \u2014 no need to Read it back)"
            )
            original = body + "\n" + tool_input["old_string"] + "\n"
            result = {
                "filePath": tool_input["file_path"],
                "oldString": tool_input["old_string"],
                "newString": tool_input["new_string"],
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": 51,
                        "oldLines": 1,
                        "newStart": 51,
                        "newLines": 1,
                        "lines": [f"-{tool_input['old_string']}", f"+{tool_input['new_string']}"],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
        self.emit(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": content,
                            "is_error": False,
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION_ID,
                "uuid": self.uuid(),
                "timestamp": "2026-11-25T22:17:42.507Z",
                "tool_use_result": result,
                "tool_result_meta": [
                    {
                        "id": tool_id,
                        "permission_decision": {"decision": "accept", "source": "config"},
                    }
                ],
            }
        )

    def _paths(self, n: int) -> list[str]:
        return [
            f"/sandbox/bench/cwd/src/{self.rng.choice(_WORDS)}/{self.rng.choice(_WORDS)}_"
            f"{self.rng.randint(1, 99)}.py"
            for _ in range(n)
        ]

    def _grep(self, tool_input: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        # The CLI's Grep result: content mode is ``path:line:text`` lines (``numLines``),
        # files_with_matches a ``Found N files`` header and one path per line (``filenames``).
        if tool_input["output_mode"] == "content":
            lines = [
                f"{path}:{self.rng.randint(1, 900)}:    {tool_input['pattern']}"
                f"({self.words(self.rng.randint(1, 4))}):"
                for path in self._paths(self.rng.randint(40, 120))
            ]
            text = "\n".join(lines)
            return text, {
                "mode": "content",
                "numFiles": 0,
                "filenames": [],
                "content": text,
                "numLines": len(lines),
            }
        files = self._paths(self.rng.randint(20, 80))
        text = f"Found {len(files)} files\n" + "\n".join(files)
        return text, {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}

    def _glob(self) -> tuple[str, dict[str, Any]]:
        files = self._paths(self.rng.randint(20, 100))
        return "\n".join(files), {
            "filenames": files,
            "durationMs": self.rng.randint(3, 90),
            "numFiles": len(files),
            "truncated": False,
        }

    def _web_fetch(self, tool_input: dict[str, Any], body: str) -> tuple[str, dict[str, Any]]:
        summary = body.replace("\t", " ")
        return summary, {
            "bytes": self.rng.randint(20_000, 200_000),
            "code": 200,
            "codeText": "OK",
            "result": summary,
            "durationMs": self.rng.randint(200, 4000),
            "url": tool_input["url"],
        }

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
        self.emit(_result(text, self.uuid(), msg_ids, input_tokens))


def _result(text: str, uuid: str, msg_ids: list[str], input_tokens: int) -> dict[str, Any]:
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


def final_result_line(started_ns: int) -> bytes:
    """The ``result`` line the emitter writes after the corpus (``uuid`` = :data:`END_UUID`).

    Its ``result`` text carries the monotonic time (ns) at which the emitter began writing.
    """
    return _dumps(_result(f"bench-start={started_ns}", END_UUID, ["msg_end"], 1)) + b"\n"


def generate_lines(
    n_lines: int = DEFAULT_LINES, seed: int = DEFAULT_SEED
) -> tuple[list[bytes], int]:
    """Generate whole turns until at least ``n_lines`` lines; return (lines, turns)."""
    gen = _Gen(seed)
    turns = 0
    while len(gen.out) < n_lines:
        gen.turn()
        turns += 1
    return gen.out, turns


def load_corpus(
    n_lines: int = DEFAULT_LINES, seed: int = DEFAULT_SEED, cache_dir: Path = CACHE_DIR
) -> Corpus:
    """The corpus of about ``n_lines`` lines, from the cache or generated (then cached)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = f"corpus-v{CORPUS_VERSION}-{n_lines}-{seed}"
    path = cache_dir / f"{stem}.jsonl"
    meta = cache_dir / f"{stem}.meta.json"
    if path.exists() and meta.exists():
        lines = path.read_bytes().split(b"\n")
        lines.pop()
        turns = int(json.loads(meta.read_text())["turns"])
        if len(lines) == int(json.loads(meta.read_text())["lines"]):
            return Corpus(lines, turns, path)
    lines, turns = generate_lines(n_lines, seed)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"\n".join(lines) + b"\n")
    tmp.replace(path)
    meta.write_text(json.dumps({"lines": len(lines), "turns": turns}))
    return Corpus(lines, turns, path)
