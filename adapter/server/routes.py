"""The core routes: health, readiness and a small REST API over the session backend.

=======  =========================================  ==========================================
GET      ``/healthz``                               liveness (no token needed)
GET      ``/readyz``                                CLI found, sessions, warm pool (503: no CLI)
GET      ``/api/me``                                the caller: ``{name, admin, terminals}``
GET      ``/api/sessions``                          every session (:class:`SessionInfo`)
POST     ``/api/sessions``                          create from a :class:`SessionSpec` body
                                                    (``named_agent``: from that agent)
GET      ``/api/sessions/{id}``                     one session
DELETE   ``/api/sessions/{id}``                     close it
POST     ``/api/sessions/{id}/prompt``              ``{"text": ...}`` starts a turn
POST     ``/api/sessions/{id}/interrupt``           interrupt the running turn
POST     ``/api/sessions/{id}/permissions/{pid}``   answer a permission request (below)
=======  =========================================  ==========================================

A permission answer is ``{"behavior": "allow" | "allow_always" | "deny", "message": "...",
"interrupt": false, "updated_input": {...}}`` (all but ``behavior`` optional).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from claudecode import CLINotFoundError, find_cli

from ..backend import SessionSpec
from ..owners import current_caller
from ..policies import PermissionDecision
from .agents import find_agent
from .app import ServerContext
from .input_checks import SPEC_TEXT_FIELDS
from .json_io import json_response, read_json, reject_nul

__all__ = (
    "core_routes",
    "PermissionAnswer",
    "PromptBody",
    "QuestionAnswer",
)


class PromptBody(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /api/sessions/{id}/prompt``."""

    text: str


class PermissionAnswer(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /api/sessions/{id}/permissions/{pending_id}``."""

    behavior: Literal["allow", "allow_always", "deny"]
    message: str = ""
    interrupt: bool = False
    updated_input: dict[str, Any] | None = None

    def decision(self) -> PermissionDecision:
        """As the adapter's :class:`PermissionDecision`."""
        return PermissionDecision(self.behavior, self.message, self.interrupt, self.updated_input)


class QuestionAnswer(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /api/sessions/{id}/questions/{pending_id}``: ``answers`` (question text -> the
    chosen labels or one free-text answer), or ``decline`` with an optional ``message``."""

    answers: dict[str, list[str]] = {}
    decline: bool = False
    message: str | None = None


#: A body that sets nothing: what a field of a body is compared with to know it was set.
_UNSET = SessionSpec()


def _set_fields(spec: SessionSpec) -> dict[str, Any]:
    """The fields of a request's spec that differ from an empty one's, but ``named_agent``."""
    return {
        name: value
        for name in spec.__struct_fields__
        if name != "named_agent" and (value := getattr(spec, name)) != getattr(_UNSET, name)
    }


def core_routes(ctx: ServerContext) -> list[BaseRoute]:
    """Health, readiness and the session REST API."""
    backend = ctx.backend
    ctx.endpoints.extend([("sessions API", "/api/sessions"), ("health", "/healthz")])

    async def healthz(request: Request) -> Response:
        return json_response({"status": "ok"})

    async def readyz(request: Request) -> Response:
        # Asked of the backend itself: the ownership layer in front of it has no such probes.
        probe = getattr(ctx.inner_backend, "readiness", None)
        if probe is not None:
            # A backend that runs no CLI here (a cluster gateway) says itself.
            state: dict[str, Any] = await probe()
            return json_response(state, 200 if state.get("ready") else 503)
        cli: str | None
        try:
            cli = find_cli(ctx.settings.session_defaults.cli_path)
        except CLINotFoundError:
            cli = None
        sessions = await backend.list()
        live = sum(1 for s in sessions if s.state not in ("closed", "errored"))
        ready = cli is not None
        body: dict[str, Any] = {
            "ready": ready,
            "cli": cli,
            "demo": ctx.settings.demo,
            "sessions": live,
            "max_sessions": ctx.settings.max_sessions,
        }
        pool = getattr(ctx.inner_backend, "pool_status", None)
        if pool is not None:
            # The warm pool: CLIs started ahead (warm), on their way (starting), handed out
            # and still open (in_use), out of size wanted.
            body["pool"] = dataclasses.asdict(pool())
        return json_response(body, 200 if ready else 503)

    async def me(request: Request) -> Response:
        principal = current_caller().principal
        body = {"name": principal.name, "admin": principal.admin, "terminals": principal.terminals}
        return json_response(body)

    async def list_sessions(request: Request) -> Response:
        return json_response(await backend.list())

    async def create_session(request: Request) -> Response:
        spec = await read_json(request, SessionSpec)
        reject_nul(spec, SPEC_TEXT_FIELDS)
        if spec.named_agent is not None:
            # The session starts from that agent's spec (as over /ws); what the body sets
            # replaces the agent's, as it replaces the server's settings without one. The
            # session's own named_agent is the agent's (none for the server's own settings).
            agent = find_agent(ctx.settings.agents, spec.named_agent)
            spec = agent.session_spec(**_set_fields(spec))
        if spec.origin is None:
            spec = msgspec.structs.replace(spec, origin="rest")
        return json_response(await backend.create(spec), 201)

    async def get_session(request: Request) -> Response:
        return json_response(await backend.info(request.path_params["session_id"]))

    async def close_session(request: Request) -> Response:
        session_id = request.path_params["session_id"]
        await backend.close(session_id)
        return json_response(await backend.info(session_id))

    async def prompt(request: Request) -> Response:
        body = await read_json(request, PromptBody)
        await backend.prompt(request.path_params["session_id"], body.text)
        return json_response({"ok": True}, 202)

    async def interrupt(request: Request) -> Response:
        await backend.interrupt(request.path_params["session_id"])
        return json_response({"ok": True})

    async def answer_permission(request: Request) -> Response:
        answer = await read_json(request, PermissionAnswer)
        await backend.answer_permission(
            request.path_params["session_id"],
            request.path_params["pending_id"],
            answer.decision(),
        )
        return json_response({"ok": True})

    async def answer_question(request: Request) -> Response:
        answer = await read_json(request, QuestionAnswer)
        session_id, pending_id = (
            request.path_params["session_id"],
            request.path_params["pending_id"],
        )
        if answer.decline:
            await backend.decline_question(session_id, pending_id, answer.message)
        else:
            await backend.answer_question(session_id, pending_id, answer.answers)
        return json_response({"ok": True})

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/api/me", me, methods=["GET"]),
        Route("/api/sessions", list_sessions, methods=["GET"]),
        Route("/api/sessions", create_session, methods=["POST"]),
        Route("/api/sessions/{session_id}", get_session, methods=["GET"]),
        Route("/api/sessions/{session_id}", close_session, methods=["DELETE"]),
        Route("/api/sessions/{session_id}/prompt", prompt, methods=["POST"]),
        Route("/api/sessions/{session_id}/interrupt", interrupt, methods=["POST"]),
        Route(
            "/api/sessions/{session_id}/permissions/{pending_id}",
            answer_permission,
            methods=["POST"],
        ),
        Route(
            "/api/sessions/{session_id}/questions/{pending_id}",
            answer_question,
            methods=["POST"],
        ),
    ]
