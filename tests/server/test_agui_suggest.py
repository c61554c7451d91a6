"""CopilotKit's suggestions are refused with an empty run: the REST ``suggest`` route, the
envelope's ``agent/suggest`` and a run forcing the ``copilotkitSuggest`` tool end at once, and
no Claude Code session is started for them."""

from __future__ import annotations

from pathlib import Path

import httpx

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from adapter.server.agui import verify_events
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.servers import running

from ._sse import parse, run_input, user

SUGGEST = {"toolChoice": {"type": "function", "function": {"name": "copilotkitSuggest"}}}


def test_suggestions_get_an_empty_run_and_start_no_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hi")), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )
    app = create_app(settings=ServerSettings(session_defaults=defaults, state_dir=tmp_path / "s"))
    with running(app) as base, httpx.Client(base_url=base, timeout=60) as http:
        body = run_input(
            "s1", [user("Suggest what the user could say next.")], forwardedProps=SUGGEST
        )
        answers = [
            http.post("/copilotkit/agent/default/suggest", json=body),
            http.post(
                "/copilotkit",
                json={"method": "agent/suggest", "params": {"agentId": "default"}, "body": body},
            ),
            http.post("/agui", json=body),
            http.post("/copilotkit/agent/default/run", json=body),
        ]
        for answer in answers:
            assert 200 == answer.status_code, answer.text
            events = parse(answer.content)
            assert ["RUN_STARTED", "RUN_FINISHED"] == [e["type"] for e in events]
            assert [] == verify_events(events, thread_id=body["threadId"], run_id=body["runId"])
        assert [] == http.get("/api/sessions").json(), "no CLI was started for them"
        unknown = http.post("/copilotkit/agent/nobody/suggest", json=body)
        assert 404 == unknown.status_code
        assert "suggestions" not in http.get("/copilotkit/info").json()
