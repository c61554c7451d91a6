"""Short human titles for list views, and the coarse action type of each payload."""

from __future__ import annotations

from .payloads import (
    ActionType,
    AskUser,
    CodeSearch,
    CreateTask,
    Generic,
    HttpRequest,
    ManageTodos,
    Misc,
    ModifyFile,
    NormalizedPayload,
    ReadFile,
    ShellExec,
    ShowPlan,
    SubagentTask,
)

__all__ = ("action_type_for", "MAX_TITLE_LENGTH", "title_for")

_MAX = 60
#: The longest title :func:`title_for` returns, in characters (longer ones end with "…").
MAX_TITLE_LENGTH = 100

_ACTIONS: dict[type[object], ActionType] = {
    ShellExec: "command",
    ModifyFile: "file_write",
    ReadFile: "file_read",
    CodeSearch: "file_read",
    HttpRequest: "network",
}


def action_type_for(payload: NormalizedPayload) -> ActionType:
    """The coarse class of a call: ``command``, ``file_write``, ``file_read``, ``network``,
    or ``other`` (sub-agents, tasks, plans, questions, MCP and unknown tools)."""
    return _ACTIONS.get(type(payload), "other")


def _short(text: str, limit: int = _MAX) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(first) > limit or len(lines) > 1:
        return first[: limit - 1].rstrip() + "…"
    return first


def _path(path: str, work_dir: str | None) -> str:
    if work_dir:
        base = work_dir.rstrip("/") + "/"
        if path.startswith(base) and len(path) > len(base):
            return path[len(base) :]
    return path or "file"


def _read_title(payload: ReadFile, work_dir: str | None) -> str:
    title = f"Read {_path(payload.file_path, work_dir)}"
    offset, limit = payload.offset, payload.limit
    if payload.pages:
        return f"{title} (pages {payload.pages})"
    if limit is not None and limit > 0:
        start = offset if offset is not None and offset > 0 else 1
        return f"{title} (lines {start}\u2013{start + limit - 1})"
    if offset is not None and offset > 1:
        return f"{title} (from line {offset})"
    return title


def _modify_title(payload: ModifyFile, work_dir: str | None) -> str:
    path = _path(payload.file_path, work_dir)
    kinds = [m.type for m in payload.mutations]
    if payload.tool == "Write":
        return f"Create {path}" if kinds == ["create"] else f"Write {path}"
    if payload.tool == "NotebookEdit":
        verbs = {"create": "Insert cell in", "delete": "Delete cell in"}
        return f"{verbs.get(kinds[0] if kinds else '', 'Edit')} {path}"
    if len(kinds) > 1:
        return f"Edit {path} ({len(kinds)} edits)"
    return f"Edit {path}"


def _shell_title(payload: ShellExec) -> str:
    shell = f" {payload.shell_id}" if payload.shell_id else ""
    if payload.operation == "read_output":
        return f"Read output of{shell or ' background shell'}"
    if payload.operation == "kill":
        return f"Stop{shell or ' background shell'}"
    command = _short(payload.command)
    title = f"Run `{command}`" if command else "Run a command"
    return f"{title} in background" if payload.background else title


def _search_title(payload: CodeSearch, work_dir: str | None) -> str:
    where = f" in {_path(payload.path, work_dir)}" if payload.path else ""
    pattern = _short(payload.pattern or payload.query or "", 40)
    if payload.tool == "Glob":
        return f"Find `{pattern}`{where}" if pattern else f"Find files{where}"
    return f"Search `{pattern}`{where}" if pattern else f"Search files{where}"


def _todos_title(payload: ManageTodos) -> str:
    task = payload.items[0].id if payload.items else None
    ref = f" #{task}" if task else ""
    match payload.operation:
        case "write":
            n = len(payload.items)
            return f"Update todos ({n} item{'s' if n != 1 else ''})"
        case "update":
            return f"Update task{ref}"
        case "get":
            return f"Get task{ref}"
        case "list":
            return "List tasks"
    return f"{payload.operation.capitalize()} tasks"


def title_for(payload: NormalizedPayload, *, work_dir: str | None = None) -> str:
    """A short human title for a call (``"Edit src/app.py"``, ``"Run `pytest -q`"``).

    Args:
        payload: Any payload.
        work_dir: When given, file paths under it are shown relative to it.

    Returns:
        One line of text, never empty and never an empty placeholder (a call without its
        command, pattern or URL gets a generic phrase: ``"Run a command"``, ``"Search
        files"``, ``"Fetch a web page"``); commands and queries are cut to about 60
        characters and the whole title to :data:`MAX_TITLE_LENGTH`.
    """
    # Runs of whitespace become one space: str.split() splits on exactly what the regex
    # ``\s+`` matches in a str (str.isspace), at a fifth of the cost of re.sub + strip.
    title = " ".join(_title(payload, work_dir).split()) or "Tool call"
    if len(title) > MAX_TITLE_LENGTH:
        title = title[: MAX_TITLE_LENGTH - 1].rstrip() + "…"
    return title


def _title(payload: NormalizedPayload, work_dir: str | None) -> str:
    match payload:
        case ReadFile():
            return _read_title(payload, work_dir)
        case ModifyFile():
            return _modify_title(payload, work_dir)
        case ShellExec():
            return _shell_title(payload)
        case CodeSearch():
            return _search_title(payload, work_dir)
        case HttpRequest(method="SEARCH"):
            query = _short(payload.query or "", 50)
            return f"Search the web for `{query}`" if query else "Search the web"
        case HttpRequest():
            url = _short(payload.url or "")
            return f"Fetch {url}" if url else "Fetch a web page"
        case SubagentTask():
            what = payload.description or _short(payload.prompt or "")
            return f"Agent: {what}" if what else "Run agent"
        case CreateTask():
            task = _short(payload.title)
            return f"Create task: {task}" if task else "Create task"
        case ManageTodos():
            return _todos_title(payload)
        case ShowPlan():
            return "Present plan"
        case AskUser():
            first = payload.questions[0].question if payload.questions else ""
            return f"Ask: {_short(first)}" if first else "Ask the user"
        case Misc():
            details = _short(payload.details or "")
            return f"{payload.label}: {details}" if details else payload.label
        case Generic(server=str() as server):
            return f"{payload.name or 'Unknown tool'} ({server})"
        case Generic():
            return payload.name or payload.tool or "Unknown tool"
    return "Tool call"
