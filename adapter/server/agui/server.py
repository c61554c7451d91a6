"""The AG-UI endpoint and the CopilotKit runtime, as a route provider of the server.

=======  ============================================  ========================================
POST     ``/agui``                                      RunAgentInput in, SSE out (a run of
                                                        the default agent)
POST     ``/agui/connect``                              the thread's messages, then its live run
POST     ``/agui/stop/{threadId}``                      stop the thread's run
POST     ``/copilotkit`` (and ``/copilotkit/``)         CopilotKit's single-endpoint envelope
                                                        ``{method, params, body}``: ``info``,
                                                        ``agent/connect``, ``agent/run``,
                                                        ``agent/stop``
GET      ``/copilotkit/info``                           RuntimeInfo (CopilotKit then uses REST:)
POST     ``/copilotkit/agent/{agentId}/run``            a run
POST     ``/copilotkit/agent/{agentId}/connect``        connect
POST     ``/copilotkit/agent/{agentId}/stop/{thread}``  stop
POST     ``/copilotkit/agent/{agentId}/suggest``        suggestions: refused (an empty run)
=======  ============================================  ========================================

Agents: the runtime offers the server's agents (:mod:`adapter.server.agents`, the
``--agents`` file; without one the single agent ``default``), each an ``agentId`` of
``info`` with its description; a run of agent X starts its thread's session from X's spec.
The plain ``/agui`` endpoint runs the default agent (``default``, else the file's first). A
thread keeps the agent of its first run: a run naming another is 409, a connect naming
another sees an unknown thread.

Suggestions (CopilotKit's ``agent/suggest``, and the runs its core makes instead when the
runtime does not advertise ``suggestions``: a forced ``copilotkitSuggest`` tool choice) are
refused with an empty run (``RUN_STARTED``, ``RUN_FINISHED``), as a runtime without a
suggestions model leaves a page without suggestions: each would otherwise start a Claude
Code session (a CLI process, a model turn over the whole conversation) for a few words.

Bad input is answered like CopilotKit's own runtime: a body that is not declared JSON 415,
invalid JSON 400 (``Invalid JSON payload``), no ``method`` 400, an unknown method 400, no
``agentId`` (or ``threadId`` for stop) 400, an unknown agent 404 (``Agent not found``), an
invalid RunAgentInput 400 naming the field, another HTTP method 405, a body over the limit
413, no token 401. A run on a thread whose run is still going, or that talks to another
agent, is 409.

SSE: ``text/event-stream``, one ``data: <json>\\n\\n`` frame per event (LF only), ``:
keep-alive`` comments while idle.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Send

from claudecode import __version__
from claudecode.internal import get_logger

from ...errors import ThreadAgentError
from ..agents import DEFAULT_AGENT, Agent, offered_agents
from ..app import ServerContext
from ..errors import json_error
from ..input_checks import JSONRejected, decode_json
from ..json_io import json_response
from .events import RunAgentInput, RunFinished, RunStarted, decode_run_input, sse_frame
from .runs import AguiService, RunHandle, ThreadBusyError
from .stopping import stop_answer
from .threads import ThreadStore

__all__ = ("AGENT_ID", "agui_routes", "runtime_info")

#: The agent a server without an agents file offers (CopilotKit's default agent id).
AGENT_ID = DEFAULT_AGENT.name

_log = get_logger("claudecode.adapter.agui")

_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_METHODS = ("info", "agent/connect", "agent/run", "agent/stop", "agent/suggest")


def _is_suggestion(run_input: RunAgentInput) -> bool:
    """A run CopilotKit's core makes to generate suggestions (its forced tool choice)."""
    props = run_input.forwarded_props
    choice = props.get("toolChoice") if isinstance(props, dict) else None
    function = choice.get("function") if isinstance(choice, dict) else None
    return isinstance(function, dict) and function.get("name") == "copilotkitSuggest"


def _empty_run(run_input: RunAgentInput) -> Response:
    """A run that ends at once with nothing in it (a refused suggestion request)."""
    thread_id, run_id = run_input.thread_id, run_input.run_id
    body = sse_frame(RunStarted(thread_id=thread_id, run_id=run_id))
    body += sse_frame(RunFinished(thread_id=thread_id, run_id=run_id))
    return Response(body, media_type="text/event-stream", headers=_SSE_HEADERS)


async def _no_body() -> AsyncIterator[bytes]:
    return
    yield b""  # an async generator that yields nothing


class _RunStream(StreamingResponse):
    """A run's SSE stream: ``head`` (frames sent first), then the run's frames from index
    ``start`` on, written by :meth:`RunHandle.follow` (the run's pump writes them itself
    while this stream keeps up). Starlette's streaming response around it ends the stream
    when the client disconnects."""

    def __init__(
        self,
        head: list[bytes],
        handle: RunHandle,
        start: int,
        service: AguiService,
        keepalive: float,
    ) -> None:
        super().__init__(_no_body(), media_type="text/event-stream", headers=_SSE_HEADERS)
        self._head = head
        self._handle = handle
        self._start = start
        self._service = service
        self._keepalive = keepalive

    async def stream_response(self, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )

        async def write(chunk: bytes) -> None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})

        if self._head:
            await write(b"".join(self._head))
        handle = self._handle
        ids = {"thread_id": handle.thread_id, "run_id": handle.run_id}
        _log.info("agui.stream_opened", **ids)
        ended = False
        try:
            await handle.follow(write, start=self._start, keepalive=self._keepalive)
            ended = True
        finally:
            self._service.left(handle)
            _log.info("agui.stream_closed", **ids, reason="run ended" if ended else "client left")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def runtime_info(agents: tuple[Agent, ...] = ()) -> dict[str, Any]:
    """CopilotKit's ``RuntimeInfo`` for this bridge offering ``agents`` (none: the default
    agent), in their order."""
    return {
        "version": __version__,
        "agents": {
            agent.name: {
                "name": agent.name,
                "className": "ClaudeCodeAgent",
                "description": agent.description,
            }
            for agent in offered_agents(agents)
        },
        "audioFileTranscriptionEnabled": False,
        "mode": "sse",
    }


async def _json_body(request: Request) -> Any:
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, "the request body must be application/json")
    body = await request.body()
    try:
        return decode_json(body)
    except JSONRejected as exc:
        raise HTTPException(400, f"Invalid JSON payload: {exc}") from None
    except msgspec.DecodeError:
        raise HTTPException(400, "Invalid JSON payload") from None


def _run_input(data: Any) -> RunAgentInput:
    if not isinstance(data, dict):
        raise HTTPException(400, "Invalid RunAgentInput: expected an object")
    try:
        return decode_run_input(data)
    except msgspec.ValidationError as exc:
        raise HTTPException(400, f"Invalid RunAgentInput: {exc}") from None


def agui_routes(ctx: ServerContext) -> list[BaseRoute]:
    """The AG-UI and CopilotKit routes over the context's backend."""
    store_path = ctx.state_path("agui-threads.sqlite3")
    service = AguiService(
        ctx.backend,
        ThreadStore(store_path),
        shutting_down=lambda: ctx.shutting_down,
        disconnect=ctx.settings.agui_disconnect,
        keepalive=ctx.settings.keepalive_seconds,
        max_threads=ctx.settings.agui_max_threads,
        agents=ctx.settings.agents,
    )
    info_body = runtime_info(ctx.settings.agents)
    ctx.lifespan_hooks.append(service.running)
    ctx.endpoints.extend([("AG-UI", "/agui"), ("CopilotKit", "/copilotkit")])
    keepalive = ctx.settings.keepalive_seconds

    def stream(head: list[bytes], handle: RunHandle, start: int = 0) -> Response:
        return _RunStream(head, handle, start, service, keepalive)

    async def run(run_input: RunAgentInput, agent_id: str | None = None) -> Response:
        if _is_suggestion(run_input):
            return _empty_run(run_input)
        try:
            handle = await service.start_run(run_input, agent_id)
        except (ThreadBusyError, ThreadAgentError) as exc:
            return json_error(409, str(exc))
        return stream([], handle)

    async def connect(run_input: RunAgentInput, agent_id: str | None = None) -> Response:
        head, live = await service.connect(run_input, agent_id)
        if live is None:
            # Nothing live: one buffered answer (an unknown thread: no events at all).
            return Response(b"".join(head), media_type="text/event-stream", headers=_SSE_HEADERS)
        # The live run's own RUN_STARTED is in the head; replay the rest, then follow it.
        return stream(head, live, start=1)

    async def stop(thread_id: str) -> Response:
        return json_response(stop_answer(thread_id, await service.stop(thread_id)))

    def agent(params: Any) -> str:
        agent_id = params.get("agentId") if isinstance(params, dict) else None
        if not isinstance(agent_id, str) or not agent_id:
            raise HTTPException(400, "Missing or invalid parameter 'agentId'")
        if agent_id not in service.agents:
            raise HTTPException(404, "Agent not found")
        return agent_id

    # -- plain AG-UI ---------------------------------------------------------------------

    async def agui_run(request: Request) -> Response:
        return await run(_run_input(await _json_body(request)))

    async def agui_connect(request: Request) -> Response:
        return await connect(_run_input(await _json_body(request)))

    async def agui_stop(request: Request) -> Response:
        return await stop(request.path_params["thread_id"])

    # -- CopilotKit: the single endpoint ---------------------------------------------------

    async def envelope(request: Request) -> Response:
        data = await _json_body(request)
        if not isinstance(data, dict) or "method" not in data:
            raise HTTPException(400, "Missing method field")
        method = data["method"]
        if method not in _METHODS:
            raise HTTPException(400, f"Unsupported method '{method}'")
        if method == "info":
            return json_response(info_body)
        params = data.get("params")
        agent_id = agent(params)
        assert isinstance(params, dict)
        if method == "agent/stop":
            thread_id = params.get("threadId")
            if not isinstance(thread_id, str) or not thread_id:
                raise HTTPException(400, "Missing or invalid parameter 'threadId'")
            return await stop(thread_id)
        run_input = _run_input(data.get("body"))
        if method == "agent/suggest":
            return _empty_run(run_input)
        if method == "agent/run":
            return await run(run_input, agent_id)
        return await connect(run_input, agent_id)

    # -- CopilotKit: the REST form ------------------------------------------------------------

    async def info(request: Request) -> Response:
        return json_response(info_body)

    async def rest_run(request: Request) -> Response:
        agent_id = agent(request.path_params)
        return await run(_run_input(await _json_body(request)), agent_id)

    async def rest_connect(request: Request) -> Response:
        agent_id = agent(request.path_params)
        return await connect(_run_input(await _json_body(request)), agent_id)

    async def rest_suggest(request: Request) -> Response:
        agent(request.path_params)
        return _empty_run(_run_input(await _json_body(request)))

    async def rest_stop(request: Request) -> Response:
        agent(request.path_params)
        with contextlib.suppress(HTTPException):
            await request.body()  # {runId} when a run is tracked; not needed
        return await stop(request.path_params["thread_id"])

    return [
        Route("/agui", agui_run, methods=["POST"]),
        Route("/agui/connect", agui_connect, methods=["POST"]),
        Route("/agui/stop/{thread_id}", agui_stop, methods=["POST"]),
        Route("/copilotkit", envelope, methods=["POST"]),
        Route("/copilotkit/", envelope, methods=["POST"]),
        Route("/copilotkit/info", info, methods=["GET"]),
        Route("/copilotkit/agent/{agentId}/run", rest_run, methods=["POST"]),
        Route("/copilotkit/agent/{agentId}/connect", rest_connect, methods=["POST"]),
        Route("/copilotkit/agent/{agentId}/stop/{thread_id}", rest_stop, methods=["POST"]),
        Route("/copilotkit/agent/{agentId}/suggest", rest_suggest, methods=["POST"]),
    ]
