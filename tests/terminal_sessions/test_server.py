"""Terminal sessions over the bridge's server: REST and /ws/pty with real clients."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyte
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.server import ServerSettings, create_app
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import AGENTS, Agent, TerminalManager
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

from ._helpers import foreground_job, fragile_agent, shell_env

pytestmark = [pytest.mark.server, pytest.mark.pty]

TOKEN = "test-token-0123456789"


def _app(tmp_path: Path, settings: ServerSettings | None = None, **route_options: Any) -> Any:
    missing = Agent(name="missing", command="no-such-cli", install_hint="npm i -g no-such-cli")
    agents = {**AGENTS, "missing": missing, "fragile": fragile_agent()}
    routes = make_terminal_routes(
        lambda: TerminalManager(env=shell_env(tmp_path), agents=agents, stop_grace=2.0),
        default_cwd=str(tmp_path),
        **route_options,
    )
    settings = settings or ServerSettings(token=TOKEN)
    return create_app(settings=settings, providers=["adapter.server.routes:core_routes", routes])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with running(_app(tmp_path)) as base:
        yield base


@pytest.fixture
def http(server: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server, headers=headers, timeout=HANG_GUARD) as client:
        yield client


class Viewer:
    """A /ws/pty client that keeps a pyte screen of what it received."""

    def __init__(self, server: str, terminal_id: str, cols: int = 80, rows: int = 24) -> None:
        url = server.replace("http://", "ws://") + f"/ws/pty/{terminal_id}?token={TOKEN}"
        self._connection = ws_client.connect(url, open_timeout=HANG_GUARD)
        self.ws = self._connection.__enter__()
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.controls: list[dict[str, Any]] = []
        self.closed = False

    def pump(self, until: Any, what: str) -> None:
        deadline = time.monotonic() + HANG_GUARD
        while not until(self):
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {self.text()}"
            try:
                frame = self.ws.recv(timeout=0.2)
            except TimeoutError:
                continue
            except websockets.exceptions.ConnectionClosed:
                self.closed = True
                assert until(self), f"closed before {what}"
                return
            if isinstance(frame, bytes):
                self.stream.feed(frame)
            else:
                control = json.loads(frame)
                self.controls.append(control)
                if control["type"] == "resize":
                    self.screen.resize(control["rows"], control["cols"])

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_text(self, needle: str) -> None:
        self.pump(lambda v: needle in v.text(), repr(needle))

    def wait_control(self, kind: str) -> dict[str, Any]:
        self.pump(lambda v: any(c["type"] == kind for c in v.controls), kind)
        return next(c for c in self.controls if c["type"] == kind)

    def send(self, data: bytes | str) -> None:
        """Keystrokes: always a binary frame."""
        self.ws.send(data.encode() if isinstance(data, str) else data)

    def send_text(self, text: str) -> None:
        """A text frame (control)."""
        self.ws.send(text)

    def control(self, **frame: Any) -> None:
        self.ws.send(json.dumps(frame))

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def _prompt(v: Viewer) -> bool:
    return v.text().rstrip().endswith(("$", "#"))


def _answered(output: str) -> Any:
    """The shell printed ``output`` and then its next prompt: after that it stays quiet, so
    every viewer that got this far shows the same screen. (The prompt comes in a later pty
    read than the output; a viewer that stopped reading at ``output`` may lack it.)"""

    def done(v: Viewer) -> bool:
        lines = [line for line in v.text().splitlines() if line.strip()]
        return len(lines) >= 2 and lines[-2] == output and _prompt(v)

    return done


def test_rest_lists_creates_and_stops_terminals(http: httpx.Client, server: str) -> None:
    listing = http.get("/api/terminals").json()
    agents = {a["name"]: a for a in listing["agents"]}
    assert {"claude", "codex", "cursor-agent", "gemini", "copilot", "shell"} <= set(agents)
    assert agents["shell"]["available"] is True
    assert {"available": False, "install_hint": "npm i -g no-such-cli"}.items() <= agents[
        "missing"
    ].items()
    created = http.post("/api/terminals", json={"agent": "shell", "cols": 90, "rows": 20})
    assert 201 == created.status_code
    info = created.json()
    assert ("shell", 90, 20, True) == (info["agent"], info["cols"], info["rows"], info["active"])
    assert info["id"] in [t["id"] for t in http.get("/api/terminals").json()["terminals"]]
    assert info["id"] == http.get(f"/api/terminals/{info['id']}").json()["id"]
    stopped = http.delete(f"/api/terminals/{info['id']}").json()
    assert (False, "stopped", "SIGHUP") == (
        stopped["active"],
        stopped["exit_reason"],
        stopped["exit_signal_name"],
    )
    # Errors are JSON with a status that says why.
    unavailable = http.post("/api/terminals", json={"agent": "missing"})
    assert 409 == unavailable.status_code
    assert "npm i -g no-such-cli" == unavailable.json()["install_hint"]
    assert 400 == http.post("/api/terminals", json={"agent": "vim"}).status_code
    assert 400 == http.post("/api/terminals", json={"agent": "shell", "cols": 0}).status_code
    assert 400 == http.post("/api/terminals", json={"agent": "shell", "x": 1}).status_code
    assert 404 == http.get("/api/terminals/nope").status_code
    assert 404 == http.delete("/api/terminals/nope").status_code
    assert 401 == httpx.get(f"{server}/api/terminals").status_code


def test_two_viewers_share_the_screen_and_a_reconnect_gets_it(
    http: httpx.Client, server: str
) -> None:
    tid = http.post("/api/terminals", json={"agent": "shell"}).json()["id"]
    first, second = Viewer(server, tid), Viewer(server, tid)
    try:
        status = first.wait_control("status")
        assert {"state", "can_type", "cols", "rows", "agent"} <= set(status)
        assert status["can_type"] is True
        first.pump(_prompt, "prompt")
        first.send(b'echo sh""ared-$((20+1))\r')
        for viewer in (first, second):
            viewer.pump(_answered("shared-21"), "shared-21 and the next prompt")
        assert first.text() == second.text()
        second.close()
        # A viewer that reconnects gets the current screen at once, not a replay.
        again = Viewer(server, tid)
        again.pump(_answered("shared-21"), "the screen")
        assert first.text() == again.text()
        again.close()
    finally:
        first.close()
        http.delete(f"/api/terminals/{tid}")


def test_control_frames_resize_signal_status_exit_and_bad_frames(
    http: httpx.Client, server: str
) -> None:
    created = http.post("/api/terminals", json={"agent": "shell"}).json()
    tid = created["id"]
    viewer = Viewer(server, tid)
    try:
        viewer.pump(_prompt, "prompt")
        viewer.control(type="resize", cols=111, rows=33)
        assert {"cols": 111, "rows": 33} == {
            k: v for k, v in viewer.wait_control("resize").items() if k != "type"
        }
        viewer.send('echo "cols=$(tput cols)"\r')
        viewer.wait_text("cols=111")
        viewer.send("sleep 1000\r")
        # The signal goes to the terminal's foreground job: wait until sleep is that job.
        viewer.pump(lambda v: foreground_job(created["pid"], "sleep") is not None, "sleep to start")
        viewer.control(type="signal", signal="SIGINT")
        viewer.send('echo "status=$?"\r')
        viewer.wait_text("status=130")
        for bad in (
            "not json",
            json.dumps({"type": "resize", "cols": "wide"}),
            json.dumps({"type": "signal", "signal": "SIGSEGV"}),
            json.dumps({"type": "teleport"}),
            json.dumps({"type": "resize", "cols": 0, "rows": 10}),
        ):
            viewer.controls.clear()
            viewer.send_text(bad)
            assert "bad_frame" == viewer.wait_control("error")["code"]
        viewer.controls.clear()
        viewer.send(b"x" * (64 * 1024 + 1))
        assert "too_large" == viewer.wait_control("error")["code"]
        viewer.controls.clear()
        viewer.control(type="status")
        assert viewer.wait_control("status")["cols"] == 111
        viewer.control(type="input", data="exit 5\r")
        ended = viewer.wait_control("exit")
        assert (5, "exited") == (ended["code"], ended["reason"])
        viewer.pump(lambda v: v.closed, "close")
    finally:
        viewer.close()


def test_a_failing_terminal_closes_its_viewers_with_a_typed_error_and_only_them(
    http: httpx.Client, server: str
) -> None:
    """The fragile agent's screen hook raises once it prints BOOM (see _helpers)."""
    shell = http.post("/api/terminals", json={"agent": "shell"}).json()["id"]
    fragile = http.post("/api/terminals", json={"agent": "fragile"}).json()["id"]
    calm, doomed = Viewer(server, shell), Viewer(server, fragile)
    try:
        calm.pump(_prompt, "prompt")
        doomed.wait_text("ready")
        doomed.send("boom\r")
        doomed.pump(lambda v: v.closed, "close")
        kinds = [(c["type"], c.get("reason") or c.get("code")) for c in doomed.controls]
        assert kinds[-2:] == [("exit", "failed"), ("error", "failed")]
        assert "ValueError" in doomed.controls[-1]["message"]
        assert "cannot parse" not in doomed.controls[-1]["message"]
        assert 1011 == doomed.ws.close_code
        listed = http.get(f"/api/terminals/{fragile}").json()
        assert (False, "failed") == (listed["active"], listed["exit_reason"])
        # The other terminal, its socket and the server go on.
        calm.send("echo calm-$((1+1))\r")
        calm.wait_text("calm-2")
        assert http.get(f"/api/terminals/{shell}").json()["active"] is True
    finally:
        calm.close()
        doomed.close()
        http.delete(f"/api/terminals/{shell}")


def test_unknown_terminal_auth_and_origin(server: str) -> None:
    base = server.replace("http://", "ws://") + "/ws/pty/nope"
    with ws_client.connect(f"{base}?token={TOKEN}", open_timeout=HANG_GUARD) as ws:
        assert "unknown" == json.loads(ws.recv(timeout=HANG_GUARD))["code"]
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            ws.recv(timeout=HANG_GUARD)
        assert closed.value.rcvd is not None and 4404 == closed.value.rcvd.code
    for url, headers in (
        (base, {}),
        (f"{base}?token=wrong", {}),
        (f"{base}?token={TOKEN}", {"Origin": "http://evil.example"}),
    ):
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_client.connect(url, additional_headers=headers, open_timeout=HANG_GUARD)
        assert refused.value.response.status_code in (401, 403)


@pytest.mark.parametrize("where", ["route", "server settings"])
def test_only_the_first_viewer_types_when_so_configured(tmp_path: Path, where: str) -> None:
    # On the route itself, or for the whole server (`serve --terminal-input first`).
    if where == "route":
        app = _app(tmp_path, input_policy="first")
    else:
        app = _app(tmp_path, ServerSettings(token=TOKEN, terminal_input="first"))
    with running(app) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        tid = httpx.post(
            f"{server}/api/terminals", json={"agent": "shell"}, headers=headers
        ).json()["id"]
        owner, watcher = Viewer(server, tid), Viewer(server, tid)
        try:
            assert owner.wait_control("status")["can_type"] is True
            assert watcher.wait_control("status")["can_type"] is False
            owner.pump(_prompt, "prompt")
            watcher.send(b"echo nope\r")
            assert "read_only" == watcher.wait_control("error")["code"]
            owner.send(b"echo own$((1+1))\r")
            watcher.wait_text("own2")
            owner.close()
            # The watcher is next in line: it is told it may type now.
            watcher.controls.clear()
            watcher.pump(lambda v: any(c.get("can_type") for c in v.controls), "the keyboard")
            watcher.send(b"echo mine$((2+2))\r")
            watcher.wait_text("mine4")
        finally:
            watcher.close()
            owner.close()


_SINK = (
    "import os, signal, sys, tty\n"
    "for name in ('SIGINT', 'SIGQUIT', 'SIGTSTP', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'):\n"
    "    signal.signal(getattr(signal, name), signal.SIG_IGN)\n"
    "tty.setraw(0)\n"  # no echo, no signals from keys: whatever arrives is just read
    "print('sink ready', flush=True)\n"
    "while os.read(0, 65536):\n"
    "    pass\n"
)

_frames = st.lists(
    st.one_of(
        st.binary(max_size=300),
        st.text(max_size=120),
        st.builds(
            json.dumps,
            st.fixed_dictionaries(
                {"type": st.sampled_from(["resize", "signal", "input", "status", "bogus"])},
                optional={
                    "cols": st.one_of(st.integers(-5, 2000), st.text(max_size=5)),
                    "rows": st.one_of(st.integers(-5, 2000), st.none()),
                    "signal": st.text(max_size=8),
                    "data": st.text(max_size=50),
                    "extra": st.integers(),
                },
            ),
        ),
    ),
    max_size=6,
)


@pytest.fixture(scope="module")
def sink(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    agent = Agent(name="sink", command=sys.executable, args=("-c", _SINK), install_hint="")
    home = tmp_path_factory.mktemp("sink")
    routes = make_terminal_routes(
        lambda: TerminalManager(env=shell_env(home), agents={"sink": agent})
    )
    app = create_app(settings=ServerSettings(token=TOKEN), providers=[routes])
    with running(app) as base:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        created = httpx.post(f"{base}/api/terminals", json={"agent": "sink"}, headers=headers)
        yield base, created.json()["id"]


@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(frames=_frames)
def test_hostile_frames_get_errors_and_the_terminal_goes_on(
    sink: tuple[str, str], frames: list[bytes | str]
) -> None:
    base, tid = sink
    viewer = Viewer(base, tid)
    try:
        viewer.wait_control("status")
        for frame in frames:
            viewer.ws.send(frame)
        viewer.controls.clear()
        viewer.control(type="status")
        status = viewer.wait_control("status")
        assert status["can_type"] is True
        assert all(
            c["code"] in ("bad_frame", "too_large") for c in viewer.controls if c["type"] == "error"
        )
    finally:
        viewer.close()
    info = httpx.get(f"{base}/api/terminals/{tid}", headers={"Authorization": f"Bearer {TOKEN}"})
    assert info.json()["active"] is True
