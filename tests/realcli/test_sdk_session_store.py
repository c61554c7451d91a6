"""Real CLI: ``options.session_store`` on the official SDK and on claudecode.sdk.

The CLI mirrors its transcript into the store while it runs (``--session-mirror``); a
resume through the store works from another "machine" (a fresh HOME with no transcript);
a store that fails to append yields a ``MirrorErrorMessage`` and the run goes on.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["claude_agent_sdk", "claudecode.sdk"])
def sdk(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


def _machine(root: Path, fake_api: FakeAnthropicAPI) -> CLIEnv:
    return CLIEnv.create(root, base_url=fake_api.base_url, proxy_url=fake_api.proxy_url)


async def _run(sdk: ModuleType, prompt: str, options: Any) -> list[Any]:
    with anyio.fail_after(90):
        return [message async for message in sdk.query(prompt=prompt, options=options)]


def _options(sdk: ModuleType, cli_command: str, machine: CLIEnv, **kwargs: Any) -> Any:
    env = machine(CLAUDE_CONFIG_DIR=str(machine.home / ".claude"))
    return sdk.ClaudeAgentOptions(cli_path=cli_command, cwd=str(machine.cwd), env=env, **kwargs)


async def test_mirror_then_resume_on_another_machine(
    sdk: ModuleType, cli_command: str, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """The first run fills the store; a second machine (another HOME, same project path)
    resumes from the store alone: the model sees the first turn."""
    fake_api.add_main(text_turn("The secret is 41."), text_turn("It was 41."))
    store = sdk.InMemorySessionStore()
    first = _machine(tmp_path / "one", fake_api)
    messages = await _run(
        sdk, "remember 41", _options(sdk, cli_command, first, session_store=store)
    )
    result = messages[-1]
    assert isinstance(result, sdk.ResultMessage) and not result.is_error
    stored = await sdk.get_session_messages_from_store(
        store, result.session_id, directory=str(first.cwd)
    )
    assert ["user", "assistant"] == [m.type for m in stored]
    assert "The secret is 41." in json.dumps(stored[1].message)

    # Another machine: its own HOME and config dir, the same project path (a checkout).
    second = _machine(tmp_path / "two", fake_api)
    second.cwd.rmdir()
    second.cwd.symlink_to(first.cwd)  # the same directory name, so the same project key
    again = _options(
        sdk,
        cli_command,
        second,
        session_store=store,
        resume=result.session_id,
    )
    again.cwd = str(first.cwd)
    resumed = await _run(sdk, "what was it?", again)
    assert "It was 41." == resumed[-1].result
    last = fake_api.main_requests()[-1].body
    assert "remember 41" in json.dumps(last["messages"])
    assert not (second.home / ".claude" / "projects").exists()


class _FailingStore:
    """A store whose append always fails (and that lists nothing)."""

    def __init__(self) -> None:
        self.attempts = 0

    async def append(self, key: Any, entries: list[Any]) -> None:
        self.attempts += 1
        raise OSError("the store is down")

    async def load(self, key: Any) -> None:
        return None


async def test_failing_store_yields_mirror_error(
    sdk: ModuleType, cli_command: str, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """Append fails: MirrorErrorMessage(s) in the stream, then the result as usual."""
    fake_api.add_main(text_turn("still fine"))
    store = _FailingStore()
    machine = _machine(tmp_path / "m", fake_api)
    messages = await _run(sdk, "hi", _options(sdk, cli_command, machine, session_store=store))
    errors = [m for m in messages if isinstance(m, sdk.MirrorErrorMessage)]
    assert errors and all("the store is down" in e.error for e in errors)
    assert isinstance(errors[0], sdk.SystemMessage) and "mirror_error" == errors[0].subtype
    [result] = [m for m in messages if isinstance(m, sdk.ResultMessage)]
    assert "still fine" == result.result
    assert store.attempts >= 3  # retried before giving the batch up


async def test_store_with_checkpointing_is_refused(sdk: ModuleType, cli_command: str) -> None:
    """session_store with enable_file_checkpointing: a ValueError before anything runs."""
    options = sdk.ClaudeAgentOptions(
        cli_path=cli_command,
        session_store=sdk.InMemorySessionStore(),
        enable_file_checkpointing=True,
    )
    with pytest.raises(ValueError, match="enable_file_checkpointing"):
        await _run(sdk, "hi", options)


@pytest.mark.nats
async def test_resume_from_jetstream_on_another_machine(
    cli_command: str, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """The same with the JetStream store of adapter.cluster on a real nats-server: each
    "machine" has its own connection, HOME and config dir; only NATS is shared."""
    import nats

    import claudecode.sdk as sdk
    from adapter.cluster import LocalNatsServer
    from adapter.cluster.session_store import JetStreamSessionStore

    fake_api.add_main(text_turn("The secret is 41."), text_turn("It was 41."))
    with LocalNatsServer(tmp_path / "nats") as server:
        first = _machine(tmp_path / "one", fake_api)
        nc = await nats.connect(server.url)
        try:
            store = JetStreamSessionStore(nc.jetstream(), prefix="sdkstore")
            options = _options(sdk, cli_command, first, session_store=store)
            result = (await _run(sdk, "remember 41", options))[-1]
        finally:
            await nc.close()
        second = _machine(tmp_path / "two", fake_api)
        nc = await nats.connect(server.url)
        try:
            store = JetStreamSessionStore(nc.jetstream(), prefix="sdkstore")
            again = _options(sdk, cli_command, second, session_store=store)
            again.cwd = str(first.cwd)
            again.resume = result.session_id
            resumed = await _run(sdk, "what was it?", again)
        finally:
            await nc.close()
    assert "It was 41." == resumed[-1].result
    assert "remember 41" in json.dumps(fake_api.main_requests()[-1].body["messages"])
