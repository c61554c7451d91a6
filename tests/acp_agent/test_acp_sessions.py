"""ACP session lifecycle beyond new/load: session/resume (no replay), session/delete,
additionalDirectories (the CLI's --add-dir), every CLI permission mode, the title from the
first prompt and compaction notices; over the in-process LocalBackend and the fake CLI, every
message checked against the ACP schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.acp.agent import AcpAgent, AgentOptions
from adapter.acp.config_options import config_options, effort_levels, model_options
from adapter.acp.translate import UpdateTranslator
from adapter.config import SessionConfig
from adapter.events import CompactBoundary, ModelChoice, UserMessage
from adapter.history import project_slug
from adapter.local import LocalBackend
from adapter.policies import PermissionPolicy
from claudecode.options import EFFORT_LEVELS
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.acp_schema import errors_of

from .memory_client import Client

pytestmark = pytest.mark.anyio

HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
STORED = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


async def test_resume_delete_and_additional_directories(tmp_path: Path) -> None:
    record = tmp_path / "argv.jsonl"
    body = {**script(text_turn("fine"), text_turn("again")), "record_path": str(record)}
    cli = fake_cli_command(body, tmp_path / "fake")
    config = tmp_path / "config"
    work = tmp_path / "work"
    work.mkdir()
    project = config / "projects" / project_slug(work)
    project.mkdir(parents=True)
    stored = next(HISTORY.glob(f"*/{STORED}.jsonl"))
    (project / stored.name).write_bytes(stored.read_bytes())
    extra = tmp_path / "extra"
    extra.mkdir()
    options = AgentOptions(policy="autonomous", env={"CLAUDE_CONFIG_DIR": str(config)})
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("autonomous"))
    client = Client()
    with anyio.fail_after(60):
        async with (
            LocalBackend(defaults, idle_timeout=None) as backend,
            anyio.create_task_group() as tg,
        ):
            agent = AcpAgent(backend, client.agent_sends, options)
            tg.start_soon(agent.serve, client.chunks())
            init = await client.answer(await client.request("initialize", {"protocolVersion": 1}))
            capabilities = init["result"]["agentCapabilities"]["sessionCapabilities"]
            assert {"resume", "delete", "additionalDirectories", "close", "list"} <= set(
                capabilities
            )

            relative = {"cwd": str(work), "mcpServers": [], "additionalDirectories": ["rel"]}
            bad = await client.answer(await client.request("session/new", relative))
            assert -32602 == bad["error"]["code"], bad

            resume = {
                "sessionId": STORED,
                "cwd": str(work),
                "mcpServers": [],
                "additionalDirectories": [str(extra)],
            }
            resumed = await client.answer(await client.request("session/resume", resume))
            assert "result" in resumed, resumed
            assert [] == client.updates("user_message_chunk"), "resume replays nothing"
            ids = {m["id"] for m in resumed["result"]["modes"]["availableModes"]}
            assert {"default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"} == ids
            prompt = {
                "sessionId": STORED,
                "prompt": [{"type": "text", "text": "Hello there\nmore"}],
            }
            done = await client.answer(await client.request("session/prompt", prompt))
            assert {"stopReason": "end_turn"} == done["result"]
            assert [{"sessionUpdate": "session_info_update", "title": "Hello there"}] == (
                client.updates("session_info_update")
            )
            argv = json.loads(record.read_text().splitlines()[0])["argv"]
            assert ["--add-dir", str(extra)] == argv[argv.index("--add-dir") :][:2], argv
            assert any(STORED in arg for arg in argv if arg.startswith("--resume")), argv

            delete = {"sessionId": STORED}
            refused = await client.answer(await client.request("session/delete", delete))
            assert -32600 == refused["error"]["code"], "an open session is not deleted"
            await client.answer(await client.request("session/close", delete))
            deleted = await client.answer(await client.request("session/delete", delete))
            assert {} == deleted["result"]
            assert not (project / stored.name).exists()
            listed = await client.answer(await client.request("session/list", {}))
            assert [] == listed["result"]["sessions"]
            gone = await client.answer(await client.request("session/delete", delete))
            assert -32002 == gone["error"]["code"]
            await client.inbox_send.aclose()


def test_title_and_compaction_updates_follow_the_schema() -> None:
    translator = UpdateTranslator()
    updates: list[dict[str, Any]] = []
    for event in (
        UserMessage(text="  \n"),
        UserMessage(text="Fix the tests\nplease", seq=2),
        UserMessage(text="again", seq=3),
        CompactBoundary(trigger="auto", seq=4),
    ):
        updates += translator.updates(event)
    assert ["session_info_update", "compaction_update", "notice"] == [
        u["sessionUpdate"] for u in updates
    ]
    assert "Fix the tests" == updates[0]["title"]
    for update in updates:
        note = {"sessionId": "s", "update": update}
        assert [] == errors_of("SessionNotification", note)
    replayed = UpdateTranslator(replay=True).updates(UserMessage(text="x"))
    assert ["user_message_chunk"] == [u["sessionUpdate"] for u in replayed], "no title"


def test_the_model_option_follows_the_clis_list() -> None:
    aliases = model_options(None, None, [])[0]
    assert ["default", "sonnet", "opus", "haiku"] == [o["value"] for o in aliases["options"]]
    listed = [
        ModelChoice(value="default", name="Default"),
        ModelChoice(value="fable", name="Fable"),
    ]
    [option] = model_options("custom-1", "pinned", listed)
    assert ["default", "fable", "pinned", "custom-1"] == [o["value"] for o in option["options"]]
    assert "custom-1" == option["currentValue"]
    update = {"sessionUpdate": "config_option_update", "configOptions": [option]}
    assert [] == errors_of("SessionNotification", {"sessionId": "s", "update": update})


_LEVELS = st.lists(st.sampled_from(["low", "medium", "high", "xhigh", "max"]), unique=True)
_MODELS = st.lists(
    st.builds(
        ModelChoice,
        value=st.sampled_from(["default", "opus", "haiku", "fable"]),
        name=st.text(max_size=8),
        effort_levels=_LEVELS,
    ),
    max_size=4,
    unique_by=lambda m: m.value,
)


@given(
    _MODELS,
    st.none() | st.sampled_from(["default", "opus", "claude-x-1"]),
    st.none() | st.sampled_from(["low", "max", "medium"]),
)
def test_the_options_are_valid_acp_whatever_the_clis_list(
    models: list[ModelChoice], model: str | None, effort: str | None
) -> None:
    """Every config_option_update the agent can send is valid ACP; the effort option, when
    there is one, is a thought_level select whose current value is one of its values, and
    lists the levels the CLI names for the current model (all of them before it listed
    any, or for a model it does not list); a model without effort levels has no option."""
    options = config_options(model=model, configured_model=None, models=models, effort=effort)
    update = {"sessionUpdate": "config_option_update", "configOptions": options}
    assert [] == errors_of("SessionNotification", {"sessionId": "s", "update": update})
    efforts = [o for o in options if o["id"] == "effort"]
    listed = next((m for m in models if m.value == (model or "default")), None)
    if listed is not None and not listed.effort_levels:
        assert [] == efforts
        return
    (option,) = efforts
    values = [o["value"] for o in option["options"]]
    assert "thought_level" == option["category"] and option["currentValue"] in values
    expected = list(EFFORT_LEVELS) if listed is None else listed.effort_levels
    assert set(expected) <= set(values) <= {"default", *expected, *([effort] if effort else [])}
    assert effort_levels(model, models) == [v for v in EFFORT_LEVELS if v in expected]
