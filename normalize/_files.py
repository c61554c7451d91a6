"""Read, Write, Edit, MultiEdit and NotebookEdit → ``read_file`` / ``modify_file``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import (
    Missing,
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    first_str,
    require_str,
)
from ._diff import (
    apply_edit,
    hunks_line_range,
    structured_patch_diff,
    unified_diff,
)
from ._result import ToolResult
from .payloads import ModifyFile, Mutation, MutationType, ReadFile, ReadOutput

__all__ = (
    "language_for",
    "modify_result",
    "read_result",
    "use_edit",
    "use_multi_edit",
    "use_notebook_edit",
    "use_read",
    "use_write",
)

# "     1\thello" (cat -n), "1\thello" (2.1.x) and "     1→hello" (older CLIs).
_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|\u2192)(.*)$", re.DOTALL)

_LANGUAGES = {
    "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "cs": "csharp",
    "css": "css", "dart": "dart", "ex": "elixir", "exs": "elixir", "go": "go",
    "html": "html", "htm": "html", "java": "java", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "jsx": "jsx", "json": "json", "jsonl": "json", "kt": "kotlin",
    "lua": "lua", "md": "markdown", "markdown": "markdown", "php": "php", "pl": "perl",
    "py": "python", "pyi": "python", "ipynb": "json", "r": "r", "rb": "ruby", "rs": "rust",
    "scala": "scala", "scss": "scss", "sh": "shell", "bash": "shell", "zsh": "shell",
    "sql": "sql", "swift": "swift", "toml": "toml", "ts": "typescript", "tsx": "tsx",
    "txt": "text", "xml": "xml", "yaml": "yaml", "yml": "yaml", "vue": "vue",
}  # fmt: skip
_FILE_NAMES = {"dockerfile": "dockerfile", "makefile": "makefile"}


def language_for(path: str) -> str | None:
    """A language name guessed from a file name (``"src/app.py"`` → ``"python"``)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name in _FILE_NAMES:
        return _FILE_NAMES[name]
    if "." not in name:
        return None
    return _LANGUAGES.get(name.rsplit(".", 1)[-1])


# --------------------------------------------------------------------------- Read


def use_read(name: str, data: Mapping[str, Any]) -> ReadFile:
    """``Read {file_path, offset, limit, pages}``."""
    return ReadFile(
        tool=name,
        file_path=require_str(data.get("file_path")),
        offset=as_int(data.get("offset")),
        limit=as_int(data.get("limit")),
        pages=as_str(data.get("pages")),
    )


def _strip_numbers(text: str) -> tuple[str, int] | None:
    lines = text.split("\n")
    kept: list[str] = []
    for line in lines:
        match = _NUMBERED.match(line)
        if match:
            kept.append(match.group(2))
    if not kept:
        return None
    return "\n".join(kept), len(kept)


def read_result(payload: ReadFile, result: ToolResult) -> ReadFile:
    """Fill ``output`` from the Read result; the structured ``file`` wins over the text."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    data = result.structured
    file = as_map(data.get("file"))
    file_type = as_str(data.get("type"))
    content = as_str(file.get("content")) if file_type in (None, "text") else None
    line_count = as_int(file.get("numLines"))
    if content is None and file_type in (None, "text"):
        stripped = _strip_numbers(result.text)
        if stripped is not None:
            content, counted = stripped
            line_count = counted if line_count is None else line_count
        elif not file:
            content = result.text
    if content is not None and line_count is None:
        line_count = content.count("\n") + (0 if content.endswith("\n") else 1)
    content, truncated = result.cut(content)
    path = first_str(file, "filePath") or payload.file_path
    output = ReadOutput(
        content=content,
        line_count=line_count,
        start_line=as_int(file.get("startLine")),
        total_lines=as_int(file.get("totalLines")),
        truncated=truncated,
        language=language_for(path),
        file_type=file_type,
    )
    return msgspec.structs.replace(payload, output=output)


# --------------------------------------------------------------------------- Write / Edit


def use_write(name: str, data: Mapping[str, Any]) -> ModifyFile:
    """``Write {file_path, content}``: a ``create`` until the result says it overwrote."""
    path = require_str(data.get("file_path"))
    content = require_str(data.get("content"))
    return ModifyFile(
        tool=name, file_path=path, mutations=(Mutation(type="create", content=content),)
    )


def _edit_mutation(path: str, edit: Mapping[str, Any]) -> Mutation:
    old = require_str(edit.get("old_string"))
    new = require_str(edit.get("new_string"))
    diff, _, _ = unified_diff(old, new, path=path)
    return Mutation(
        type="patch",
        old_content=old,
        new_content=new,
        diff=diff or None,
        replace_all=as_bool(edit.get("replace_all")),
    )


def use_edit(name: str, data: Mapping[str, Any]) -> ModifyFile:
    """``Edit {file_path, old_string, new_string, replace_all}``: one ``patch`` mutation."""
    path = require_str(data.get("file_path"))
    return ModifyFile(tool=name, file_path=path, mutations=(_edit_mutation(path, data),))


def use_multi_edit(name: str, data: Mapping[str, Any]) -> ModifyFile:
    """``MultiEdit {file_path, edits: [{old_string, new_string, replace_all}]}``."""
    path = require_str(data.get("file_path"))
    edits = data.get("edits")
    if not isinstance(edits, list):
        raise Missing
    mutations = tuple(_edit_mutation(path, as_map(edit)) for edit in edits)
    return ModifyFile(tool=name, file_path=path, mutations=mutations)


def use_notebook_edit(name: str, data: Mapping[str, Any]) -> ModifyFile:
    """``NotebookEdit {notebook_path, new_source, cell_id, cell_type, edit_mode}``.

    ``insert`` becomes a ``create`` mutation (a new cell), ``delete`` a ``delete`` and
    ``replace`` (the default) a ``patch`` of the cell's source.
    """
    path = require_str(data.get("notebook_path"))
    mode = as_str(data.get("edit_mode")) or "replace"
    kinds: dict[str, MutationType] = {"insert": "create", "delete": "delete"}
    mutation = Mutation(
        type=kinds.get(mode, "patch"),
        new_content=as_str(data.get("new_source")),
        cell_id=as_str(data.get("cell_id")),
        cell_type=as_str(data.get("cell_type")),
    )
    return ModifyFile(tool=name, file_path=path, mutations=(mutation,))


def _cut_mutation(mutation: Mutation, result: ToolResult) -> Mutation:
    content, cut_content = result.cut(mutation.content)
    diff = mutation.diff
    cut_diff = False
    if diff is not None and len(diff.encode("utf-8", "surrogatepass")) > result.max_bytes:
        diff, cut_diff = None, True  # a cut diff would no longer apply: drop it
    if not (cut_content or cut_diff):
        return mutation
    return msgspec.structs.replace(mutation, content=content, diff=diff, truncated=True)


def _with_patch(mutation: Mutation, hunks: object, path: str, diff: str | None = None) -> Mutation:
    """``mutation`` with the diff of ``hunks`` (``diff``: already rebuilt from them)."""
    if diff is None:
        diff = structured_patch_diff(hunks, path=path)
    if not diff:
        return mutation
    start, end = hunks_line_range(as_list(hunks))
    return msgspec.structs.replace(mutation, diff=diff, start_line=start, end_line=end)


def _write_result(payload: ModifyFile, data: Mapping[str, Any]) -> ModifyFile:
    if data.get("type") != "update" or not payload.mutations:
        return payload
    first = payload.mutations[0]
    new = as_str(data.get("content"))
    new = first.content if new is None else new
    if new is None:
        return payload
    mutation = Mutation(type="replace", content=new)
    hunks = data.get("structuredPatch")
    patched = _with_patch(mutation, hunks, payload.file_path)
    if patched is mutation:
        original = as_str(data.get("originalFile"))
        if original is not None:
            diff, start, end = unified_diff(original, new, path=payload.file_path)
            patched = Mutation(
                type="replace", content=new, diff=diff or None, start_line=start, end_line=end
            )
    return msgspec.structs.replace(payload, mutations=(patched, *payload.mutations[1:]))


def _edits_result(payload: ModifyFile, data: Mapping[str, Any]) -> ModifyFile:
    path = payload.file_path
    hunks = data.get("structuredPatch")
    original = first_str(data, "originalFile", "originalFileContents")
    mutations = payload.mutations
    if len(mutations) == 1:
        diff = structured_patch_diff(hunks, path=path)
        if diff:  # rebuilt once, not again by _with_patch
            patched = _with_patch(mutations[0], hunks, path, diff)
            return msgspec.structs.replace(payload, mutations=(patched,))
    if original is None:
        return payload
    # Replay the edits on the original file so each mutation gets a real, numbered diff.
    current = original
    updated: list[Mutation] = []
    for mutation in mutations:
        after = apply_edit(
            current,
            mutation.old_content or "",
            mutation.new_content or "",
            replace_all=mutation.replace_all,
        )
        if after is None:
            return payload
        diff, start, end = unified_diff(current, after, path=path)
        updated.append(
            msgspec.structs.replace(mutation, diff=diff or None, start_line=start, end_line=end)
        )
        current = after
    return msgspec.structs.replace(payload, mutations=tuple(updated))


def _notebook_result(payload: ModifyFile, data: Mapping[str, Any]) -> ModifyFile:
    if not payload.mutations:
        return payload
    first = payload.mutations[0]
    cell_id = as_str(data.get("cell_id")) or first.cell_id
    cell_type = as_str(data.get("cell_type")) or first.cell_type
    mutation = msgspec.structs.replace(first, cell_id=cell_id, cell_type=cell_type)
    error = as_str(data.get("error")) or None
    return msgspec.structs.replace(payload, mutations=(mutation,), error=error)


def modify_result(payload: ModifyFile, result: ToolResult) -> ModifyFile:
    """Fill in create-vs-overwrite, real diffs and line numbers from the result."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    data = result.structured
    if payload.tool == "Write":
        payload = _write_result(payload, data)
    elif payload.tool == "NotebookEdit":
        payload = _notebook_result(payload, data)
    elif data:
        payload = _edits_result(payload, data)
    mutations = tuple(_cut_mutation(m, result) for m in payload.mutations)
    return msgspec.structs.replace(payload, mutations=mutations)
