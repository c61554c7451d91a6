"""The tool calls of the corpus's turns: a ``tool_use`` block streamed as ``input_json_delta``
lines (Bash, Read, Edit, Grep, Glob or WebFetch), and the ``user`` line with its
``tool_result`` and structured ``tool_use_result``, shaped as the real CLI writes them.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from ._corpus_vocab import SESSION_ID, WORDS

__all__ = ("ToolLines",)


class ToolLines:
    """The tool call and tool result lines of a turn (a mixin of the turn generator)."""

    rng: random.Random

    if TYPE_CHECKING:  # the turn generator provides these

        def uuid(self) -> str: ...

        def ident(self, prefix: str) -> str: ...

        def words(self, n: int) -> str: ...

        def emit(self, obj: dict[str, Any]) -> None: ...

        def stream(self, event: dict[str, Any], msg_id: str, **extra: Any) -> None: ...

        def assistant(self, msg_id: str, block: dict[str, Any], input_tokens: int) -> None: ...

    def tool_call(self, msg_id: str, input_tokens: int) -> tuple[str, str, dict[str, Any]]:
        name = self.rng.choice(("Bash", "Read", "Edit", "Grep", "Glob", "WebFetch"))
        tool_id = self.ident("toolu_")
        path = f"/sandbox/bench/cwd/src/{self.rng.choice(WORDS)}_{self.rng.randint(1, 99)}.py"
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
                "pattern": f"def {self.rng.choice(WORDS)}",
                "path": "/sandbox/bench/cwd",
                "output_mode": self.rng.choice(("content", "files_with_matches")),
                "-n": True,
            }
        elif name == "Glob":
            tool_input = {"pattern": f"**/*{self.rng.choice(WORDS)}*.py"}
        elif name == "WebFetch":
            tool_input = {
                "url": f"https://docs.example.com/{self.rng.choice(WORDS)}/{self.words(1)}",
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
            f"/sandbox/bench/cwd/src/{self.rng.choice(WORDS)}/{self.rng.choice(WORDS)}_"
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
