"""The fake Messages API itself, exercised with a real HTTP client (stdlib ``http.client``)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .fake_api import AGENT_ID_HEADER, FakeAnthropicAPI, last_user_text
from .script import (
    Rule,
    Script,
    StreamError,
    Text,
    Thinking,
    ToolUse,
    Turn,
    error_turn,
    sse_events,
    text_turn,
    tool_turn,
)

Event = tuple[str, dict[str, Any]]


@pytest.fixture
def api() -> Iterator[FakeAnthropicAPI]:
    """A fake API on the host's loopback, so this test process can talk to it."""
    with FakeAnthropicAPI() as server:
        yield server


def request_body(
    text: str = "say hi", *, tools: bool = True, stream: bool = True, model: str = "claude-test"
) -> dict[str, Any]:
    """A Messages API body shaped like the CLI's (system reminder first, prompt last)."""
    content = [
        {"type": "text", "text": "<system-reminder>\nreminder\n</system-reminder>\n"},
        {"type": "text", "text": text},
    ]
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 1000,
        "messages": [{"role": "user", "content": content}],
        "stream": stream,
    }
    if tools:
        body["tools"] = [{"name": "Bash", "input_schema": {"type": "object"}}]
    return body


def post(
    api: FakeAnthropicAPI,
    body: Any,
    *,
    path: str = "/v1/messages?beta=true",
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request on a fresh connection; returns status, headers and the de-chunked body."""
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body).encode()
        all_headers = {
            "content-type": "application/json",
            "x-api-key": "sk-test",
            **(headers or {}),
        }
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def parse_sse(raw: bytes) -> list[Event]:
    """Split an SSE body into ``(event, data)`` pairs, checking the framing on the way."""
    events: list[Event] = []
    text = raw.decode()
    assert text.endswith("\n\n")
    for frame in text[:-2].split("\n\n"):
        lines = frame.split("\n")
        assert len(lines) == 2, frame
        assert lines[0].startswith("event: ")
        assert lines[1].startswith("data: ")
        name, data = lines[0][len("event: ") :], json.loads(lines[1][len("data: ") :])
        assert data["type"] == name
        events.append((name, data))
    return events


def deltas(events: list[Event], index: int, field: str) -> str:
    """Concatenate one block's delta payloads."""
    return "".join(
        d["delta"][field]
        for n, d in events
        if n == "content_block_delta" and d["index"] == index and field in d["delta"]
    )


def test_stream_has_the_anthropic_event_order_and_framing(api: FakeAnthropicAPI) -> None:
    api.add_main(
        Turn(
            blocks=[
                Thinking("Let me think about this."),
                Text("Hello from the fake API!"),
                ToolUse("Bash", {"command": "touch made.txt", "description": "Create"}),
            ],
            chunk=5,
        )
    )
    status, headers, raw = post(api, request_body())
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"
    assert headers["request-id"].startswith("req_")
    events = parse_sse(raw)
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["thinking", "text", "tool_use"]
    # Each block: start, its deltas, stop, before the next block starts.
    indexes = [d["index"] for n, d in events if n.startswith("content_block")]
    assert indexes == sorted(indexes)
    for index in range(3):
        block_names = [
            n for n, d in events if n.startswith("content_block") and d["index"] == index
        ]
        assert block_names[0] == "content_block_start"
        assert block_names[-1] == "content_block_stop"
        assert set(block_names[1:-1]) == {"content_block_delta"}
    delta_types = [d["delta"]["type"] for n, d in events if n == "content_block_delta"]
    thinking_types = [t for t in delta_types if t in ("thinking_delta", "signature_delta")]
    assert thinking_types[-1] == "signature_delta"
    assert thinking_types.count("signature_delta") == 1
    assert deltas(events, 0, "thinking") == "Let me think about this."
    assert deltas(events, 1, "text") == "Hello from the fake API!"
    assert json.loads(deltas(events, 2, "partial_json")) == {
        "command": "touch made.txt",
        "description": "Create",
    }
    message = events[0][1]["message"]
    assert message["id"].startswith("msg_")
    assert message["model"] == "claude-test"
    assert message["usage"]["output_tokens"] == 1
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "tool_use"
    assert final["usage"]["output_tokens"] > 1

    [record] = api.main_requests()
    assert (record.method, record.path, record.query) == ("POST", "/v1/messages", "beta=true")
    assert record.kind == "main"
    assert record.source == "queue"
    assert record.queue_index == 1
    assert record.status == 200
    # The client may hold every byte a moment before the server thread records the end.
    api.wait_until_done(record, timeout=10)
    assert record.done
    assert not record.client_disconnected
    assert record.headers["x-api-key"] == "sk-test"
    assert record.body["model"] == "claude-test"
    assert api.last_user_text(record) == "say hi"
    assert record.answer is not None
    [tool] = record.answer.tool_uses
    assert tool.id.startswith("toolu_")
    assert starts[2]["id"] == tool.id
    assert starts[2]["name"] == "Bash"


def test_non_streaming_request_gets_one_json_message(api: FakeAnthropicAPI) -> None:
    api.add_main(Turn(blocks=[Text("plain"), ToolUse("Read", {"file_path": "/x"})]))
    status, headers, raw = post(api, request_body(stream=False))
    assert status == 200
    assert headers["content-type"] == "application/json"
    message = json.loads(raw)
    assert message["type"] == "message"
    assert message["role"] == "assistant"
    assert message["stop_reason"] == "tool_use"
    assert message["content"][0] == {"type": "text", "text": "plain"}
    tool = message["content"][1]
    assert tool["type"] == "tool_use"
    assert tool["id"].startswith("toolu_")
    assert tool["input"] == {"file_path": "/x"}
    assert message["usage"]["input_tokens"] > 0


def test_stop_reason_and_usage_overrides(api: FakeAnthropicAPI) -> None:
    api.add_main(
        text_turn("x", stop_reason="max_tokens", usage={"output_tokens": 7, "input_tokens": 3})
    )
    _, _, raw = post(api, request_body())
    events = parse_sse(raw)
    assert events[0][1]["message"]["usage"]["input_tokens"] == 3
    assert events[-2][1]["delta"]["stop_reason"] == "max_tokens"
    assert events[-2][1]["usage"] == {"output_tokens": 7}


def test_count_tokens(api: FakeAnthropicAPI) -> None:
    status, _, raw = post(api, request_body(), path="/v1/messages/count_tokens?beta=true")
    assert status == 200
    assert json.loads(raw)["input_tokens"] > 0
    [record] = api.requests("count_tokens")
    assert record.source == "count_tokens"
    assert api.main_requests() == []


@pytest.mark.parametrize(("method", "path"), [("GET", "/v1/models"), ("POST", "/v1/complete")])
def test_unknown_routes_get_an_anthropic_shaped_404(
    api: FakeAnthropicAPI, method: str, path: str
) -> None:
    status, _, raw = post(api, None if method == "GET" else {}, method=method, path=path)
    assert status == 404
    body = json.loads(raw)
    assert body["type"] == "error"
    assert body["error"]["type"] == "not_found_error"
    assert body["request_id"].startswith("req_")
    [record] = api.unknown_requests()
    assert (record.method, record.path, record.status) == (method, path, 404)


def test_sticky_rule_fails_every_retry_without_consuming_turns(api: FakeAnthropicAPI) -> None:
    api.set_script(
        Script(main=[text_turn("fine")], rules=[Rule("explode", error_turn(500, "fake boom"))])
    )
    for _ in range(3):
        status, headers, raw = post(api, request_body("please explode now"))
        assert status == 500
        assert headers["request-id"].startswith("req_")
        assert json.loads(raw)["error"] == {"type": "api_error", "message": "fake boom"}
    assert api.remaining() == 1
    status, _, raw = post(api, request_body("something else"))
    assert status == 200
    assert deltas(parse_sse(raw), 0, "text") == "fine"
    assert [r.source for r in api.main_requests()] == ["rule", "rule", "rule", "queue"]


def test_rule_with_times_fails_n_times_then_the_queue_answers(api: FakeAnthropicAPI) -> None:
    api.add_main(text_turn("recovered"))
    api.add_rule(Rule("flaky", error_turn(529, "Overloaded"), times=2))
    statuses = [post(api, request_body("flaky request"))[0] for _ in range(3)]
    assert statuses == [529, 529, 200]
    assert json.loads(post(api, request_body("flaky", stream=False))[2])["content"] == [
        {"type": "text", "text": "script exhausted"}
    ]


def test_error_turns_in_the_queue_and_error_headers(api: FakeAnthropicAPI) -> None:
    api.add_main(
        error_turn(429, "slow down", error_headers={"retry-after": "0"}), text_turn("after")
    )
    status, headers, raw = post(api, request_body())
    assert status == 429
    assert headers["retry-after"] == "0"
    assert json.loads(raw)["error"]["type"] == "rate_limit_error"
    assert post(api, request_body())[0] == 200


def test_classification_keeps_side_and_subagent_requests_out_of_the_main_queue(
    api: FakeAnthropicAPI,
) -> None:
    api.set_script(
        Script(
            main=[text_turn("main one"), text_turn("main two")],
            subagent=[text_turn("sub one")],
            side=text_turn("side answer"),
        )
    )
    side = json.loads(post(api, request_body("Hi", tools=False, stream=False))[2])
    assert side["content"] == [{"type": "text", "text": "side answer"}]
    sub = parse_sse(post(api, request_body("task"), headers={AGENT_ID_HEADER: "a1"})[2])
    main1 = parse_sse(post(api, request_body("first"))[2])
    sub2 = parse_sse(post(api, request_body("task"), headers={AGENT_ID_HEADER: "a1"})[2])
    main2 = parse_sse(post(api, request_body("second"))[2])
    main3 = parse_sse(post(api, request_body("third"))[2])
    assert deltas(sub, 0, "text") == "sub one"
    assert deltas(main1, 0, "text") == "main one"
    assert deltas(sub2, 0, "text") == "script exhausted"
    assert deltas(main2, 0, "text") == "main two"
    assert deltas(main3, 0, "text") == "script exhausted"
    assert [r.kind for r in api.requests()] == [
        "side",
        "subagent",
        "main",
        "subagent",
        "main",
        "main",
    ]
    assert [api.last_user_text(r) for r in api.main_requests()] == ["first", "second", "third"]
    assert len(api.exhausted_requests()) == 2
    assert api.subagent_requests()[0].queue_index == 1


def test_mid_stream_error_event(api: FakeAnthropicAPI) -> None:
    api.add_main(
        Turn(
            blocks=[Text("partial"), Text("never sent")],
            stream_error=StreamError(after_blocks=1, message="fake mid-stream overload"),
        )
    )
    events = parse_sse(post(api, request_body())[2])
    names = [n for n, _ in events]
    assert names[-1] == "error"
    assert "message_stop" not in names
    assert "message_delta" not in names
    assert names.count("content_block_start") == 1
    assert events[-1][1]["error"] == {
        "type": "overloaded_error",
        "message": "fake mid-stream overload",
    }


def test_keep_alive_connection_serves_several_requests(api: FakeAnthropicAPI) -> None:
    api.add_main(text_turn("one"), text_turn("two"))
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
    try:
        for expected in ("one", "two"):
            conn.request("POST", "/v1/messages?beta=true", body=json.dumps(request_body()))
            response = conn.getresponse()
            assert deltas(parse_sse(response.read()), 0, "text") == expected
    finally:
        conn.close()


def test_chunked_request_body_is_read(api: FakeAnthropicAPI) -> None:
    api.add_main(text_turn("ok"))
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
    try:
        data = json.dumps(request_body("chunked prompt")).encode()
        conn.request("POST", "/v1/messages", body=iter([data[:10], data[10:]]), encode_chunked=True)
        assert conn.getresponse().status == 200
    finally:
        conn.close()
    assert api.last_user_text(api.main_requests()[0]) == "chunked prompt"


def test_delay_paces_deltas_and_a_client_disconnect_is_recorded(api: FakeAnthropicAPI) -> None:
    api.add_main(Turn(blocks=[Text("x" * 40)], chunk=4, delay=0.05))
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", api.port), timeout=10)
    data = json.dumps(request_body()).encode()
    head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n\r\n"
    sock.sendall(head.encode() + data)
    received = b""
    while b"text_delta" not in received:
        received += sock.recv(4096)
    assert time.monotonic() - started >= 0.05
    sock.close()
    [record] = api.wait_for_requests("main", 1)
    api.wait_until_done(record, timeout=5)
    assert record.client_disconnected


def test_full_delayed_stream_takes_the_delay_per_delta(api: FakeAnthropicAPI) -> None:
    api.add_main(Turn(blocks=[Text("abcdefgh")], chunk=2, delay=0.04))
    started = time.monotonic()
    events = parse_sse(post(api, request_body())[2])
    assert time.monotonic() - started >= 4 * 0.04
    assert deltas(events, 0, "text") == "abcdefgh"


def test_stop_cuts_a_running_stream_quickly() -> None:
    api = FakeAnthropicAPI(Script(main=[Turn(blocks=[Text("y" * 100)], chunk=1, delay=1.0)]))
    api.start()
    errors: list[BaseException] = []

    def client() -> None:
        try:
            post(api, request_body())
        except (OSError, http.client.HTTPException) as exc:
            errors.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    [record] = api.wait_for_requests("main", 1)
    time.sleep(0.1)
    api.stop()  # must cut the running stream, not wait for the slow answer to finish
    thread.join(5)
    assert not thread.is_alive()
    assert record.done
    assert record.client_disconnected


def test_wait_for_requests_times_out_with_what_arrived(api: FakeAnthropicAPI) -> None:
    post(api, request_body(tools=False))
    with pytest.raises(TimeoutError, match="side"):
        api.wait_for_requests("main", 1, timeout=0.1)


def test_refusing_proxy_records_connect_and_plain_requests(api: FakeAnthropicAPI) -> None:
    host, port = "127.0.0.1", int(api.proxy_url.rsplit(":", 1)[1])
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(
            b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n"
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 403")
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("GET", "http://example.invalid/path")
        assert conn.getresponse().status == 403
    finally:
        conn.close()
    assert api.proxy_attempts() == ["api.anthropic.com:443", "example.invalid"]
    assert api.proxy.requests()[0] == "CONNECT api.anthropic.com:443"


def test_last_user_text_shapes() -> None:
    assert last_user_text({"messages": [{"role": "user", "content": "plain"}]}) == "plain"
    tool_result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "out"}
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "first"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
            {"role": "user", "content": [tool_result]},
        ]
    }
    assert last_user_text(body) == ""
    assert last_user_text(None) == ""
    assert last_user_text({"messages": "nonsense"}) == ""


def test_tool_turn_helper_builds_text_then_tool() -> None:
    turn = tool_turn("Write", {"file_path": "a", "content": "b"}, text="Writing.")
    assert [type(b) for b in turn.blocks] == [Text, ToolUse]
    assert turn.effective_stop_reason == "tool_use"
    resolved = turn.resolved()
    assert resolved.tool_uses[0].id.startswith("toolu_")
    assert turn.tool_uses[0].id == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(
    text=st.text(),
    thinking=st.text(min_size=1),
    tool_input=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    chunk=st.integers(min_value=-1, max_value=40),
)
def test_deltas_reassemble_every_block(
    text: str, thinking: str, tool_input: dict[str, Any], chunk: int
) -> None:
    turn = Turn(
        blocks=[Thinking(thinking), Text(text), ToolUse("T", tool_input)], chunk=chunk
    ).resolved()
    events = sse_events(turn, model="m", message_id="msg_1", input_tokens=1)
    assert deltas(events, 0, "thinking") == thinking
    assert deltas(events, 1, "text") == text
    assert json.loads(deltas(events, 2, "partial_json")) == tool_input
    assert all(
        len(d["delta"].get("text", "")) <= max(1, chunk)
        for n, d in events
        if n == "content_block_delta"
    )
