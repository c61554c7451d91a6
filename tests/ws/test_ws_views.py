"""SessionViews: a view keeps following its session through a spell of an unavailable
backend (a gateway that lost NATS), so the snapshots taken afterwards are whole."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from adapter import Complete, LocalBackend, PermissionPolicy, SessionConfig, SessionSpec
from adapter.chat import AssistantText, ChatSnapshot
from adapter.server.ws import views
from adapter.server.ws.views import SessionViews
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from ._flaky import Flaky

pytestmark = pytest.mark.anyio


def texts(snapshot: ChatSnapshot) -> list[str]:
    return [e.text for e in snapshot.entries if isinstance(e, AssistantText)]


async def test_a_view_follows_again_once_the_backend_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "UNAVAILABLE_RETRY_SECONDS", 0.05, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    cli = fake_cli_command(script(text_turn("first reply"), text_turn("second reply")), tmp_path)
    defaults = SessionConfig(cli_path=str(cli), cwd=work, policy=PermissionPolicy("supervised"))
    with anyio.fail_after(HANG_GUARD):
        async with LocalBackend(defaults) as inner:
            backend = Flaky(inner)
            async with SessionViews(backend).running() as session_views:  # type: ignore[arg-type]
                info = await backend.create(SessionSpec())
                session_views.snapshot(info.id)  # follow it
                await backend.prompt(info.id, "hello")
                await eventually(lambda: texts(session_views.snapshot(info.id)) == ["first reply"])
                backend.down = True
                await backend.prompt(info.id, "more")
                async with inner.subscribe(info.id, after_seq=0) as events:
                    done = 0
                    while done < 2:  # both turns' complete events were published
                        batch = await events.receive_batch()
                        done += sum(1 for e in batch if isinstance(e, Complete))
                await anyio.sleep(0.2)  # the follower failed and retries meanwhile
                backend.down = False
                both = ["first reply", "second reply"]
                await eventually(lambda: texts(session_views.snapshot(info.id)) == both)
