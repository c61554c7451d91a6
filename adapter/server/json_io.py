"""Small helpers every front end's HTTP routes share: typed JSON bodies, JSON answers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .input_checks import JSONRejected, decode_json, nul_field

__all__ = ("json_response", "read_json", "reject_nul")

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


def json_response(data: Any, status: int = 200) -> Response:
    """``data`` (msgspec Structs included) as an ``application/json`` answer."""
    return Response(_encoder.encode(data), status_code=status, media_type="application/json")


async def read_json(request: Request, kind: type[T]) -> T:
    """The request body decoded as ``kind`` (a msgspec Struct, dict, ...).

    Raises:
        HTTPException: 415 when the body is not declared JSON, 400 when it is not valid JSON
            or does not fit ``kind`` (the message names the field), is not UTF-8 or nests
            too deeply (:func:`~adapter.server.input_checks.decode_json`), 413 when too large.
    """
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise HTTPException(415, "the request body must be application/json")
    body = await request.body()
    try:
        decoded: T = decode_json(body, kind)
    except msgspec.ValidationError as exc:
        raise HTTPException(400, f"invalid request body: {exc}") from None
    except JSONRejected as exc:
        raise HTTPException(400, f"invalid JSON payload: {exc}") from None
    except msgspec.DecodeError:
        raise HTTPException(400, "invalid JSON payload") from None
    return decoded


def reject_nul(obj: Any, names: Iterable[str]) -> None:
    """Refuse a request whose text field ``names`` (an argument, a path) holds NUL.

    Raises:
        HTTPException: 400 naming the field.
    """
    name = nul_field(obj, names)
    if name is not None:
        raise HTTPException(400, f"invalid request body: `$.{name}` must not contain NUL")
