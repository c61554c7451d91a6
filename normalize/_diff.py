"""Unified diffs: computed with difflib, or rebuilt from the CLI's ``structuredPatch``.

Lines are split on ``"\\n"`` only (as ``patch`` does), and a last line without a newline is
followed by ``\\ No newline at end of file``, so ``patch`` applies the result exactly.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from ._coerce import as_int, as_list, as_map

__all__ = (
    "apply_edit",
    "grouped_opcodes",
    "hunks_line_range",
    "split_lines",
    "structured_patch_diff",
    "unified_diff",
)

_NO_NEWLINE = "\\ No newline at end of file\n"


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping the line ends (the last line may lack one)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _range(start: int, length: int) -> str:
    # The hunk range format of difflib / GNU diff: "start,length", with start one less
    # for an empty range and the length left out when it is 1.
    begin = start + 1
    if length == 1:
        return str(begin)
    if length == 0:
        begin -= 1
    return f"{begin},{length}"


def _emit(out: list[str], prefix: str, line: str) -> None:
    if line.endswith("\n"):
        out.append(prefix + line)
    else:
        out.append(prefix + line + "\n")
        out.append(_NO_NEWLINE)


_Opcode = tuple[str, int, int, int, int]


def grouped_opcodes(a: list[str], b: list[str], context: int = 3) -> list[list[_Opcode]]:
    """``difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)``.

    When ``a`` and ``b`` share no line (an edit of one line into another, the usual
    ``Edit`` of a few words) the matcher would find no match and give one ``replace`` (or
    ``insert`` / ``delete``) of everything: that group is returned without building it.
    """
    if a or b:
        if a and b and not frozenset(a).isdisjoint(b):
            matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
            return list(matcher.get_grouped_opcodes(context))
        tag = "replace" if a and b else "delete" if a else "insert"
        return [[(tag, 0, len(a), 0, len(b))]]
    return []


def unified_diff(
    old: str | None, new: str, *, path: str = "file", context: int = 3
) -> tuple[str, int | None, int | None]:
    """A unified diff from ``old`` to ``new`` (``old=None``: a new file).

    Returns:
        ``(diff, start_line, end_line)``: the diff text (``""`` when nothing changed) and the
        1-based range of new-file lines its hunks cover (``None`` when there are none).
    """
    a = split_lines(old or "")
    b = split_lines(new)
    out: list[str] = []
    start: int | None = None
    end: int | None = None
    for group in grouped_opcodes(a, b, context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2 - i1)} +{_range(j1, j2 - j1)} @@\n")
        if start is None:
            start = j1 + 1
        end = max(j2, j1 + 1)
        for tag, k1, k2, m1, m2 in group:
            if tag == "equal":
                for line in a[k1:k2]:
                    _emit(out, " ", line)
                continue
            for line in a[k1:k2]:
                _emit(out, "-", line)
            for line in b[m1:m2]:
                _emit(out, "+", line)
    if not out:
        return "", None, None
    header = f"--- {'/dev/null' if old is None else path}\n+++ {path}\n"
    return header + "".join(out), start, end


def structured_patch_diff(hunks: object, *, path: str = "file") -> str | None:
    """Rebuild a unified diff from the CLI's ``structuredPatch`` hunks.

    Each hunk is ``{oldStart, oldLines, newStart, newLines, lines}`` with lines prefixed by
    ``" "``, ``"-"``, ``"+"`` or ``"\\"``. Returns ``None`` when the hunks are malformed
    (wrong types, or line counts that disagree with the lines), and ``""`` for no hunks.
    """
    out: list[str] = []
    for raw in as_list(hunks):
        hunk = as_map(raw)
        numbers = [as_int(hunk.get(k)) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        lines = as_list(hunk.get("lines"))
        if any(n is None or n < 0 for n in numbers) or not all(
            isinstance(line, str) and line[:1] in (" ", "-", "+", "\\") for line in lines
        ):
            return None
        old_start, old_lines, new_start, new_lines = (n or 0 for n in numbers)
        tags = [line[0] for line in lines]
        if tags.count(" ") + tags.count("-") != old_lines or (
            tags.count(" ") + tags.count("+") != new_lines
        ):
            return None  # counts that disagree with the lines would make a broken diff
        out.append(f"@@ -{old_start},{old_lines} +{new_start},{new_lines} @@\n")
        for line in lines:
            text = line.rstrip("\n")
            out.append(_NO_NEWLINE if text.startswith("\\") else text + "\n")
    if not out:
        return ""
    return f"--- {path}\n+++ {path}\n" + "".join(out)


def hunks_line_range(hunks: Sequence[Any]) -> tuple[int | None, int | None]:
    """The 1-based new-file line range that ``structuredPatch`` hunks cover."""
    start: int | None = None
    end: int | None = None
    for raw in hunks:
        hunk = as_map(raw)
        new_start = as_int(hunk.get("newStart"))
        new_lines = as_int(hunk.get("newLines"))
        if new_start is None or new_lines is None:
            continue
        if start is None:
            start = new_start
        end = new_start + max(new_lines, 1) - 1
    return start, end


def apply_edit(text: str, old: str, new: str, *, replace_all: bool) -> str | None:
    """Apply one Edit to ``text``; ``None`` when ``old`` does not occur (or is empty)."""
    if not old or old not in text:
        return None
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)
