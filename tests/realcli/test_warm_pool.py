"""A warm pool of the real CLI (fake Messages API): a pooled CLI, started and initialized
ahead, answers the first prompt of the session it is handed to, and the pool's CLIs are
stopped and reaped with the backend."""

from __future__ import annotations

import os

import anyio
import pytest

from adapter.backend import SessionSpec
from adapter.config import SessionConfig
from adapter.events import Complete, MessageChunk
from adapter.local import LocalBackend
from adapter.policies import PermissionPolicy
from benchmarks import procfs

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def until_warm(backend: LocalBackend) -> None:
    while True:
        if backend.pool_status().warm >= 1:
            return
        await anyio.sleep(0.05)


async def test_a_pooled_real_cli_answers_the_first_prompt(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    fake_api.add_main(text_turn("from the warm one"))
    defaults = SessionConfig(
        cli_path=cli_command,
        cwd=cli_env.cwd,
        env=cli_env(),
        policy=PermissionPolicy("autonomous"),
        client_options={"inherit_env": False, "control_timeout": 30.0, "spawn_timeout": 30.0},
    )
    before = set(procfs.descendants(os.getpid()))  # the network namespace's keeper
    with anyio.fail_after(120):
        async with LocalBackend(defaults, warm=1) as backend:
            await until_warm(backend)
            info = await backend.create(SessionSpec())
            assert 1 == backend.pool_status().in_use
            texts: list[str] = []
            async with backend.subscribe(info.id, after_seq=0) as events:
                await backend.prompt(info.id, "hello")
                async for event in events:
                    if isinstance(event, MessageChunk):
                        texts.append(event.text)
                    if isinstance(event, Complete):
                        assert event.result == "from the warm one"
                        break
            assert "from the warm one" == "".join(texts)
            # The replacement starts in the background.
            await until_warm(backend)
            pids = set(procfs.descendants(os.getpid())) - before
            assert len(pids) >= 2  # the session's CLI and the pool's new one
    assert [] == [pid for pid in pids if procfs.running(pid)]
