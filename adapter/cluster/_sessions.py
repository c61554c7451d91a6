"""A worker's view of its sessions: spec -> config, session -> registry snapshot."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Mapping

from claudecode.internal import get_logger

from .._local_watch import ui_state
from ..backend import SessionInfo, SessionSpec
from ..config import SessionConfig
from ..session import AgentSession
from ..specs import config_for
from .wire import CreateExpiredError, CreateSession, ErrorBody

__all__ = ("check_deadline", "config_for", "info_of", "marked", "named")

_log = get_logger("claudecode.adapter.cluster.worker")  # the worker logs it


def check_deadline(
    worker_id: str, command: CreateSession, stage: str, session_id: str | None
) -> None:
    """Raise :class:`CreateExpiredError` when the sender of ``command`` has stopped
    waiting for the answer (``stage``: how far the create got, for the log)."""
    if not command.deadline:
        return  # a gateway that predates deadlines
    late = time.time() - command.deadline
    if late <= 0:
        return
    _log.info(
        "cluster.create_expired",
        worker=worker_id,
        session_id=session_id,
        stage=stage,
        late=round(late, 3),
    )
    raise CreateExpiredError(
        ErrorBody(
            "unavailable",
            f"worker {worker_id} refused to start session {session_id!r} {stage}: "
            f"{late:.3f} s past the create's deadline",
        )
    )


def marked(config: SessionConfig, mark: Mapping[str, str]) -> SessionConfig:
    """``config`` with ``mark`` (the orphan watchdog's) in the CLI's environment."""
    return dataclasses.replace(config, env={**config.env, **mark}) if mark else config


def named(config: SessionConfig) -> SessionConfig:
    """``config`` with its CLI session named now when it starts one (a fork too: the CLI
    takes --session-id with --resume --fork-session), so that its transcript is mirrored
    from the start and the registry can resume it elsewhere even if this worker dies before
    the CLI's first message."""
    if config.cli_session_id is None and (config.resume is None or config.fork_session):
        return dataclasses.replace(config, cli_session_id=str(uuid.uuid4()))
    return config


def info_of(
    session: AgentSession,
    *,
    owner: str,
    created_at: float,
    seq_offset: int = 0,
    spec: SessionSpec | None = None,
    title: str | None = None,
    archived: bool = False,
    cost_usd: float = 0.0,
) -> SessionInfo:
    """The registry snapshot of a live session (times as Unix seconds)."""
    now_wall, now_mono = time.time(), time.monotonic()
    config = session.config
    return SessionInfo(
        id=session.id,
        status=session.status,
        state=ui_state(session),
        status_reason=session.status_reason,
        cwd=str(config.cwd) if config.cwd is not None else (spec.cwd if spec else None),
        model=config.model,
        permission_mode=config.permission_mode or config.policy.cli_permission_mode,
        # Known from the CLI's first message; until then, the id it was told to use.
        cli_session_id=session.cli_session_id
        or (None if config.fork_session else config.resume)
        or config.cli_session_id,
        created_at=created_at,
        last_activity=now_wall - (now_mono - session.last_activity),
        pending_permissions=tuple(session.pending_permissions),
        last_seq=session.last_seq + seq_offset,
        owner=owner,
        origin=spec.origin if spec else None,
        named_agent=spec.named_agent if spec else None,
        user=spec.user if spec is not None else None,
        title=title,
        archived=archived,
        cost_usd=cost_usd,
    )
