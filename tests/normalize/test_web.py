"""WebFetch and WebSearch."""

from __future__ import annotations

from normalize import (
    HttpRequest,
    WebLink,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)


def _http(payload: object) -> HttpRequest:
    assert isinstance(payload, HttpRequest)
    return payload


def test_web_fetch() -> None:
    """WebFetch is a GET with the model's prompt; status and duration come from the result."""
    payload = _http(
        normalize_tool_use("WebFetch", {"url": "https://example.com/a", "prompt": "summarise"})
    )
    assert (payload.method, payload.url, payload.prompt) == (
        "GET",
        "https://example.com/a",
        "summarise",
    )
    assert title_for(payload) == "Fetch https://example.com/a"
    assert action_type_for(payload) == "network"
    result = {
        "bytes": 1200,
        "code": 200,
        "codeText": "OK",
        "result": "A page about examples.",
        "durationMs": 321,
        "url": "https://example.com/a",
    }
    after = _http(
        normalize_tool_result(payload, content="A page about examples.", tool_use_result=result)
    )
    assert (after.response, after.status_code, after.duration_ms, after.is_error) == (
        "A page about examples.",
        200,
        321,
        False,
    )


def test_web_fetch_http_error_status() -> None:
    """A 4xx/5xx status marks the request as an error."""
    payload = normalize_tool_use("WebFetch", {"url": "https://example.com/404", "prompt": "p"})
    after = _http(
        normalize_tool_result(payload, content="Not found", tool_use_result={"code": 404})
    )
    assert (after.status_code, after.is_error) == (404, True)


def test_web_fetch_failure() -> None:
    """A failed fetch sets ``is_error`` and ``error``."""
    payload = normalize_tool_use("WebFetch", {"url": "https://nope.invalid", "prompt": "p"})
    after = _http(
        normalize_tool_result(payload, content="getaddrinfo ENOTFOUND nope.invalid", is_error=True)
    )
    assert after.is_error
    assert after.error == "getaddrinfo ENOTFOUND nope.invalid"


def test_web_search() -> None:
    """WebSearch is a SEARCH with the query; hits become links."""
    payload = _http(
        normalize_tool_use(
            "WebSearch", {"query": "msgspec tagged unions", "allowed_domains": ["jcristharif.com"]}
        )
    )
    assert (payload.method, payload.query, payload.url) == ("SEARCH", "msgspec tagged unions", None)
    assert payload.allowed_domains == ("jcristharif.com",)
    assert title_for(payload) == "Search the web for `msgspec tagged unions`"
    result = {
        "query": "msgspec tagged unions",
        "results": [
            {
                "tool_use_id": "srvtoolu_1",
                "content": [
                    {"title": "Structs", "url": "https://jcristharif.com/msgspec/structs.html"},
                    {"url": "https://example.com"},
                ],
            },
            "Here is what I found.",
        ],
        "durationSeconds": 1.5,
    }
    after = _http(
        normalize_tool_result(payload, content="Web search results...", tool_use_result=result)
    )
    assert after.links == (
        WebLink(url="https://jcristharif.com/msgspec/structs.html", title="Structs"),
        WebLink(url="https://example.com"),
    )
    assert after.duration_ms == 1500
    assert after.response == "Web search results..."


def test_long_response_is_truncated() -> None:
    """The response text is cut to the byte cap."""
    payload = normalize_tool_use("WebFetch", {"url": "https://e.com", "prompt": "p"})
    after = _http(normalize_tool_result(payload, content="ab" * 100, max_output_bytes=11))
    assert (after.response, after.truncated) == ("ab" * 5 + "a", True)
