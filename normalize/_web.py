"""WebFetch and WebSearch → ``http_request``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import as_int, as_list, as_map, as_str, as_str_tuple, first_str, require_str
from ._result import ToolResult
from .payloads import HttpRequest, WebLink

__all__ = ("use_web_fetch", "use_web_search", "web_result")


def use_web_fetch(name: str, data: Mapping[str, Any]) -> HttpRequest:
    """``WebFetch {url, prompt}``: a ``GET``."""
    return HttpRequest(
        tool=name, url=require_str(data.get("url")), method="GET", prompt=as_str(data.get("prompt"))
    )


def use_web_search(name: str, data: Mapping[str, Any]) -> HttpRequest:
    """``WebSearch {query, allowed_domains, blocked_domains}``: a ``SEARCH``."""
    return HttpRequest(
        tool=name,
        method="SEARCH",
        query=require_str(data.get("query")),
        allowed_domains=as_str_tuple(data.get("allowed_domains")),
        blocked_domains=as_str_tuple(data.get("blocked_domains")),
    )


def _links(results: object, max_links: int = 100) -> tuple[WebLink, ...]:
    # results: [{"tool_use_id", "content": [{"title", "url"}]} | "commentary text", ...]
    links: list[WebLink] = []
    for entry in as_list(results):
        for hit in as_list(as_map(entry).get("content")):
            fields = as_map(hit)
            url = as_str(fields.get("url"))
            if url is not None and len(links) < max_links:
                links.append(WebLink(url=url, title=as_str(fields.get("title"))))
    return tuple(links)


def _duration_ms(data: Mapping[str, Any]) -> int | None:
    millis = as_int(data.get("durationMs"))
    if millis is not None:
        return millis
    seconds = data.get("durationSeconds")
    if (
        isinstance(seconds, int | float)
        and not isinstance(seconds, bool)
        and math.isfinite(seconds)
        and abs(seconds) < 1e12
    ):
        return round(seconds * 1000)
    return None


def web_result(payload: HttpRequest, result: ToolResult) -> HttpRequest:
    """Fill the response text, status code, hits and duration from the result."""
    data = result.structured
    if result.is_error:
        return msgspec.structs.replace(payload, is_error=True, error=result.error)
    text = result.text or first_str(data, "result") or ""
    response, truncated = result.cut(text)
    status = as_int(data.get("code"))
    return msgspec.structs.replace(
        payload,
        url=payload.url or as_str(data.get("url")),
        response=response,
        status_code=status,
        is_error=status is not None and status >= 400,
        links=_links(data.get("results")),
        duration_ms=_duration_ms(data),
        truncated=truncated,
    )
