"""JSON-RPC 2.0 framing for ACP, without I/O: bytes in, typed frames out, bytes to send back.

ACP runs JSON-RPC 2.0 over newline-delimited JSON on stdio. :class:`LineSplitter` cuts the
incoming byte stream into lines (any chunking), :func:`parse_frame` turns one line into a
:class:`Request`, :class:`Notification`, :class:`Response` (an answer to one of our own
requests) or :class:`Invalid` (with the error reply to send, if any), and the ``encode_*``
functions build the outgoing lines. Nothing here raises on bad input.

Error codes (the JSON-RPC ones, plus ACP's own):

========== ==============================================================================
-32700     Parse error: the line is not JSON.
-32600     Invalid request: JSON, but not a JSON-RPC 2.0 request (or a batch, which ACP
           does not use), or a request the session's state does not allow (a second
           prompt while one runs).
-32601     Method not found.
-32602     Invalid params: the params do not match the method's schema.
-32603     Internal error: the agent failed (the CLI could not start, the turn failed).
-32002     Resource not found (ACP): no session with that id (the application code).
-32800     Request cancelled (ACP): the request was cancelled before it finished.
========== ==============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias, TypeGuard

import msgspec

__all__ = (
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "Frame",
    "INTERNAL_ERROR",
    "Invalid",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JsonRpcError",
    "LineSplitter",
    "METHOD_NOT_FOUND",
    "Notification",
    "PARSE_ERROR",
    "parse_frame",
    "Request",
    "REQUEST_CANCELLED",
    "RequestId",
    "RESOURCE_NOT_FOUND",
    "Response",
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
REQUEST_CANCELLED = -32800

RequestId: TypeAlias = "str | int | None"


class JsonRpcError(Exception):
    """An error to answer a request with (``code``, ``message``, optional ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True, slots=True)
class Request:
    """A call that expects an answer."""

    id: str | int
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Notification:
    """A call without an answer."""

    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Response:
    """The answer to one of our requests: ``result``, or ``error`` (a dict) when it failed."""

    id: str | int
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Invalid:
    """A line that is not a valid frame; ``reply`` is the error to send (``None``: none)."""

    reply: bytes | None
    reason: str


Frame: TypeAlias = Request | Notification | Response | Invalid

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def _is_id(value: Any) -> TypeGuard[str | int]:
    # Booleans are ints in Python but not valid ids; fractional numbers are discouraged but
    # not forbidden by JSON-RPC — we accept only strings and integers, which is what ACP uses.
    return isinstance(value, str | int) and not isinstance(value, bool)


def parse_frame(line: bytes) -> Frame:
    """Classify one line (without its newline). Never raises."""
    try:
        obj = _decoder.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return Invalid(encode_error(None, PARSE_ERROR, f"Parse error: {exc}"), "parse")
    if isinstance(obj, list):
        return Invalid(
            encode_error(None, INVALID_REQUEST, "Invalid request: batches are not supported"),
            "batch",
        )
    if not isinstance(obj, dict):
        return Invalid(
            encode_error(None, INVALID_REQUEST, "Invalid request: not an object"), "not-object"
        )
    raw_id = obj.get("id")
    has_id = "id" in obj
    reply_id = raw_id if _is_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return Invalid(
            encode_error(reply_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"'),
            "version",
        )
    method = obj.get("method")
    if method is None:
        # A response to one of our requests.
        if not _is_id(raw_id):
            return Invalid(None, "response without a usable id")
        error = obj.get("error")
        if "result" not in obj and not isinstance(error, dict):
            return Invalid(None, "response without result or error")
        return Response(raw_id, obj.get("result"), error if isinstance(error, dict) else None)
    if not isinstance(method, str):
        return Invalid(
            encode_error(reply_id, INVALID_REQUEST, "Invalid request: method must be a string"),
            "method",
        )
    params = obj.get("params")
    if params is not None and not isinstance(params, dict | list):
        if has_id:
            return Invalid(
                encode_error(
                    reply_id, INVALID_REQUEST, "Invalid request: params must be structured"
                ),
                "params",
            )
        return Invalid(None, "notification with bad params")
    if not has_id:
        return Notification(method, params)
    if not _is_id(raw_id):
        return Invalid(
            encode_error(None, INVALID_REQUEST, "Invalid request: id must be a string or integer"),
            "id",
        )
    return Request(raw_id, method, params)


def _line(obj: dict[str, Any]) -> bytes:
    return _encoder.encode(obj) + b"\n"


def encode_result(request_id: str | int, result: Any) -> bytes:
    """The success answer to a request."""
    return _line({"jsonrpc": "2.0", "id": request_id, "result": result})


def encode_error(request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
    """The error answer to a request (``request_id=None`` when it could not be read)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _line({"jsonrpc": "2.0", "id": request_id, "error": error})


def encode_request(request_id: str | int, method: str, params: Any) -> bytes:
    """A request of ours to the client."""
    return _line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def encode_notification(method: str, params: Any) -> bytes:
    """A notification of ours to the client."""
    return _line({"jsonrpc": "2.0", "method": method, "params": params})


class LineSplitter:
    """Cuts a byte stream into lines, whatever the chunking; bounded by ``max_line``.

    A line longer than ``max_line`` bytes is dropped (reported once as an empty-bytes
    marker ``None`` in :meth:`feed`'s output) and reading goes on with the next line.
    """

    def __init__(self, max_line: int = 64 * 1024 * 1024) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        """The complete lines in ``chunk`` (blank lines skipped; ``None`` for a line that was
        too long)."""
        out: list[bytes | None] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            piece = chunk[start:nl]
            start = nl + 1
            if self._skipping:
                self._skipping = False
                self._buf.clear()
                continue
            if self._buf:
                self._buf += piece
                line = bytes(self._buf)
                self._buf.clear()
            else:
                line = piece
            if len(line) > self.max_line:
                out.append(None)
                continue
            line = line.rstrip(b"\r")
            if line.strip():
                out.append(line)
        rest = chunk[start:]
        if rest and not self._skipping:
            self._buf += rest
            if len(self._buf) > self.max_line:
                self._buf.clear()
                self._skipping = True
                out.append(None)
        return out
