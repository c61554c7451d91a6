"""history_dir_of: where a backend keeps its stored sessions, asked the same way by every
front end, whatever the Python version.

From Python 3.12 ``isinstance(backend, HistoryBackend)`` only looks the ``history_dir``
property up (``inspect.getattr_static``) and no longer calls it, so a backend whose property
raises (a ``ClusterBackend(history=False)``) counts as one there, while 3.11 calls it and says
no. These tests never rely on either answer: the backends below are built so that a static
look-up finds the property (what 3.12 does) while they keep no history, and the answer must
be "none" all the same.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from adapter import HistoryBackend, LocalBackend, PermissionPolicy, SessionConfig, history_dir_of
from adapter.history.transcripts import project_slug
from adapter.server import ServerSettings, create_app
from adapter.server.ws.endpoint import ws_routes
from claudecode.testing import fake_cli_command, script, text_turn

HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
STORED = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


class _Plain:
    """No ``history_dir`` at all (a backend that never heard of the capability)."""


class _Raises:
    """Made without a history: the property raises, as ``ClusterBackend(history=False)``."""

    @property
    def history_dir(self) -> Path:
        raise AttributeError("this backend keeps no history")


class _Nothing:
    """The property is there and says ``None``: no history."""

    @property
    def history_dir(self) -> Path | None:
        return None


class _Keeps:
    def __init__(self, where: Path | str) -> None:
        self._where = where

    @property
    def history_dir(self) -> Path | str:
        return self._where


def test_a_backend_without_a_history_has_none() -> None:
    """No attribute, a property that raises AttributeError, or one that is None: None."""
    assert history_dir_of(_Plain()) is None
    assert history_dir_of(_Raises()) is None
    assert history_dir_of(_Nothing()) is None


def test_a_backend_with_a_history_says_where(tmp_path: Path) -> None:
    assert tmp_path == history_dir_of(_Keeps(tmp_path))
    assert tmp_path == history_dir_of(_Keeps(str(tmp_path)))  # a str is made a Path


def test_the_answer_does_not_follow_isinstance() -> None:
    """What 3.12's isinstance sees (the property found statically) is there for both
    backends without a history, on every version; ``_Nothing`` is even an instance of the
    protocol on 3.11. The answer is still: no history."""
    for backend in (_Raises(), _Nothing()):
        assert isinstance(inspect.getattr_static(backend, "history_dir"), property)
        assert history_dir_of(backend) is None
    assert isinstance(_Nothing(), HistoryBackend)  # true on every version: not the question


def test_a_cluster_backend_made_without_a_history_has_none() -> None:
    """``ClusterBackend(history=False)`` (nothing connects until it starts): no history,
    although its ``history_dir`` property is found statically; with one: a path."""
    cluster = pytest.importorskip("adapter.cluster")
    settings = cluster.NatsSettings(servers=("nats://127.0.0.1:9",))
    without = cluster.ClusterBackend(settings, history=False)
    assert isinstance(inspect.getattr_static(without, "history_dir"), property)
    assert history_dir_of(without) is None
    with_history = cluster.ClusterBackend(settings)
    assert isinstance(history_dir_of(with_history), Path)


class _LocalWith(LocalBackend):
    """A LocalBackend whose ``history_dir`` is one of the shapes above."""

    def __init__(self, shape: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shape = shape

    @property
    def history_dir(self) -> Any:
        return self._shape.history_dir


@pytest.mark.server
@pytest.mark.parametrize("shape", ["raises", "none", "keeps"])
def test_the_websocket_front_end_lists_the_history_the_backend_says(
    tmp_path: Path, shape: str
) -> None:
    """The ``/ws`` routes are made on any backend; ``list_history`` reads the backend's
    history when it has one, else the CLI's own directory (the sessions' environment)."""
    import websockets.sync.client as ws_client

    from tests.support.servers import running

    work = tmp_path / "work"
    work.mkdir()
    own, kept = tmp_path / "own", tmp_path / "kept"
    where = kept if shape == "keeps" else own
    project = where / "projects" / project_slug(work)
    project.mkdir(parents=True)
    shutil.copyfile(next(HISTORY.glob(f"*/{STORED}.jsonl")), project / f"{STORED}.jsonl")
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("unused")), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
        env={"CLAUDE_CONFIG_DIR": str(own)},
    )
    backend = _LocalWith(
        {"raises": _Raises(), "none": _Nothing(), "keeps": _Keeps(kept)}[shape], defaults
    )
    app = create_app(backend, ServerSettings(session_defaults=defaults), providers=[ws_routes])
    with running(app) as url, ws_client.connect(url.replace("http", "ws") + "/ws") as ws:
        assert "session_list" == json.loads(ws.recv(timeout=60))["type"]
        ws.send(json.dumps({"type": "list_history", "cwd": str(work), "request_id": "h"}))
        history = json.loads(ws.recv(timeout=60))
    assert "history" == history["type"], history
    assert [STORED] == [s["session_id"] for s in history["sessions"]]
