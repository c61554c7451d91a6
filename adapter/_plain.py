"""Stateless conversions: one CLI message (or result) in, its event(s) out.

Everything here is a pure function of its arguments; the stateful part of the translation
(turns, text de-duplication, tool calls by id) lives in :mod:`adapter.translate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from claudecode.messages import (
    CanUseToolRequest,
    HookCallbackRequest,
    InboundControlRequest,
    MalformedLine,
    RateLimitEvent,
    ResultMessage,
    SystemApiRetry,
    SystemBackgroundTasksChanged,
    SystemCompactBoundary,
    SystemMessage,
    SystemPermissionDenied,
    SystemTaskNotification,
    SystemTaskProgress,
    SystemTaskStarted,
    SystemTaskUpdated,
    UnknownMessage,
)
from claudecode.results import ModelInfo
from normalize import action_type_for, normalize_tool_use, title_for

from .events import (
    ApiRetry,
    CompactBoundary,
    Complete,
    ErrorEvent,
    ErrorKind,
    Event,
    ModelChoice,
    PermissionDenied,
    PermissionOption,
    PermissionRequest,
    Question,
    QuestionOption,
    QuestionRequest,
    RateLimit,
    Raw,
    TaskEvent,
    TokenUsage,
    TurnError,
)

__all__ = (
    "api_retry",
    "compact_boundary",
    "complete_of",
    "malformed",
    "permission_denied",
    "model_choices",
    "permission_event",
    "question_event",
    "rate_limit",
    "raw_of",
    "result_error",
    "task_event",
    "unknown",
)

ALLOW: Final = PermissionOption(id="allow", label="Allow")
ALLOW_ALWAYS: Final = PermissionOption(id="allow_always", label="Always allow")
DENY: Final = PermissionOption(id="deny", label="Deny")


def _decode_raw(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw)
    except Exception:
        return raw.decode("utf-8", "replace")


def raw_of(message: object) -> Raw:
    """A modelled message without an event of its own, passed on as :class:`Raw`."""
    data = msgspec.to_builtins(message)
    tag = getattr(type(message), "__struct_config__", None)
    name = str(tag.tag) if tag is not None and tag.tag is not None else type(message).__name__
    if isinstance(message, SystemMessage):
        return Raw(message_type="system", subtype=name, data=data)
    return Raw(message_type=name, data=data)


def unknown(msg: UnknownMessage) -> list[Event]:
    """An unknown line: :class:`Raw` with the decoded JSON (or the text if undecodable)."""
    return [Raw(message_type=msg.type, subtype=msg.subtype, data=_decode_raw(msg.raw))]


def malformed(msg: MalformedLine) -> list[Event]:
    """A bad line: a ``protocol`` :class:`ErrorEvent` naming the line; the stream goes on."""
    return [
        ErrorEvent(message=f"line {msg.line_number}: {msg.reason}: {msg.error}", kind="protocol")
    ]


def api_retry(msg: SystemApiRetry) -> list[Event]:
    """``system/api_retry`` -> :class:`ApiRetry`."""
    return [
        ApiRetry(
            attempt=msg.attempt or 0,
            max_retries=msg.max_retries,
            delay_ms=msg.retry_delay_ms,
            error_status=msg.error_status,
            error=msg.error,
        )
    ]


def compact_boundary(msg: SystemCompactBoundary) -> list[Event]:
    """``system/compact_boundary`` -> :class:`CompactBoundary`."""
    meta = msg.compact_metadata
    return [
        CompactBoundary(
            trigger=meta.trigger if meta else None, pre_tokens=meta.pre_tokens if meta else None
        )
    ]


def permission_denied(msg: SystemPermissionDenied) -> list[Event]:
    """``system/permission_denied`` -> :class:`PermissionDenied`."""
    return [
        PermissionDenied(
            tool_name=msg.tool_name or "", tool_call_id=msg.tool_use_id, message=msg.message or ""
        )
    ]


def rate_limit(msg: RateLimitEvent) -> list[Event]:
    """``rate_limit_event`` -> :class:`RateLimit`, but nothing for the routine ``allowed``."""
    info = msg.rate_limit_info
    if not info.status or info.status == "allowed":
        return []
    return [
        RateLimit(
            status=info.status,
            resets_at=info.resets_at,
            rate_limit_type=info.rate_limit_type,
            utilization=info.utilization,
        )
    ]


# ---------------------------------------------------------------------------- result


def complete_of(msg: ResultMessage, model: str | None, last_uuid: str | None) -> Complete:
    """The :class:`Complete` of a ``result`` line."""
    usage = msg.usage
    tokens = TokenUsage()
    if usage is not None:
        tokens = TokenUsage(
            input=usage.input_tokens or 0,
            output=usage.output_tokens or 0,
            cache_read=usage.cache_read_input_tokens or 0,
            cache_creation=usage.cache_creation_input_tokens or 0,
        )
    return Complete(
        is_error=msg.is_error,
        subtype=msg.subtype,
        result=msg.result,
        cost_usd=msg.total_cost_usd,
        duration_ms=msg.duration_ms,
        duration_api_ms=msg.duration_api_ms,
        num_turns=msg.num_turns,
        tokens=tokens,
        stop_reason=msg.stop_reason,
        terminal_reason=msg.terminal_reason,
        model=model,
        last_message_uuid=last_uuid,
        permission_denials=[msgspec.to_builtins(d) for d in msg.permission_denials],
        error=result_error(msg) if msg.is_error else None,
    )


def result_error(msg: ResultMessage) -> TurnError:
    """What went wrong in an error result (``Complete.error``, and the :class:`ErrorEvent`
    that follows the :class:`Complete`).

    ``api_error`` (with the HTTP status) when the API failed, ``interrupted`` for an
    ``error_during_execution`` that was aborted, ``max_turns`` for ``error_max_turns``,
    ``execution`` otherwise.
    """
    kind: ErrorKind = "execution"
    if msg.api_error_status is not None or msg.terminal_reason == "api_error":
        kind = "api_error"
    elif msg.subtype == "error_max_turns":
        kind = "max_turns"
    elif msg.subtype == "error_during_execution" and (msg.terminal_reason or "").startswith(
        "aborted"
    ):
        kind = "interrupted"
    text = msg.result
    if not text:
        text = "interrupted" if kind == "interrupted" else "; ".join(msg.errors or [])
    return TurnError(
        message=text or f"turn ended with {msg.subtype}",
        kind=kind,
        status=msg.api_error_status if kind == "api_error" else None,
    )


# ----------------------------------------------------------------------- permissions


def permission_event(
    req: InboundControlRequest,
    parent_of: Callable[[str | None, str | None], str | None],
    work_dir: str | None,
) -> PermissionRequest:
    """The :class:`PermissionRequest` of a control request.

    ``parent_of(tool_use_id, agent_id)`` finds the sub-agent call the tool belongs to.
    ``allow_always`` is offered only when the CLI sent ``permission_suggestions``. A
    ``hook_callback`` gives the tool named in the hook's input; other subtypes an empty name.
    """
    body = req.request
    tool_name: str = ""
    tool_input: dict[str, Any] = {}
    tool_use_id: str | None = None
    agent_id: str | None = None
    suggestions: list[Any] = []
    blocked_path: str | None = None
    reason: str | None = None
    if isinstance(body, CanUseToolRequest):
        tool_name, tool_input = body.tool_name, dict(body.input)
        tool_use_id, agent_id = body.tool_use_id, body.agent_id
        suggestions = list(body.permission_suggestions or [])
        blocked_path, reason = body.blocked_path, body.decision_reason
    elif isinstance(body, HookCallbackRequest):
        raw_name, raw_input = body.input.get("tool_name"), body.input.get("tool_input")
        tool_name = raw_name if isinstance(raw_name, str) else ""
        tool_input = dict(raw_input) if isinstance(raw_input, dict) else {}
        tool_use_id = body.tool_use_id
    payload = normalize_tool_use(tool_name, tool_input)
    return PermissionRequest(
        pending_id=req.request_id,
        tool_name=tool_name,
        input=tool_input,
        normalized=payload,
        title=title_for(payload, work_dir=work_dir),
        action_type=action_type_for(payload),
        tool_call_id=tool_use_id,
        suggestions=suggestions,
        blocked_path=blocked_path,
        decision_reason=reason,
        options=[ALLOW, ALLOW_ALWAYS, DENY] if suggestions else [ALLOW, DENY],
        parent_tool_call_id=parent_of(tool_use_id, agent_id),
    )


def model_choices(models: Sequence[ModelInfo]) -> list[ModelChoice]:
    """The models of the CLI's ``initialize`` answer (effort levels only where supported)."""
    return [
        ModelChoice(
            value=m.value,
            name=m.display_name or "",
            description=m.description or "",
            effort_levels=list(m.supported_effort_levels or []) if m.supports_effort else [],
        )
        for m in models
        if m.value
    ]


def _question(raw: object) -> Question | None:
    if not isinstance(raw, dict):
        return None
    text, header, raw_options = raw.get("question"), raw.get("header"), raw.get("options")
    options: list[QuestionOption] = []
    for option in raw_options if isinstance(raw_options, list) else ():
        if isinstance(option, dict) and isinstance(label := option.get("label"), str):
            description = option.get("description")
            options.append(
                QuestionOption(
                    label=label, description=description if isinstance(description, str) else ""
                )
            )
    if not isinstance(text, str) or not text or not options:
        return None
    return Question(
        question=text,
        header=header if isinstance(header, str) else "",
        options=options,
        multi_select=raw.get("multiSelect") is True,
    )


def question_event(request: PermissionRequest) -> QuestionRequest | None:
    """The :class:`QuestionRequest` of an ``AskUserQuestion`` permission prompt, or ``None``
    when its input holds no well-formed question (text and at least one labelled option),
    which the session refuses as the CLI's own dialog would have nothing to show."""
    raw = request.input.get("questions")
    questions = [q for q in map(_question, raw) if q is not None] if isinstance(raw, list) else []
    if not questions:
        return None
    return QuestionRequest(
        pending_id=request.pending_id,
        questions=questions,
        tool_call_id=request.tool_call_id,
        parent_tool_call_id=request.parent_tool_call_id,
    )


# ----------------------------------------------------------------------------- tasks


def _details(**fields: Any) -> dict[str, Any] | None:
    kept = {k: msgspec.to_builtins(v) for k, v in fields.items() if v is not None}
    return kept or None


def task_event(msg: SystemMessage, tool_call_id: str | None = None) -> TaskEvent:
    """The :class:`TaskEvent` of a ``system/task_*`` or ``background_tasks_changed`` line.

    ``tool_call_id`` is the ``Agent`` tool call that started the task, for lines that do not
    say (``task_updated`` carries only the task id).
    """
    if isinstance(msg, SystemTaskStarted):
        return TaskEvent(
            phase="started",
            task_id=msg.task_id,
            tool_call_id=msg.tool_use_id or tool_call_id,
            description=msg.description,
            task_type=msg.task_type or msg.subagent_type,
            background=msg.is_backgrounded,
            details=_details(
                subagent_type=msg.subagent_type,
                prompt=msg.prompt,
                run_id=msg.run_id,
                spawn_depth=msg.spawn_depth,
            ),
        )
    if isinstance(msg, SystemTaskProgress):
        return TaskEvent(
            phase="progress",
            task_id=msg.task_id,
            tool_call_id=msg.tool_use_id or tool_call_id,
            description=msg.description,
            task_type=msg.subagent_type,
            last_tool_name=msg.last_tool_name,
            details=_details(usage=msg.usage, run_id=msg.run_id),
        )
    if isinstance(msg, SystemTaskUpdated):
        status = msg.patch.get("status")
        return TaskEvent(
            phase="updated",
            task_id=msg.task_id,
            tool_call_id=tool_call_id,
            status=status if isinstance(status, str) else None,
            details=_details(patch=dict(msg.patch) or None, run_id=msg.run_id),
        )
    if isinstance(msg, SystemTaskNotification):
        return TaskEvent(
            phase="notification",
            task_id=msg.task_id,
            tool_call_id=msg.tool_use_id or tool_call_id,
            status=msg.status,
            summary=msg.summary,
            details=_details(output_file=msg.output_file, usage=msg.usage, run_id=msg.run_id),
        )
    tasks = msg.tasks if isinstance(msg, SystemBackgroundTasksChanged) else []
    return TaskEvent(phase="changed", details={"tasks": msgspec.to_builtins(tasks)})
