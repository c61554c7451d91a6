"""A tool result as the text an AG-UI ``TOOL_CALL_RESULT`` carries (pure).

The normalized payload keeps the structure (for rich UIs, sent as ``claudecode.tool_payload``);
the chat gets what the tool said, as a person or a model would read it.
"""

from __future__ import annotations

import json
from typing import Any

from normalize import (
    CodeSearch,
    Generic,
    HttpRequest,
    ManageTodos,
    Misc,
    ModifyFile,
    NormalizedPayload,
    ReadFile,
    ShellExec,
    SubagentTask,
)

__all__ = ("result_text",)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _match_line(path: str | None, line: int | None, text: str | None) -> str:
    """``path:line:text``, without the parts a match lacks."""
    if path is not None and line is not None and text is not None:
        return f"{path}:{line}:{text}"  # the usual case, without a list
    return ":".join([str(p) for p in (path, line, text) if p is not None])


def result_text(payload: NormalizedPayload, status: str = "complete") -> str:
    """What the tool returned, as text (its error when it failed)."""
    if payload.error:
        return payload.error
    if isinstance(payload, ShellExec) and payload.output is not None:
        out = payload.output
        parts = [p for p in (out.stdout, out.stderr) if p]
        if out.exit_code not in (None, 0):
            parts.append(f"Exit code {out.exit_code}")
        return "\n".join(parts)
    if isinstance(payload, ReadFile) and payload.output is not None:
        return payload.output.content or ""
    if isinstance(payload, ModifyFile):
        diffs = [m.diff for m in payload.mutations if m.diff]
        verb = "failed to change" if status == "error" else "changed"
        return "\n".join(diffs) if diffs else f"{verb} {payload.file_path}"
    if isinstance(payload, CodeSearch) and payload.output is not None:
        found = payload.output
        if found.matches:
            return "\n".join([_match_line(m.path, m.line, m.text) for m in found.matches])
        return "\n".join(found.files) if found.files else "No matches"
    if isinstance(payload, HttpRequest):
        return payload.response or ""
    if isinstance(payload, SubagentTask) and payload.result is not None:
        return payload.result.output or ""
    if isinstance(payload, ManageTodos):
        return "\n".join(f"[{t.status or ' '}] {t.description}" for t in payload.items)
    if isinstance(payload, Generic | Misc):
        return _text(payload.output)
    return "error" if status == "error" else "done"
