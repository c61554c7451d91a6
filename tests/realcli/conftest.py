"""Fixtures for tests that run the real Claude Code CLI against the fake Messages API.

Typical use::

    @pytest.mark.realcli
    def test_it(cli_command, fake_api, cli_env):
        fake_api.add_main(text_turn("hello"))
        argv = [cli_command, *STREAM_JSON_ARGS]
        proc = subprocess.Popen(argv, env=cli_env(), cwd=cli_env.cwd, ...)

``cli_command`` runs the CLI inside a private network namespace where only loopback exists,
and ``fake_api`` listens inside that same namespace, so the test process itself cannot reach
the fake API over HTTP (use the recorded requests instead).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .cli import CLIEnv, find_real_cli
from .fake_api import FakeAnthropicAPI
from .netns import NetNamespace


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def netns() -> Iterator[NetNamespace]:
    """The session's private network namespace (``netns.isolated`` says whether it worked).

    Set ``CLAUDECODE_BRIDGE_NO_NETNS=1`` to run on the host's loopback instead (debugging).
    """
    if os.environ.get("CLAUDECODE_BRIDGE_NO_NETNS"):
        ns = NetNamespace.unavailable("disabled by CLAUDECODE_BRIDGE_NO_NETNS")
    else:
        ns = NetNamespace.create()
    try:
        yield ns
    finally:
        ns.close()


@pytest.fixture(scope="session")
def real_cli() -> Path:
    """Path of the real ``claude`` executable; skips the test when there is none.

    ``CLAUDE_CODE_CLI`` if set, else the pinned install of ``scripts/install-claude-cli``.
    Under CI (``CI`` or ``CLAUDECODE_BRIDGE_REQUIRE_CLI`` set to a true value) a missing CLI
    fails the test instead, so real-CLI tests cannot silently stop running there.
    """
    path, reason = find_real_cli()
    if path is None:
        if _truthy("CLAUDECODE_BRIDGE_REQUIRE_CLI") or _truthy("CI"):
            pytest.fail(f"the real CLI is required here: {reason}", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def cli_command(
    real_cli: Path, netns: NetNamespace, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """The command that runs the real CLI: a wrapper entering ``netns``, or the CLI itself.

    Spawning it gives the CLI's own PID (the wrapper ``exec``s), so tests may signal it.
    """
    return str(netns.wrap(real_cli, tmp_path_factory.mktemp("cli-wrapper")))


@pytest.fixture
def fake_api(netns: NetNamespace) -> Iterator[FakeAnthropicAPI]:
    """A started :class:`FakeAnthropicAPI` (empty script) listening inside ``netns``."""
    with FakeAnthropicAPI(listen=netns.listen) as api:
        yield api


@pytest.fixture
def cli_env(fake_api: FakeAnthropicAPI, tmp_path: Path) -> CLIEnv:
    """Private HOME / working dir / temp dir under ``tmp_path`` and an environment builder.

    ``cli_env()`` returns the environment dict; ``cli_env(NAME="v", OTHER=None)`` overrides.
    """
    return CLIEnv.create(tmp_path / "cli", base_url=fake_api.base_url, proxy_url=fake_api.proxy_url)


@pytest.fixture
def cli_options(cli_command: str, cli_env: CLIEnv) -> Any:
    """A builder of :class:`claudecode.ClaudeCodeOptions` for the real CLI in this test.

    ``cli_options(model="x", env_overrides={"CLAUDE_CODE_MAX_RETRIES": "1"})`` — keyword
    arguments go to the options; the environment is the private one from ``cli_env``.
    """
    from claudecode.options import ClaudeCodeOptions

    def build(env_overrides: dict[str, str | None] | None = None, **kwargs: Any) -> Any:
        kwargs.setdefault("control_timeout", 30.0)
        kwargs.setdefault("spawn_timeout", 30.0)
        kwargs.setdefault("close_grace", 10.0)
        return ClaudeCodeOptions(
            cli_path=cli_command,
            cwd=cli_env.cwd,
            env=cli_env(**(env_overrides or {})),
            inherit_env=False,
            **kwargs,
        )

    return build
