"""The ACP agent: JSON-RPC requests from an editor served through a :class:`SessionBackend`.

:class:`AcpAgent` is transport-agnostic: :meth:`AcpAgent.serve` reads byte chunks from any
async iterator and writes whole lines through an async ``send`` callable (the stdio wiring is
in :mod:`adapter.commands.acp`). The JSON-RPC plumbing (a task per request, errors instead of
stack traces, our own requests to the editor) is :class:`~adapter.acp.peer.JsonRpcPeer`; the
open sessions, followed from the backend to the editor with their permission round trips, are
:class:`~adapter.acp.sessions.SessionRelay`. This module holds the ACP methods. When the input
ends, every session is closed (its CLI reaped).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from claudecode import __version__

from ..backend import BackendUnavailableError, SessionBackend, SessionSpec, history_dir_of
from ..errors import describe
from ..events import SessionStatus
from ..history.transcripts import (
    HistoryIndex,
    HistoryNotFoundError,
    config_dir,
    find_session_file,
    load_events,
)
from .config_options import config_options, effort_levels
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    RESOURCE_NOT_FOUND,
    JsonRpcError,
    Notification,
)
from .params import (
    CancelParams,
    CloseParams,
    DeleteSessionParams,
    InitializeParams,
    ListSessionsParams,
    LoadSessionParams,
    NewSessionParams,
    PromptParams,
    SetConfigOptionParams,
    SetModeParams,
    cli_mcp_servers,
    decode_params,
    prompt_input,
)
from .peer import JsonRpcPeer, Send, Then
from .sessions import AcpSession, SessionRelay, Turn, unavailable_error
from .translate import SESSION_MODES, UpdateTranslator, mode_state, stop_reason

__all__ = ("AcpAgent", "AgentOptions", "PROTOCOL_VERSION")

#: The ACP protocol version this agent speaks.
PROTOCOL_VERSION = 1

#: Requests served at once (each session runs at most one prompt; the rest are short).
_MAX_REQUESTS = 256

#: Stored sessions per session/list page.
#: Per backend (by identity), the stored sessions an agent of this process is loading: from
#: the check that the backend runs none of them to the backend listing the new session.
#: Agents on one in-process backend share it, so two loads of one session at once cannot
#: both pass the check; across cluster gateways the backend's own listing is what they have.
_LOADING: dict[int, set[str]] = {}
_PAGE = 100


@dataclass(frozen=True)
class AgentOptions:
    """What every session of this agent starts with.

    ``model``: the CLI model (``None``: the CLI's default). ``policy``: a built-in policy name
    (``supervised``, ``autonomous``, ``plan``; ``None``: the backend's default).
    ``permission_mode``: the CLI's starting mode. ``cwd``: run every session there instead of
    the directory the editor sends. ``cancel_grace``: seconds a cancelled
    turn may take to end before the prompt answers ``cancelled`` anyway. ``env``: where to
    look for the CLI's history files (``HOME``, ``CLAUDE_CONFIG_DIR``; default: ours), unless
    the backend keeps the history of its sessions itself (such as a cluster gateway; see
    :func:`~adapter.history_dir_of`): then there. ``backend_names_sessions``: the backend
    chooses each new CLI session's id and answers ``create`` with it (a
    :class:`~adapter.LocalBackend` with ``name_sessions``, as ``acp --warm`` runs): a new
    session asks for no id, so it can take a CLI started ahead (whose id is chosen already),
    and the editor's session id is the one the backend chose.
    """

    model: str | None = None
    policy: str | None = None
    permission_mode: str | None = None
    cwd: str | None = None
    cancel_grace: float = 10.0
    env: dict[str, str] | None = None
    backend_names_sessions: bool = False


class AcpAgent:
    """Serves ACP (protocol version 1) for the sessions of ``backend``."""

    def __init__(
        self, backend: SessionBackend, send: Send, options: AgentOptions | None = None
    ) -> None:
        self.backend = backend
        self.options = options or AgentOptions()
        self._peer = JsonRpcPeer(
            send,
            {  # method -> handler
                "initialize": self._initialize,
                "authenticate": self._authenticate,
                "session/new": self._new_session,
                "session/load": self._load_session,
                "session/resume": self._resume_session,
                "session/delete": self._delete_session,
                "session/fork": self._fork_session,
                "session/list": self._list_sessions,
                "session/prompt": self._prompt,
                "session/set_mode": self._set_mode,
                "session/set_config_option": self._set_config_option,
                "session/close": self._close_session,
            },
            max_requests=_MAX_REQUESTS,
            on_notification=self._notification,
            known_error=_known_error,
            on_shutdown=self._shutdown,
        )
        self._relay = SessionRelay(backend, self._peer, cancel_grace=self.options.cancel_grace)
        self._client_capabilities: dict[str, Any] = {}
        self._history: HistoryIndex | None = None

    async def serve(self, chunks: AsyncIterator[bytes]) -> None:
        """Serve until ``chunks`` ends, then close every session."""
        await self._peer.serve(chunks)

    async def handle_line(self, line: bytes) -> None:
        """Act on one incoming line (requests run in their own task)."""
        await self._peer.handle_line(line)

    # -- notifications and the end ----------------------------------------------------------

    async def _notification(self, note: Notification) -> None:
        if note.method == "session/cancel":
            try:
                params = decode_params(note.params, CancelParams)
            except JsonRpcError:
                return
            session = self._relay.sessions.get(params.session_id)
            if session is not None:
                await self._relay.cancel(session)
        elif note.method == "$/cancel_request" and isinstance(note.params, dict):
            # Only a prompt is worth cancelling (it answers `cancelled`); other requests are
            # short and simply finish.
            rid = note.params.get("requestId")
            req = self._peer.running.get(rid) if isinstance(rid, str | int) else None
            target = req.params.get("sessionId") if req and req.method == "session/prompt" else None
            session = self._relay.sessions.get(target) if isinstance(target, str) else None
            if session is not None:
                await self._relay.cancel(session)

    async def _shutdown(self) -> None:
        await self._relay.end_all()

    # -- methods -------------------------------------------------------------------------

    async def _initialize(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, InitializeParams)
        self._client_capabilities = p.client_capabilities
        elicitation = p.client_capabilities.get("elicitation")
        self._relay.elicitation_form = isinstance(elicitation, dict) and isinstance(
            elicitation.get("form"), dict
        )
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": True},
                "sessionCapabilities": {
                    "close": {},
                    "list": {},
                    "resume": {},
                    "additionalDirectories": {},
                    "fork": {},  # unstable in ACP v1
                    # Deleting removes the transcript from the history this agent reads: a
                    # backend that keeps its own copy (a cluster gateway) cannot offer it.
                    **({"delete": {}} if history_dir_of(self.backend) is None else {}),
                },
            },
            "agentInfo": {
                "name": "claudecode-bridge",
                "title": "Claude Code (claudecode-bridge)",
                "version": __version__,
            },
            "authMethods": [],
        }

    async def _authenticate(self, params: Any) -> dict[str, Any]:
        # The CLI authenticates itself (its login or ANTHROPIC_API_KEY); nothing to do here.
        return {}

    def _history_config(self) -> Path:
        """Where the stored sessions are, laid out like the CLI's config directory."""
        # Sessions that run elsewhere (on a cluster's workers) have their transcripts there,
        # not in this machine's CLI directory: the backend keeps a copy of them.
        return history_dir_of(self.backend) or config_dir(self.options.env)

    def _spec(
        self, cwd: str, mcp: list[dict[str, Any]], add_dirs: list[str], **changes: Any
    ) -> SessionSpec:
        if not all(os.path.isabs(d) for d in add_dirs):
            raise JsonRpcError(
                INVALID_PARAMS, "Invalid params: additionalDirectories: not absolute"
            )
        return SessionSpec(
            cwd=cwd,
            model=self.options.model,
            policy=self.options.policy,
            permission_mode=self.options.permission_mode,
            mcp_servers=cli_mcp_servers(mcp),
            add_dirs=add_dirs,
            origin="acp",
            **changes,
        )

    def _config_options(self, session: AcpSession) -> list[dict[str, Any]]:
        return config_options(
            model=session.model,
            configured_model=self.options.model,
            models=session.models,
            effort=session.effort,
        )

    def _opened(self, session: AcpSession) -> dict[str, Any]:
        return {
            "modes": mode_state(session.mode),
            "configOptions": self._config_options(session),
        }

    async def _new_session(self, params: Any) -> Then:
        p = decode_params(params, NewSessionParams)
        cwd = self.options.cwd or p.cwd
        if self.options.backend_names_sessions:
            spec = self._spec(cwd, p.mcp_servers, p.additional_directories)
            session = await self._relay.start(spec, None)
        else:
            session_id = str(uuid.uuid4())
            spec = self._spec(
                cwd, p.mcp_servers, p.additional_directories, cli_session_id=session_id
            )
            session = await self._relay.start(spec, session_id)
        # Updates (the slash commands first) only after the editor knows the session id.
        return Then(
            {"sessionId": session.id, **self._opened(session)}, lambda: self._relay.follow(session)
        )

    async def _load_session(self, params: Any) -> Then:
        return await self._reopen(params, replay=True)

    async def _resume_session(self, params: Any) -> Then:
        # As session/load, without sending the conversation again (the editor has it).
        return await self._reopen(params, replay=False)

    async def _reopen(self, params: Any, *, replay: bool) -> Then:
        p = decode_params(params, LoadSessionParams)
        if p.session_id in self._relay.sessions:
            raise JsonRpcError(INVALID_REQUEST, f"session {p.session_id} is open already")
        config = self._history_config()
        cwd = self.options.cwd or p.cwd
        elsewhere = False
        try:
            try:
                path = find_session_file(p.session_id, cwd, config=config)
            except HistoryNotFoundError:
                path = find_session_file(p.session_id, None, config=config)
                elsewhere = True
        except HistoryNotFoundError:
            raise JsonRpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: session {p.session_id}"
            ) from None
        # The whole conversation goes to the editor before the answer, as ACP asks.
        history = await anyio.to_thread.run_sync(load_events, path)
        if elsewhere:
            # The CLI resumes a session only from its own project directory: run it where the
            # transcript says it ran.
            recorded = next((e.cwd for e in history if isinstance(e, SessionStatus)), None)
            cwd = recorded or cwd
        spec = self._spec(cwd, p.mcp_servers, p.additional_directories, resume=p.session_id)
        refused = JsonRpcError(
            INVALID_REQUEST, f"session {p.session_id} is open already (elsewhere)"
        )
        # Being loaded by another agent on this backend right now: it is not listed yet.
        loading = _LOADING.setdefault(id(self.backend), set())
        if p.session_id in loading:
            raise refused
        loading.add(p.session_id)
        try:
            # Open in another agent on the same backend (another editor on the cluster): two
            # CLIs resuming one conversation would both append to it. A backend lists a
            # resumed session under its CLI session id from the start.
            for info in await self.backend.list():
                if info.cli_session_id == p.session_id and info.state not in (
                    "closed",
                    "errored",
                ):
                    raise refused
            if replay:
                translator = UpdateTranslator(cwd=spec.cwd, replay=True)
                updates = [u for event in history for u in translator.updates(event)]
                await self._relay.notify_updates(p.session_id, updates)
            # Under an id of its own in the backend: the session may have run there under the
            # ACP id before (a cluster keeps a closed session's record and events a while).
            backend_id = f"{p.session_id}-{uuid.uuid4().hex[:8]}"
            session = await self._relay.start(spec, p.session_id, backend_id=backend_id)
        finally:
            loading.discard(p.session_id)
            if not loading and _LOADING.get(id(self.backend)) is loading:
                del _LOADING[id(self.backend)]
        return Then(self._opened(session), lambda: self._relay.follow(session))

    async def _list_sessions(self, params: Any) -> dict[str, Any]:
        p = decode_params(params if params is not None else {}, ListSessionsParams)
        try:
            offset = int(p.cursor) if p.cursor else 0
        except ValueError:
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: unknown cursor") from None
        if self._history is None:
            self._history = HistoryIndex(self._history_config())
        index = self._history
        cwd = self.options.cwd or p.cwd
        stored = await anyio.to_thread.run_sync(lambda: index.list(cwd))
        listed = []
        for s in stored:
            where = s.cwd or cwd
            if not where:
                continue  # ACP needs a cwd to load it in
            info: dict[str, Any] = {"sessionId": s.session_id, "cwd": where}
            if s.title:
                info["title"] = s.title
            if s.last_activity:
                stamp = datetime.fromtimestamp(s.last_activity, UTC)
                info["updatedAt"] = stamp.isoformat().replace("+00:00", "Z")
            listed.append(info)
        page = listed[offset : offset + _PAGE]
        result: dict[str, Any] = {"sessions": page}
        if offset + _PAGE < len(listed):
            result["nextCursor"] = str(offset + _PAGE)
        return result

    async def _prompt(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, PromptParams)
        session = self._relay.get(p.session_id)
        text, images = prompt_input(p.prompt)
        if session.turn is not None:
            raise JsonRpcError(INVALID_REQUEST, "a prompt is already running in this session")
        turn = session.turn = Turn()
        try:
            try:
                await self.backend.prompt(session.backend_id, text, images=images)
            except BackendUnavailableError:
                if turn.failure is not None:
                    # The relay counted this turn as running on, but it never started: no
                    # `complete` of it will come to skip.
                    session.orphaned_turns -= 1
                raise
            await turn.done.wait()
        finally:
            session.turn = None
        if turn.cancelled:
            return {"stopReason": "cancelled"}
        if turn.failure is not None:
            raise turn.failure
        if turn.result is None:
            raise JsonRpcError(INTERNAL_ERROR, turn.error or "the session ended during the turn")
        complete = turn.result
        reason = stop_reason(complete, cancelled=False)
        if complete.is_error and reason == "end_turn":
            failure = complete.error.message if complete.error is not None else None
            detail = failure or turn.error or complete.result
            raise JsonRpcError(INTERNAL_ERROR, detail or f"the turn failed: {complete.subtype}")
        return {"stopReason": reason}

    async def _set_mode(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, SetModeParams)
        session = self._relay.get(p.session_id)
        if all(m["id"] != p.mode_id for m in SESSION_MODES):
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: unknown mode {p.mode_id!r}")
        await self.backend.set_permission_mode(session.backend_id, p.mode_id)
        session.mode = p.mode_id
        return {}

    async def _set_config_option(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, SetConfigOptionParams)
        session = self._relay.get(p.session_id)
        if p.config_id not in ("model", "effort") or not isinstance(p.value, str) or not p.value:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid params: no option {p.config_id!r}")
        value = None if p.value == "default" else p.value
        if p.config_id == "model":
            await self.backend.set_model(session.backend_id, value)
            session.model = value
        else:
            levels = effort_levels(session.model, session.models)
            if value is not None and value not in levels:
                known = ", ".join(["default", *levels]) if levels else "none for this model"
                raise JsonRpcError(
                    INVALID_PARAMS, f"Invalid params: effort {p.value!r} (values: {known})"
                )
            await self.backend.set_effort(session.backend_id, value)
            session.effort = value
        return {"configOptions": self._config_options(session)}

    async def _fork_session(self, params: Any) -> Then:
        # Unstable in ACP v1: a new session that continues a stored one's conversation under
        # a new id (the CLI's --resume with --fork-session, named up front with --session-id);
        # the stored session is left as it was.
        p = decode_params(params, LoadSessionParams)
        cwd = self.options.cwd or p.cwd
        try:  # the CLI resumes a session from its own project only
            find_session_file(p.session_id, cwd, config=self._history_config())
        except HistoryNotFoundError:
            raise JsonRpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: session {p.session_id} in {cwd}"
            ) from None
        fork_id = str(uuid.uuid4())
        spec = self._spec(
            cwd,
            p.mcp_servers,
            p.additional_directories,
            resume=p.session_id,
            fork=True,
            cli_session_id=fork_id,
        )
        session = await self._relay.start(spec, fork_id)
        result = {"sessionId": fork_id, **self._opened(session)}
        return Then(result, lambda: self._relay.follow(session))

    async def _delete_session(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, DeleteSessionParams)
        if history_dir_of(self.backend) is not None:
            raise JsonRpcError(INVALID_REQUEST, "this agent's backend keeps the history itself")
        if p.session_id in self._relay.sessions or any(
            info.cli_session_id == p.session_id and info.state not in ("closed", "errored")
            for info in await self.backend.list()
        ):
            raise JsonRpcError(INVALID_REQUEST, f"session {p.session_id} is open: close it first")
        try:
            path = find_session_file(p.session_id, None, config=self._history_config())
        except HistoryNotFoundError:
            raise JsonRpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: session {p.session_id}"
            ) from None
        await anyio.to_thread.run_sync(path.unlink, True)
        self._history = None  # listed no more
        return {}

    async def _close_session(self, params: Any) -> dict[str, Any]:
        p = decode_params(params, CloseParams)
        await self._relay.end(self._relay.get(p.session_id))
        return {}


def _known_error(exc: Exception) -> JsonRpcError | None:
    """The answer to an error of a session or of the CLI (others are bugs), through
    :func:`adapter.errors.describe` as every front end answers."""
    info = describe(exc)
    if info.internal:
        return None
    if isinstance(exc, BackendUnavailableError):
        return unavailable_error(exc)
    if info.http_status == 404:
        return JsonRpcError(RESOURCE_NOT_FOUND, info.message)
    return JsonRpcError(INTERNAL_ERROR, info.message)
