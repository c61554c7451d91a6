"""A scriptable fake Anthropic Messages API: a real HTTP server on 127.0.0.1.

Routes:

* ``POST /v1/messages`` (the CLI appends ``?beta=true``): classified (see :data:`Kind`) and
  answered from the :class:`~.script.Script`: SSE over chunked transfer encoding when the body
  says ``"stream": true``, else one JSON ``message``; or an HTTP error
  (:class:`~.script.HTTPError`).
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``.
* anything else: recorded and answered 404 with an Anthropic-shaped error.

Every request is recorded as a :class:`RecordedRequest` (path, headers, parsed body,
classification, the resolved turn it was answered with) for assertions. A
:class:`~.proxy.RefusingProxy` is started alongside; its URL is :attr:`FakeAnthropicAPI.proxy_url`.

Usage::

    with FakeAnthropicAPI(Script(main=[text_turn("hi")])) as api:
        ...  # point ANTHROPIC_BASE_URL at api.base_url
        [req] = api.main_requests()
        assert api.last_user_text(req) == "say hi"
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.parse import urlsplit

from claudecode._log import get_logger

from ._server import BackgroundServer, Listener, loopback_listener
from .proxy import RefusingProxy
from .script import Rule, Script, Turn, json_message, new_id, sse_events

__all__ = (
    "AGENT_ID_HEADER",
    "FakeAnthropicAPI",
    "Kind",
    "RecordedRequest",
    "Source",
    "last_user_message",
    "last_user_text",
    "user_texts",
)

_log = get_logger(__name__)

AGENT_ID_HEADER = "x-claude-code-agent-id"
"""Header the CLI sets on requests made by a sub-agent (Agent / Task tool)."""

Kind = Literal["main", "subagent", "side", "count_tokens", "unknown"]
"""How a request was classified.

``main``: ``POST /v1/messages`` with non-empty ``tools``; ``subagent``: the same plus the
:data:`AGENT_ID_HEADER` header; ``side``: ``POST /v1/messages`` without tools (e.g. the model
probe after ``set_model``); ``count_tokens``; ``unknown``: any other route (answered 404).
"""

Source = Literal["queue", "rule", "exhausted", "side", "count_tokens", "not_found"]
"""Where the answer came from."""


@dataclass
class RecordedRequest:
    """One request the fake API received, and what it answered."""

    seq: int
    """1-based arrival order over all requests."""
    method: str
    path: str
    """Without the query string, e.g. ``/v1/messages``."""
    query: str
    """E.g. ``beta=true``."""
    headers: dict[str, str]
    """Lower-case header names."""
    body: Any
    """The parsed JSON body (``None`` when absent or not JSON)."""
    kind: Kind
    source: Source
    answer: Turn | None
    """The resolved turn answered (generated tool_use ids filled in), or ``None``."""
    queue_index: int | None = None
    """1-based position of the consumed turn in its queue (``main`` or ``subagent``)."""
    status: int = 0
    """HTTP status sent."""
    client_disconnected: bool = False
    """The client went away before the answer was complete (e.g. an interrupt)."""
    done: bool = False
    """The answer was fully written (or the client went away)."""
    received_at: float = field(default_factory=time.monotonic)

    @property
    def streamed(self) -> bool:
        """Whether the request asked for an SSE stream."""
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


def _user_content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def last_user_message(body: Any) -> dict[str, Any] | None:
    """The last ``role: user`` message of a Messages API request body, if any."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def user_texts(body: Any) -> list[str]:
    """The text blocks (or the string content) of the last user message of a request body."""
    message = last_user_message(body)
    return [] if message is None else _user_content_texts(message.get("content"))


def last_user_text(body: Any) -> str:
    """The last text block of the last user message ("" when it has none, e.g. tool results).

    The CLI puts ``<system-reminder>`` blocks first and the prompt text last.
    """
    texts = user_texts(body)
    return texts[-1] if texts else ""


def _classify(method: str, path: str, headers: dict[str, str], body: Any) -> Kind:
    if method == "POST" and path == "/v1/messages":
        tools = body.get("tools") if isinstance(body, dict) else None
        if not tools:
            return "side"
        return "subagent" if AGENT_ID_HEADER in headers else "main"
    if method == "POST" and path == "/v1/messages/count_tokens":
        return "count_tokens"
    return "unknown"


def _rough_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


class _Disconnected(Exception):
    """The client went away or the server is stopping."""


class _APIHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _APIServer

    def _handle(self) -> None:
        self.server.owner.serve(self)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("fake api " + format % args)

    def read_body(self) -> bytes:
        """The request body (content-length or chunked)."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def send_json(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        """Write a complete JSON response."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        """Write one HTTP chunk and flush it."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


class _APIServer(BackgroundServer):
    owner: FakeAnthropicAPI


class FakeAnthropicAPI:
    """The fake Messages API plus its refusing proxy; thread-safe.

    ``listen`` makes the listening sockets (default: 127.0.0.1 in this process's network
    namespace; the pytest fixture passes one that binds inside the test network namespace).
    Start with :meth:`start` or ``with``; change the script at any time with :meth:`set_script`,
    :meth:`add_main`, :meth:`add_subagent`, :meth:`add_rule`.
    """

    def __init__(
        self, script: Script | None = None, *, listen: Listener = loopback_listener
    ) -> None:
        self._lock = threading.Condition()
        self._script = script if script is not None else Script()
        self._consumed = {"main": 0, "subagent": 0}
        self._requests: list[RecordedRequest] = []
        self._server = _APIServer(listen(), _APIHandler)
        self._server.owner = self
        self.proxy = RefusingProxy(listen)
        """The refusing proxy to set as ``HTTPS_PROXY``/``HTTP_PROXY``."""

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The API's port on 127.0.0.1."""
        return self._server.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def proxy_url(self) -> str:
        """The refusing proxy's URL."""
        return self.proxy.url

    def start(self) -> FakeAnthropicAPI:
        """Start the API and the proxy in background threads."""
        self._server.start("fake-anthropic-api")
        self.proxy.start()
        return self

    def stop(self) -> None:
        """Stop both servers, cutting streams that are still running."""
        self._server.stop()
        self.proxy.stop()

    def __enter__(self) -> FakeAnthropicAPI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- script ----------------------------------------------------------------------------

    def set_script(self, script: Script) -> None:
        """Replace the script; turns already consumed are not replayed."""
        with self._lock:
            self._script = script
            self._consumed = {"main": 0, "subagent": 0}

    def add_main(self, *turns: Turn) -> None:
        """Append turns to the main-conversation queue."""
        with self._lock:
            self._script.main.extend(turns)

    def add_subagent(self, *turns: Turn) -> None:
        """Append turns to the sub-agent queue."""
        with self._lock:
            self._script.subagent.extend(turns)

    def add_rule(self, rule: Rule) -> None:
        """Add a rule (checked in insertion order, before the queues)."""
        with self._lock:
            self._script.rules.append(rule)

    def remaining(self, kind: Literal["main", "subagent"] = "main") -> int:
        """How many scripted turns of a queue are not consumed yet."""
        with self._lock:
            queue = self._script.main if kind == "main" else self._script.subagent
            return len(queue) - self._consumed[kind]

    # -- recorded requests -----------------------------------------------------------------

    def requests(self, kind: Kind | None = None) -> list[RecordedRequest]:
        """Every request so far (or those of one kind), in arrival order."""
        with self._lock:
            return [r for r in self._requests if kind is None or r.kind == kind]

    def main_requests(self) -> list[RecordedRequest]:
        """The main-conversation requests (those that consume ``main`` turns or rules)."""
        return self.requests("main")

    def subagent_requests(self) -> list[RecordedRequest]:
        """The sub-agent requests."""
        return self.requests("subagent")

    def side_requests(self) -> list[RecordedRequest]:
        """Requests without tools (model probe...)."""
        return self.requests("side")

    def unknown_requests(self) -> list[RecordedRequest]:
        """Requests to routes the fake API does not serve (answered 404)."""
        return self.requests("unknown")

    def exhausted_requests(self) -> list[RecordedRequest]:
        """Requests that found their queue empty and got the ``exhausted`` answer."""
        with self._lock:
            return [r for r in self._requests if r.source == "exhausted"]

    def proxy_attempts(self) -> list[str]:
        """Hosts something tried to reach through the refusing proxy (should stay empty)."""
        return self.proxy.attempts()

    def wait_for_requests(
        self, kind: Kind | None = "main", count: int = 1, timeout: float = 10.0
    ) -> list[RecordedRequest]:
        """Block until at least ``count`` requests of ``kind`` arrived; return them.

        Returns as soon as the requests arrive (their answers may still be streaming).
        Raises :class:`TimeoutError` with what did arrive otherwise.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = [r for r in self._requests if kind is None or r.kind == kind]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(r.kind, r.path) for r in self._requests]
                    raise TimeoutError(f"waited for {count} {kind} request(s); got {seen}")
                self._lock.wait(left)

    def wait_until_done(self, request: RecordedRequest, timeout: float = 10.0) -> None:
        """Block until the answer to ``request`` is fully written or the client went away."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not request.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"request {request.seq} still being answered")
                self._lock.wait(left)

    @staticmethod
    def last_user_text(request: RecordedRequest) -> str:
        """The last text block of the request's last user message (see :func:`last_user_text`)."""
        return last_user_text(request.body)

    @staticmethod
    def user_texts(request: RecordedRequest) -> list[str]:
        """All text blocks of the request's last user message."""
        return user_texts(request.body)

    # -- serving ---------------------------------------------------------------------------

    def _choose(self, kind: Kind, body: Any) -> tuple[Source, Turn | None, int | None]:
        if kind == "count_tokens":
            return "count_tokens", None, None
        if kind == "unknown":
            return "not_found", None, None
        if kind == "side":
            return "side", self._script.side, None
        texts = user_texts(body)
        for rule in self._script.rules:
            matched = [t for t in texts if rule.last_user_contains in t]
            if rule.active() and matched:
                rule.hits += 1
                answer = rule.answer
                return "rule", answer if isinstance(answer, Turn) else answer(matched[0]), None
        queue = self._script.main if kind == "main" else self._script.subagent
        index = self._consumed[kind]
        if index < len(queue):
            self._consumed[kind] = index + 1
            return "queue", queue[index], index + 1
        return "exhausted", self._script.exhausted, None

    def _finish(self, record: RecordedRequest, *, disconnected: bool = False) -> None:
        with self._lock:
            record.done = True
            record.client_disconnected = disconnected
            self._lock.notify_all()

    def serve(self, handler: _APIHandler) -> None:
        """Record and answer one request (called from a handler thread)."""
        raw = handler.read_body()
        parts = urlsplit(handler.path)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        kind = _classify(handler.command, parts.path, headers, body)
        with self._lock:
            source, turn, index = self._choose(kind, body)
            record = RecordedRequest(
                seq=len(self._requests) + 1,
                method=handler.command,
                path=parts.path,
                query=parts.query,
                headers=headers,
                body=body,
                kind=kind,
                source=source,
                answer=None if turn is None else turn.resolved(),
                queue_index=index,
            )
            self._requests.append(record)
            self._lock.notify_all()
        _log.debug("fake api request", seq=record.seq, kind=kind, source=source, path=handler.path)
        try:
            self._answer(handler, record)
        except (_Disconnected, OSError):
            handler.close_connection = True
            self._finish(record, disconnected=True)
        else:
            self._finish(record)

    def _answer(self, handler: _APIHandler, record: RecordedRequest) -> None:
        request_id = new_id("req_")
        headers = {"request-id": request_id}
        turn = record.answer
        if record.source == "not_found":
            record.status = 404
            error = {"type": "not_found_error", "message": f"fake API: no route {record.path}"}
            body = {"type": "error", "error": error, "request_id": request_id}
            handler.send_json(404, body, headers)
            return
        if record.source == "count_tokens":
            record.status = 200
            messages = record.body.get("messages") if isinstance(record.body, dict) else None
            handler.send_json(200, {"input_tokens": _rough_tokens(messages)}, headers)
            return
        assert turn is not None
        headers.update(turn.headers)
        if turn.error is not None:
            record.status = turn.error.status
            headers.update(turn.error.headers)
            handler.send_json(turn.error.status, turn.error.body(request_id), headers)
            return
        body = record.body if isinstance(record.body, dict) else {}
        model = str(body.get("model") or "claude-fake")
        input_tokens = _rough_tokens(body.get("messages"))
        message_id = new_id("msg_")
        record.status = 200
        if not record.streamed:
            message = json_message(
                turn, model=model, message_id=message_id, input_tokens=input_tokens
            )
            handler.send_json(200, message, headers)
            return
        events = sse_events(turn, model=model, message_id=message_id, input_tokens=input_tokens)
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream; charset=utf-8")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("transfer-encoding", "chunked")
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.flush()
        stopping = self._server.stopping
        for name, data in events:
            if name == "content_block_delta" and turn.delay > 0 and stopping.wait(turn.delay):
                raise _Disconnected
            if stopping.is_set():
                raise _Disconnected
            handler.write_chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        handler.write_chunk(b"")
