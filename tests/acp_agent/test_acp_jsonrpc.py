"""JSON-RPC framing (sans-IO) and the agent's answer to any frame: a result or an error,
never a crash, and it keeps serving."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.acp.agent import AcpAgent, AgentOptions
from adapter.acp.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Invalid,
    LineSplitter,
    Notification,
    Request,
    Response,
    parse_frame,
)
from adapter.backend import SessionInfo, SessionSpec
from adapter.manager import UnknownSessionError
from adapter.policies import PermissionDecision
from tests.support.acp_schema import WireChecker
from tests.support.timeouts import HANG_GUARD

# ------------------------------------------------------------------------ framing


def test_parse_frame_kinds() -> None:
    assert Request(1, "initialize", {"a": 1}) == parse_frame(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":1}}'
    )
    assert Notification("session/cancel", None) == parse_frame(
        b'{"jsonrpc":"2.0","method":"session/cancel"}'
    )
    assert Response("x", {"ok": True}) == parse_frame(
        b'{"jsonrpc":"2.0","id":"x","result":{"ok":true}}'
    )
    bad = parse_frame(b"{nope")
    assert isinstance(bad, Invalid) and bad.reply is not None
    assert PARSE_ERROR == json.loads(bad.reply)["error"]["code"]
    for line in (
        b"[]",
        b"3",
        b'{"id":1,"method":"x"}',
        b'{"jsonrpc":"2.0","id":true,"method":"x"}',
    ):
        frame = parse_frame(line)
        assert isinstance(frame, Invalid) and frame.reply is not None, line
        assert INVALID_REQUEST == json.loads(frame.reply)["error"]["code"]
    # A response we cannot match is dropped without a reply (answering it would loop).
    assert Invalid(None, "response without a usable id") == parse_frame(
        b'{"jsonrpc":"2.0","result":1}'
    )


@given(
    lines=st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
)
def test_line_splitter_any_chunking(lines: list[bytes], cuts: list[int]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    splitter = LineSplitter()
    got: list[bytes | None] = []
    bounds = [0, *sorted(c for c in cuts if c <= len(data)), len(data)]
    for start, end in itertools.pairwise(bounds):
        got += splitter.feed(data[start:end])
    expected = [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r").strip()]
    assert expected == got


def test_line_splitter_drops_an_overlong_line_and_goes_on() -> None:
    splitter = LineSplitter(max_line=10)
    got = splitter.feed(b"short\n" + b"x" * 25)
    got += splitter.feed(b"yyyy\nok\n")
    assert [b"short", None, b"ok"] == got


@given(st.binary(max_size=200))
def test_parse_frame_never_raises(line: bytes) -> None:
    parse_frame(line)


# ------------------------------------------------------------------------ the agent


class _Stream:
    gap = 0

    async def receive_batch(self) -> list[Any]:
        await anyio.sleep_forever()
        raise AssertionError

    def __aiter__(self) -> AsyncIterator[Any]:
        raise NotImplementedError


class _IdleBackend:
    """Sessions that start and never produce events; enough to exercise the JSON-RPC layer."""

    def __init__(self) -> None:
        self.live: set[str] = set()

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        assert session_id is not None
        self.live.add(session_id)
        return SessionInfo(id=session_id, cwd=spec.cwd)

    def _known(self, session_id: str) -> None:
        if session_id not in self.live:
            raise UnknownSessionError(session_id)

    @contextlib.asynccontextmanager
    async def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AsyncIterator[Any]:
        self._known(session_id)
        yield _Stream()

    async def prompt(
        self, session_id: str, text: str, *, images: Sequence[tuple[str, bytes]] = ()
    ) -> None:
        self._known(session_id)

    async def answer_permission(
        self, session_id: str, pending_id: str, decision: PermissionDecision
    ) -> None:
        self._known(session_id)

    async def interrupt(self, session_id: str) -> None:
        self._known(session_id)

    async def set_model(self, session_id: str, model: str | None) -> None:
        self._known(session_id)

    async def set_permission_mode(self, session_id: str, mode: str) -> None:
        self._known(session_id)

    async def close(self, session_id: str) -> None:
        self.live.discard(session_id)


_METHODS = st.sampled_from(
    [
        "initialize",
        "authenticate",
        "session/new",
        "session/load",
        "session/set_mode",
        "session/set_config_option",
        "session/close",
        "session/cancel",
        "session/list",
        "nope",
        "",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_PARAMS = st.one_of(
    _JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "protocolVersion": st.one_of(st.integers(), st.text(max_size=3)),
            "cwd": st.one_of(st.just("/tmp"), st.integers()),
            "mcpServers": st.one_of(st.just([]), _JSON),
            "sessionId": st.one_of(st.just("00000000-0000-4000-8000-000000000000"), _JSON),
            "modeId": st.sampled_from(["plan", "x"]),
            "configId": st.sampled_from(["model", "x"]),
            "value": _JSON,
        },
    ),
)
_FRAMES = st.one_of(
    st.builds(
        lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p},
        st.one_of(st.integers(min_value=0, max_value=10**6), st.text(min_size=1, max_size=5)),
        _METHODS,
        _PARAMS,
    ),
    st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p}, _METHODS, _PARAMS),
    _JSON,
).map(lambda obj: json.dumps(obj).encode())
_LINES = st.one_of(_FRAMES, st.binary(max_size=30).filter(lambda b: b"\n" not in b))


LAST = b'{"jsonrpc":"2.0","id":"last","method":"initialize","params":{"protocolVersion":1}}'


async def _serve(lines: list[bytes]) -> list[dict[str, Any]]:
    sent: list[bytes] = []

    async def send(data: bytes) -> None:
        sent.append(data)

    async def chunks() -> AsyncIterator[bytes]:
        for line in lines:
            yield line + b"\n"
        # The last request: the agent still answers after whatever came before.
        yield LAST + b"\n"
        await anyio.sleep(0.05)

    # No stored sessions to list: a HOME of its own.
    options = AgentOptions(env={"HOME": "/nonexistent/acp-test-home"})
    agent = AcpAgent(_IdleBackend(), send, options)  # type: ignore[arg-type]
    with anyio.fail_after(HANG_GUARD):
        await agent.serve(chunks())
    return [json.loads(line) for data in sent for line in data.splitlines() if line.strip()]


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_LINES, max_size=12))
def test_any_frames_get_a_result_or_an_error_and_the_agent_keeps_serving(
    lines: list[bytes],
) -> None:
    """Every request gets exactly one answer (result or a JSON-RPC error with a standard or
    documented code); every message the agent sends is valid ACP; the agent answers a last
    initialize after all of it."""
    out = anyio.run(_serve, lines)
    request_ids: list[Any] = []
    for line in [*lines, LAST]:
        frame = parse_frame(line)
        if isinstance(frame, Request):
            request_ids.append(frame.id)
        elif isinstance(frame, Invalid) and frame.reply is not None:
            request_ids.append(json.loads(frame.reply)["id"])
    answers = [m for m in out if "id" in m and "method" not in m]
    answered = [m["id"] for m in answers if m["id"] is not None]
    # Ids can repeat in the input; each request gets its own answer.
    assert sorted(str(i) for i in request_ids if i is not None) == sorted(map(str, answered))
    codes = {m["error"]["code"] for m in answers if "error" in m}
    assert codes <= {-32700, -32600, -32601, -32602, -32603, -32002}
    checker = WireChecker()
    for line in [*lines, LAST]:
        frame = parse_frame(line)
        if isinstance(frame, Request):
            checker.pending[("client", frame.id)] = frame.method
    repeated = {str(i) for i in request_ids if request_ids.count(i) > 1}
    for m in out:
        if "error" in m:
            assert m["error"]["message"]
            continue
        if "method" not in m and str(m["id"]) in repeated:
            continue  # which of two same-id requests it answers is not knowable
        assert [] == checker.check("agent", m), m
    [last] = [m for m in answers if m["id"] == "last"]
    assert 1 == last["result"]["protocolVersion"]


@pytest.mark.anyio
async def test_unknown_method_and_session() -> None:
    out = await _serve(
        [
            b'{"jsonrpc":"2.0","id":1,"method":"session/fly","params":{}}',
            b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"x","prompt":[]}}',
            b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":5}}',
        ]
    )
    by_id = {m["id"]: m for m in out if "id" in m}
    assert METHOD_NOT_FOUND == by_id[1]["error"]["code"]
    assert -32002 == by_id[2]["error"]["code"]
    assert -32602 == by_id[3]["error"]["code"]


class _SlowBackend(_IdleBackend):
    """session/new blocks until released, counting how many run at once."""

    def __init__(self, full_at: int) -> None:
        super().__init__()
        self.running = 0
        self.most = 0
        self.full_at = full_at
        self.full = anyio.Event()
        self.release = anyio.Event()

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        self.running += 1
        self.most = max(self.most, self.running)
        if self.running >= self.full_at:
            self.full.set()
        await self.release.wait()
        self.running -= 1
        return await super().create(spec, session_id=session_id)


@pytest.mark.anyio
async def test_requests_in_flight_are_bounded_and_all_answered() -> None:
    """A flood of slow requests: at most 256 run at once (the reader waits, so the pipe
    pushes back on the client) and every one is answered once they can finish."""
    backend = _SlowBackend(full_at=256)
    answered: list[Any] = []
    all_answered = anyio.Event()

    async def send(data: bytes) -> None:
        answered.extend(json.loads(line)["id"] for line in data.splitlines())
        if len(answered) >= 300:
            all_answered.set()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(300):
            frame = {"jsonrpc": "2.0", "id": i, "method": "session/new"}
            frame["params"] = {"cwd": "/tmp", "mcpServers": []}
            yield json.dumps(frame).encode() + b"\n"
        await all_answered.wait()

    async def release_when_full() -> None:
        await backend.full.wait()
        for _ in range(50):  # let a 257th request start, if it could
            await anyio.lowlevel.checkpoint()
        assert 256 == backend.most
        backend.release.set()

    agent = AcpAgent(backend, send)  # type: ignore[arg-type]
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(release_when_full)
            await agent.serve(chunks())
    assert list(range(300)) == sorted(answered)
