"""pytest plugin for the vendored e2e tests, loaded with ``-p harness`` in the interpreter
test_upstream.py starts: the pinned real CLI (``CLAUDE_CODE_CLI``, in a private network
namespace) against the fake Messages API, a fresh HOME and working directory per test, and
the fake model's side of each test from :mod:`e2e_scripts`.

``claude_agent_sdk`` is whatever the interpreter imports under that name: the drop-in when
the ``shim`` directory leads ``PYTHONPATH``, the official SDK otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_scripts import script_for

from tests.realcli.cli import CLIEnv, find_real_cli
from tests.realcli.fake_api import FakeAnthropicAPI
from tests.realcli.netns import NetNamespace


def _is_official() -> bool:
    import claude_agent_sdk

    return bool(claude_agent_sdk.__name__ == "claude_agent_sdk")


@pytest.fixture(scope="session")
def _fake_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeAnthropicAPI, str]]:
    cli, reason = find_real_cli()
    if cli is None:
        pytest.fail(f"the real CLI is required: {reason}", pytrace=False)
    netns = (
        NetNamespace.unavailable("disabled")
        if os.environ.get("CLAUDECODE_BRIDGE_NO_NETNS")
        else NetNamespace.create()
    )
    try:
        with FakeAnthropicAPI(listen=netns.listen) as api:
            wrapper = netns.wrap(cli, tmp_path_factory.mktemp("cli-wrapper"))
            yield api, str(wrapper)
    finally:
        netns.close()


@pytest.fixture(autouse=True)
def _fake_model(
    _fake_world: tuple[FakeAnthropicAPI, str],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeAnthropicAPI:
    """This test's script, and the environment every CLI it starts inherits."""
    api, cli = _fake_world
    api.set_script(script_for(request.node.originalname))
    env = CLIEnv.create(
        tmp_path_factory.mktemp("cli"), base_url=api.base_url, proxy_url=api.proxy_url
    )
    for name, value in env().items():
        if name != "PATH":
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("CLAUDE_CODE_CLI", cli)
    if _is_official():
        # The reference run: the official SDK would start the CLI bundled in its wheel,
        # outside the test's network namespace; it finds the pinned one on PATH instead.
        from claude_agent_sdk._internal.transport import subprocess_cli

        monkeypatch.setattr(
            subprocess_cli.SubprocessCLITransport, "_find_bundled_cli", lambda self: None
        )
        monkeypatch.setenv("PATH", f"{Path(cli).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(env.cwd)
    # Tests that read "." (the SDK's own checkout) find a tests/ and a src/ tree there.
    for directory in ("src/claude_agent_sdk", "tests"):
        (Path(env.cwd) / directory).mkdir(parents=True)
    return api
