"""The normalized payloads: one frozen msgspec Struct per kind, tagged by ``kind``.

A UI renders these instead of Claude Code's tool names and argument shapes. Every payload
carries the original tool name in ``tool`` (so a UI can still pick an icon) and, once the
result is known, the error text in ``error`` when the CLI reported the call as failed (a
denied permission, a hook veto, a missing tool).

Fields that are unknown stay at their default and are left out of the JSON
(``omit_defaults``), so a payload built from a ``tool_use`` block is small and grows as
:func:`normalize.normalize_tool_result` fills in the output.

Consumers ``match`` on the classes::

    match payload:
        case ShellExec(command=cmd, output=ShellOutput(exit_code=code)):
            ...
        case ModifyFile(file_path=path, mutations=mutations):
            ...
"""

# No ``from __future__ import annotations`` here: real annotation objects keep
# ``typing.get_type_hints`` working after ``__init__`` rewrites ``__module__`` to "normalize".
from typing import Any, Literal

import msgspec

__all__ = (
    "ActionType",
    "AskUser",
    "CodeSearch",
    "CreateTask",
    "Generic",
    "HttpRequest",
    "ManageTodos",
    "Misc",
    "ModifyFile",
    "Mutation",
    "MutationType",
    "NormalizedPayload",
    "Payload",
    "Question",
    "QuestionOption",
    "ReadFile",
    "ReadOutput",
    "SearchMatch",
    "SearchOutput",
    "ShellExec",
    "ShellOutput",
    "ShowPlan",
    "SubagentResult",
    "SubagentTask",
    "TodoItem",
    "WebLink",
)

ActionType = Literal["command", "file_write", "file_read", "network", "other"]
"""The coarse class of a call that permission UIs use (see :func:`normalize.action_type_for`)."""

MutationType = Literal["create", "replace", "patch", "delete", "rename"]
"""What a :class:`Mutation` does to its file (or notebook cell)."""


# gc=False (payloads and their parts): frozen, built from JSON values, they cannot take part
# in a reference cycle, and a session keeps hundreds of them in its history; untracked,
# they do not trigger or lengthen the garbage collector's passes.
class _Part(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Base of the untagged parts nested inside payloads."""


class Payload(
    msgspec.Struct, tag_field="kind", frozen=True, kw_only=True, omit_defaults=True, gc=False
):
    """Base class of every payload kind; never instantiated directly.

    Attributes:
        tool: The Claude Code tool name the payload was built from (``"Bash"``, ``"Edit"``,
            ``"mcp__fe__echo"``...).
        error: The error text when the tool result was an error that is not the tool's
            normal output (permission denied, hook veto, unknown tool). ``None`` otherwise.
    """

    tool: str = ""
    error: str | None = None


# --------------------------------------------------------------------------- read_file


class ReadOutput(_Part, frozen=True):
    """What a Read call returned.

    Attributes:
        content: The file text without the ``cat -n`` line-number prefixes.
        line_count: Number of lines returned.
        start_line: First line returned (1-based).
        total_lines: Number of lines in the whole file, when the CLI says.
        truncated: ``content`` was cut to the configured output size.
        language: A language name guessed from the file extension (``"python"``).
        file_type: ``"text"``, ``"image"``, ``"notebook"``, ``"pdf"``... as the CLI says.
    """

    content: str | None = None
    line_count: int | None = None
    start_line: int | None = None
    total_lines: int | None = None
    truncated: bool = False
    language: str | None = None
    file_type: str | None = None


class ReadFile(Payload, tag="read_file", frozen=True):
    """Read a file (the ``Read`` tool).

    Attributes:
        file_path: The path as the model gave it.
        offset: First line to read (1-based), if given.
        limit: Number of lines to read, if given.
        pages: Page range of a PDF (``"1-5"``), if given.
        output: Filled in from the result.
    """

    file_path: str = ""
    offset: int | None = None
    limit: int | None = None
    pages: str | None = None
    output: ReadOutput | None = None


# --------------------------------------------------------------------------- modify_file


class Mutation(_Part, frozen=True):
    """One change to a file (or, for ``NotebookEdit``, to one notebook cell).

    ``type`` is ``create`` (a new file, or a new notebook cell), ``replace`` (the whole file
    overwritten), ``patch`` (part of the file changed: Edit, MultiEdit, a cell's source),
    ``delete`` or ``rename``.

    Attributes:
        type: What the mutation does.
        content: The full new content (``create`` and ``replace``).
        old_content: The text replaced (an Edit's ``old_string``).
        new_content: The replacement text (an Edit's ``new_string``, a cell's new source).
        diff: A unified diff. Before the result it covers only ``old_content`` →
            ``new_content``; after it, the file with real line numbers.
        new_path: The target of a ``rename``.
        start_line: First line (1-based, new file) the diff touches, when known.
        end_line: Last line (1-based, new file) the diff touches, when known.
        replace_all: An Edit that replaces every occurrence.
        cell_id: The notebook cell (``NotebookEdit``).
        cell_type: ``"code"`` or ``"markdown"`` (``NotebookEdit``).
        truncated: ``content`` or ``diff`` was cut to the configured output size.
    """

    type: MutationType
    content: str | None = None
    old_content: str | None = None
    new_content: str | None = None
    diff: str | None = None
    new_path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    replace_all: bool = False
    cell_id: str | None = None
    cell_type: str | None = None
    truncated: bool = False


class ModifyFile(Payload, tag="modify_file", frozen=True):
    """Create or change a file (Write, Edit, MultiEdit, NotebookEdit).

    Attributes:
        file_path: The file (or notebook) path as the model gave it.
        mutations: The changes in order: one for Write and Edit, one per edit for MultiEdit.
    """

    file_path: str = ""
    mutations: tuple[Mutation, ...] = ()


# --------------------------------------------------------------------------- shell_exec


class ShellOutput(_Part, frozen=True):
    """What a shell command produced.

    Attributes:
        exit_code: 0 on success, the ``Exit code N`` of a failed command, ``None`` if unknown
            (interrupted, still running, denied).
        stdout: Standard output (or the combined text when the CLI does not split it).
        stderr: Standard error.
        interrupted: The command was interrupted (timeout or user).
        status: The background shell's status (``running``, ``completed``, ``killed``...).
        truncated: ``stdout`` or ``stderr`` was cut to the configured output size.
    """

    exit_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None
    interrupted: bool = False
    status: str | None = None
    truncated: bool = False


class ShellExec(Payload, tag="shell_exec", frozen=True):
    """Run a shell command, or read or stop a background shell.

    ``operation`` is ``run`` (Bash), ``read_output`` (BashOutput, TaskOutput) or ``kill``
    (KillShell, TaskStop).

    Attributes:
        command: The command line (empty for ``read_output`` and ``kill``).
        work_dir: The working directory, when the input names one.
        description: The model's one-line description of the command.
        timeout: The timeout in milliseconds, if given.
        background: The command was started in the background.
        operation: ``run``, ``read_output`` or ``kill``.
        shell_id: The background shell or task id (input of BashOutput/KillShell, or the id
            a background Bash run returned).
        output: Filled in from the result.
    """

    command: str = ""
    work_dir: str | None = None
    description: str | None = None
    timeout: int | None = None
    background: bool = False
    operation: Literal["run", "read_output", "kill"] = "run"
    shell_id: str | None = None
    output: ShellOutput | None = None


# --------------------------------------------------------------------------- code_search


class SearchMatch(_Part, frozen=True):
    """One line of a content search, or one file of a count search.

    Attributes:
        path: The file, when the output names it.
        line: The 1-based line number, when the output has it.
        text: The matching (or context) line.
        count: The number of matches in ``path`` (``output_mode="count"``).
        context: The line is a context line (``-A``/``-B``/``-C``), not a match.
    """

    path: str | None = None
    line: int | None = None
    text: str | None = None
    count: int | None = None
    context: bool = False


class SearchOutput(_Part, frozen=True):
    """What a search found.

    Attributes:
        files: Matching files (``files_with_matches`` mode and Glob).
        matches: Matching lines (``content`` mode) or per-file counts (``count`` mode).
        file_count: Number of files found, as the CLI reports it.
        match_count: Number of matches, as the CLI reports it.
        truncated: The list was cut, by the CLI's limit or the configured output size.
    """

    files: tuple[str, ...] = ()
    matches: tuple[SearchMatch, ...] = ()
    file_count: int | None = None
    match_count: int | None = None
    truncated: bool = False


class CodeSearch(Payload, tag="code_search", frozen=True):
    """Search file contents (Grep) or file names (Glob).

    Attributes:
        pattern: What is searched for, for both tools: the regular expression searched for
            in file contents (Grep) or the file-name glob (Glob); ``tool`` says which.
        query: The same as ``pattern`` for Grep (kept for older consumers); unset for Glob.
        path: The directory or file searched, if given.
        glob: Grep's file filter (``"*.py"``), if given.
        file_type: Grep's ``type`` filter (``"py"``), if given.
        output_mode: ``files_with_matches``, ``content`` or ``count`` (Grep).
        case_insensitive: Grep's ``-i``.
        output: Filled in from the result.
    """

    query: str | None = None
    pattern: str | None = None
    path: str | None = None
    glob: str | None = None
    file_type: str | None = None
    output_mode: str | None = None
    case_insensitive: bool = False
    output: SearchOutput | None = None


# --------------------------------------------------------------------------- http_request


class WebLink(_Part, frozen=True):
    """One search hit of WebSearch."""

    url: str
    title: str | None = None


class HttpRequest(Payload, tag="http_request", frozen=True):
    """Fetch a URL (WebFetch, ``method="GET"``) or search the web (WebSearch, ``"SEARCH"``).

    Attributes:
        url: The URL fetched (WebFetch).
        method: ``GET`` or ``SEARCH``.
        query: The search query (WebSearch).
        prompt: What the model asked about the fetched page (WebFetch).
        allowed_domains: WebSearch's domain allow-list.
        blocked_domains: WebSearch's domain block-list.
        response: The text the tool returned.
        status_code: The HTTP status (WebFetch), when the CLI reports it.
        is_error: The request failed.
        links: The hits of a web search.
        duration_ms: How long the request took, when the CLI reports it.
        truncated: ``response`` was cut to the configured output size.
    """

    url: str | None = None
    method: str = "GET"
    query: str | None = None
    prompt: str | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    response: str | None = None
    status_code: int | None = None
    is_error: bool = False
    links: tuple[WebLink, ...] = ()
    duration_ms: int | None = None
    truncated: bool = False


# --------------------------------------------------------------------------- subagent_task


class SubagentResult(_Part, frozen=True):
    """What a sub-agent reported.

    Attributes:
        status: ``completed``, ``async_launched`` (a background launch; the report comes
            later) or whatever the CLI says.
        agent_id: The sub-agent id (for SendMessage, and to match later notifications).
        duration_ms: Wall time of the sub-agent.
        total_tokens: Tokens it used.
        tool_use_count: Tool calls it made.
        output: Its final report.
        truncated: ``output`` was cut to the configured output size.
    """

    status: str | None = None
    agent_id: str | None = None
    duration_ms: int | None = None
    total_tokens: int | None = None
    tool_use_count: int | None = None
    output: str | None = None
    truncated: bool = False


class SubagentTask(Payload, tag="subagent_task", frozen=True):
    """Delegate to a sub-agent (Agent, formerly Task).

    Attributes:
        description: The short task description.
        prompt: The full prompt.
        subagent_type: The agent type (``general-purpose``...).
        model: The model asked for, if any.
        background: Launched in the background.
        result: Filled in from the result.
    """

    description: str | None = None
    prompt: str | None = None
    subagent_type: str | None = None
    model: str | None = None
    background: bool = False
    result: SubagentResult | None = None


# --------------------------------------------------------------------------- tasks and todos


class CreateTask(Payload, tag="create_task", frozen=True):
    """Create an entry in the session's task list (TaskCreate).

    Attributes:
        title: The task subject.
        description: The longer description.
        task_id: The id the CLI gave the task (from the result).
    """

    title: str = ""
    description: str | None = None
    task_id: str | None = None


class TodoItem(_Part, frozen=True):
    """One todo or task."""

    id: str | None = None
    description: str = ""
    status: str | None = None
    active_form: str | None = None


class ManageTodos(Payload, tag="manage_todos", frozen=True):
    """Write the todo list (TodoWrite) or read or update tasks (TaskList/TaskGet/TaskUpdate).

    Attributes:
        operation: ``write`` (TodoWrite), ``update``, ``list`` or ``get``.
        items: The todos (for ``write``, the new list; for ``update``/``get``, the task;
            for ``list``, the tasks the result listed).
    """

    operation: str = "write"
    items: tuple[TodoItem, ...] = ()


# --------------------------------------------------------------------------- plans and questions


class ShowPlan(Payload, tag="show_plan", frozen=True):
    """Present a plan for approval (ExitPlanMode).

    Attributes:
        plan: The plan text (Markdown).
        file_path: Where the CLI saved the plan, when it says.
        approved: ``True``/``False`` once the result says whether the plan was accepted.
    """

    plan: str = ""
    file_path: str | None = None
    approved: bool | None = None


class QuestionOption(_Part, frozen=True):
    """One answer a user can pick."""

    label: str
    description: str | None = None


class Question(_Part, frozen=True):
    """One question of AskUserQuestion, with the user's answer once known."""

    question: str
    header: str | None = None
    options: tuple[QuestionOption, ...] = ()
    multi_select: bool = False
    answer: str | None = None


class AskUser(Payload, tag="ask_user", frozen=True):
    """Ask the user multiple-choice questions (AskUserQuestion)."""

    questions: tuple[Question, ...] = ()


# --------------------------------------------------------------------------- generic and misc


class Generic(Payload, tag="generic", frozen=True):
    """Any tool without a dedicated shape, with its raw input.

    For MCP tools (``mcp__<server>__<tool>``) ``server`` and ``name`` are split out; for
    other tools ``name`` is the tool name.

    Attributes:
        name: The tool's own name (without the MCP prefix).
        server: The MCP server name, for MCP tools.
        input: The raw input, as received.
        output: The result text, or the raw result content when it is not text.
        truncated: ``output`` was cut to the configured output size.
    """

    name: str = ""
    server: str | None = None
    input: Any = None
    output: Any = None
    truncated: bool = False


class Misc(Payload, tag="misc", frozen=True):
    """A known tool without a dedicated shape (EnterPlanMode, Skill, ToolSearch...).

    Attributes:
        label: A short human label (``"Use skill pdf"``).
        details: The one argument worth showing, if any.
        input: The raw input, as received.
        output: The result text.
        truncated: ``output`` was cut to the configured output size.
    """

    label: str = ""
    details: str | None = None
    input: Any = None
    output: str | None = None
    truncated: bool = False


NormalizedPayload = (
    ReadFile
    | ModifyFile
    | ShellExec
    | CodeSearch
    | HttpRequest
    | SubagentTask
    | CreateTask
    | ManageTodos
    | ShowPlan
    | AskUser
    | Generic
    | Misc
)
"""Every payload kind; ``match`` on the classes, or switch on the ``kind`` JSON tag."""
