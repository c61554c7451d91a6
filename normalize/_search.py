"""Grep and Glob → ``code_search``.

Both tools' search pattern goes to ``pattern`` (a regular expression for Grep, a file-name
glob for Glob; ``tool`` says which). Grep's also stays in ``query`` for older consumers.

Grep's text output depends on ``output_mode``: ``files_with_matches`` (the default) is a
``Found N files`` header and one path per line, ``content`` is ``path:line:text`` lines
(``-`` instead of ``:`` for context lines), and ``count`` is ``path:N`` lines with a
``Found N total occurrences`` footer. ``No files found`` / ``No matches found`` mean none.
Headers and footers are parsed, never counted as files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ._coerce import as_bool, as_int, as_str, as_str_tuple, first_str, require_str
from ._result import ToolResult
from .payloads import CodeSearch, SearchMatch, SearchOutput

__all__ = ("search_result", "use_glob", "use_grep")

_FOUND_FILES = re.compile(r"^Found (\d+) files?\b")
_FOUND_TOTAL = re.compile(r"^Found (\d+) total occurrences?(?: across (\d+) files?)?")
_NONE_FOUND = re.compile(r"^No (?:files|matches) found\b")
_NOTE = re.compile(r"^\[?(?:Showing results|Results are truncated|\(Results are truncated)")
#: A content line, ``path:N:text`` (``-`` for context lines); see ``_content_parts``.
_CONTENT = re.compile(r"^(.*?)([:-])(\d+)\2(.*)$", re.DOTALL)
#: ``_CONTENT`` without its lazy prefix: searched, the first match is where its prefix ends.
_SEPARATED_NUMBER = re.compile(r"([:-])(\d+)\1")
_LINE_ONLY = re.compile(r"^(\d+)([:-])(.*)$", re.DOTALL)
_COUNT = re.compile(r"^(.*):(\d+)$")


def use_grep(name: str, data: Mapping[str, Any]) -> CodeSearch:
    """``Grep {pattern, path, glob, type, output_mode, -i, ...}``."""
    pattern = require_str(data.get("pattern"))
    return CodeSearch(
        tool=name,
        pattern=pattern,
        query=pattern,
        path=as_str(data.get("path")),
        glob=as_str(data.get("glob")),
        file_type=as_str(data.get("type")),
        output_mode=as_str(data.get("output_mode")),
        case_insensitive=as_bool(data.get("-i")),
    )


def use_glob(name: str, data: Mapping[str, Any]) -> CodeSearch:
    """``Glob {pattern, path}``."""
    return CodeSearch(
        tool=name, pattern=require_str(data.get("pattern")), path=as_str(data.get("path"))
    )


class _Budget:
    """Keeps lists within the byte cap; ``cut`` says whether anything was dropped."""

    def __init__(self, max_bytes: int) -> None:
        self.left = max_bytes
        self.cut = False

    def take(self, text: str) -> bool:
        # ASCII (most paths and code) needs no encoding to know its UTF-8 size.
        size = (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) + 1
        if size > self.left:
            self.cut = True
            return False
        self.left -= size
        return True

    def take_all(self, texts: Sequence[str]) -> bool:
        """Take every text when all of them fit (as ``take`` one by one would), else none."""
        if not texts:
            return True
        if self.cut:
            return False
        joined = "\n".join(texts)  # each text plus one byte, as ``take`` counts
        size = (
            len(joined) if joined.isascii() else len(joined.encode("utf-8", "surrogatepass"))
        ) + 1
        if size > self.left:
            return False
        self.left -= size
        return True


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _line_number(digits: str) -> int | None:
    """``as_int`` of a ``\\d+`` match, without its checks when it is short and ASCII."""
    return int(digits) if len(digits) <= 18 and digits.isascii() else as_int(digits)


#: First characters of the lines the header / footer / note patterns can match: any other
#: line is skipped without running them (most lines are paths or matches).
_HEAD_FIRST = frozenset("FN[SR(")
_HEAD_LINES = re.compile(r"\n([FN\[SR(][^\n]*)")  # (a literal first: a fast scan)


def _head_lines(text: str) -> list[str]:
    """The lines of ``text`` that start with one of ``_HEAD_FIRST`` (what ``_lines`` keeps
    of them: such a line is never blank)."""
    found: list[str] = _HEAD_LINES.findall(text)
    if text[:1] in _HEAD_FIRST:
        found.insert(0, text.partition("\n")[0])
    return found


def _content_parts(line: str) -> tuple[str, str, str, str] | None:
    """``_CONTENT.match(line).groups()`` when it matches with a path, else ``None``.

    The common line (``path:N:text`` with no ``-`` in the path) is split with ``str.find``
    (a fifth of the regex's time: its lazy prefix steps through the path one character at
    a time); any other line takes the regex, as a leftmost search, which is the same match.
    """
    colon = line.find(":")
    if colon > 0 and line.find("-", 0, colon) < 0:
        end = line.find(":", colon + 1)
        if end > colon + 1:
            digits = line[colon + 1 : end]
            if digits.isdecimal():  # ``\d`` is a Unicode decimal digit, as isdecimal()
                return line[:colon], ":", digits, line[end + 1 :]
    match = _SEPARATED_NUMBER.search(line)
    if match is None or not match.start():
        return None
    return line[: match.start()], match.group(1), match.group(2), line[match.end() :]


def _parse_content(lines: list[str], budget: _Budget) -> list[SearchMatch]:
    kept = [
        line
        for line in lines
        if line != "--" and not (line[0] in _HEAD_FIRST and _NOTE.match(line))
    ]
    if not budget.take_all(kept):  # over the cap: the lines that fit, one by one
        kept = [line for line in kept if not budget.cut and budget.take(line)]
    matches: list[SearchMatch] = []
    for line in kept:
        parts = _content_parts(line)
        if parts is not None:
            path, sep, number, text = parts
            matches.append(
                SearchMatch(path=path, line=_line_number(number), text=text, context=sep == "-")
            )
            continue
        only = _LINE_ONLY.match(line)
        if only:
            number, sep, text = only.groups()
            matches.append(SearchMatch(line=_line_number(number), text=text, context=sep == "-"))
        else:
            matches.append(SearchMatch(text=line))
    return matches


def _parse_counts(lines: list[str], budget: _Budget) -> list[SearchMatch]:
    matches: list[SearchMatch] = []
    for line in lines:
        match = _COUNT.match(line)
        if match and not budget.cut and budget.take(line):
            matches.append(SearchMatch(path=match.group(1), count=as_int(match.group(2))))
    return matches


def search_result(payload: CodeSearch, result: ToolResult) -> CodeSearch:
    """Fill ``output`` from Grep/Glob results; the structured data wins over the text."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    data = result.structured
    mode = first_str(data, "mode") or payload.output_mode
    if payload.tool != "Grep" and mode is None:
        mode = "files_with_matches"
    text = first_str(data, "content") if mode in ("content", "count") else None
    text = result.text if text is None else text
    # With the structured file list the text's body lines are not needed: only its header,
    # footer and note lines are read (found by one C-level scan instead of a split).
    names_given = mode not in ("content", "count") and "filenames" in data
    lines = _head_lines(text) if names_given else _lines(text)
    file_count = as_int(data.get("numFiles"))
    match_count = as_int(data.get("numMatches", data.get("numLines")))
    truncated = as_bool(data.get("truncated")) or data.get("appliedLimit") is not None
    budget = _Budget(result.max_bytes)
    body: list[str] = []
    for line in lines:
        if line[0] not in _HEAD_FIRST:  # (lines are never empty)
            body.append(line)
            continue
        found = _FOUND_FILES.match(line)
        total = _FOUND_TOTAL.match(line)
        if total:
            match_count = as_int(total.group(1)) if match_count is None else match_count
            if total.group(2) and file_count is None:
                file_count = as_int(total.group(2))
        elif found:
            file_count = as_int(found.group(1)) if file_count is None else file_count
        elif _NONE_FOUND.match(line):
            file_count = 0 if file_count is None else file_count
        elif _NOTE.match(line):
            truncated = truncated or "truncated" in line
        else:
            body.append(line)
    files: tuple[str, ...] = ()
    matches: list[SearchMatch] = []
    if mode == "content":
        matches = _parse_content(body, budget)
    elif mode == "count":
        matches = _parse_counts(body, budget)
    else:
        names = as_str_tuple(data.get("filenames")) if names_given else tuple(body)
        if budget.take_all(names):
            files = names
        else:
            files = tuple(name for name in names if not budget.cut and budget.take(name))
        if file_count is None:
            file_count = len(names)
    output = SearchOutput(
        files=files,
        matches=tuple(matches),
        file_count=file_count,
        match_count=match_count,
        truncated=truncated or budget.cut,
    )
    return msgspec.structs.replace(payload, output=output)
