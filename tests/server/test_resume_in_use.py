"""A resume refused because the CLI session is held (CliSessionInUseError), as the shared
server's front ends answer it over real HTTP: the REST API 409 with a JSON error body, an
AG-UI run RUN_ERROR."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from claudecode.testing import script, text_turn
from tests.support.servers import running

from ._agui import app_for, valid
from ._sse import post_stream, run_input, user

pytestmark = pytest.mark.server


def stored_cli_session(tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "state" / "agui-threads.sqlite3") as db:
        ((cli_session_id,),) = db.execute("SELECT cli_session_id FROM threads").fetchall()
    assert isinstance(cli_session_id, str) and cli_session_id
    return cli_session_id


def test_a_held_cli_session_is_409_over_rest_and_run_error_over_agui(tmp_path: Path) -> None:
    """While an AG-UI thread's session holds its CLI session, a REST resume of it is 409
    with a JSON body naming it (a fork is 201). After a restart a REST session resumes it
    first: the thread's next run, which resumes it too, ends with RUN_ERROR naming it; once
    that session is closed, the thread runs again."""
    body = script(text_turn("one"), text_turn("two"))
    with running(app_for(tmp_path, body)) as url, httpx.Client(base_url=url, timeout=60) as http:
        post_stream(http, "/agui", run_input("t-held", [user("first", "u1")]))
        [listed] = http.get("/api/sessions").json()
        held = listed["cli_session_id"]
        assert held
        refused = http.post("/api/sessions", json={"resume": held})
        assert 409 == refused.status_code
        assert refused.headers["content-type"].startswith("application/json")
        assert held in refused.json()["error"]
        assert 201 == http.post("/api/sessions", json={"resume": held, "fork": True}).status_code
    assert held == stored_cli_session(tmp_path)
    with running(app_for(tmp_path, body)) as url, httpx.Client(base_url=url, timeout=60) as http:
        rest = http.post("/api/sessions", json={"resume": held})
        assert 201 == rest.status_code
        run_body = run_input("t-held", [user("first", "u1"), user("second", "u2")])
        _, events = post_stream(http, "/agui", run_body)
        valid(events, run_body)
        assert "RUN_ERROR" == events[-1]["type"]
        assert held in events[-1]["message"]
        assert 200 == http.delete(f"/api/sessions/{rest.json()['id']}").status_code
        again_body = run_input("t-held", [user("first", "u1"), user("third", "u3")])
        _, again = post_stream(http, "/agui", again_body)
        valid(again, again_body)
        assert "RUN_FINISHED" == again[-1]["type"]
