"""A real browser on a real CopilotKit page (examples/copilotkit, built with vite) served by
the bridge: type a message, approve the tool call from the page, see the reply and the
rendered tool result. Debian's chromium, driven by playwright-core; the screenshot is kept in
tests/artifacts/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerContext, ServerSettings, create_app, parse_agents
from claudecode.testing import fake_cli_command, script, text_block, tool_use_block, turn
from tests.support.servers import running

pytestmark = [pytest.mark.browser, pytest.mark.node, pytest.mark.server, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "copilotkit"
CLIENTS = ROOT / "tests" / "agui_clients"
ARTIFACTS = ROOT / "tests" / "artifacts"


def _require() -> str:
    node = shutil.which("node")
    missing = [
        str(p)
        for p in (
            EXAMPLE / "node_modules" / "vite" / "package.json",
            CLIENTS / "node_modules" / "playwright-core" / "package.json",
            Path(os.environ.get("CHROMIUM", "/usr/bin/chromium")),
        )
        if not p.exists()
    ]
    if node is None or missing:
        reason = (
            f"node, chromium and the page's npm packages are needed ({missing}): "
            "run scripts/install-test-deps"
        )
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return node


def test_a_copilotkit_page_chats_and_approves(tmp_path: Path) -> None:
    """The page loads, the reply streams in, the Bash call is approved from the page and its
    result is rendered; no console or page error. The server offers two agents and the page
    talks to the one its ``?agent=`` names: the CLI starts with that agent's settings."""
    node = _require()
    prebuilt = os.environ.get("CLAUDECODE_BRIDGE_PAGE_DIST")  # a build to reuse (debugging)
    dist = Path(prebuilt) if prebuilt else tmp_path / "dist"
    if not prebuilt:
        subprocess.run(
            [
                node,
                "node_modules/vite/bin/vite.js",
                "build",
                "--outDir",
                str(dist),
                "--logLevel",
                "warn",
            ],
            cwd=EXAMPLE,
            check=True,
            timeout=900,
        )
    work = tmp_path / "work"
    work.mkdir()
    ask = {
        "questions": [
            {
                "question": "Which greeting style should I use?",
                "header": "Style",
                "options": [
                    {"label": "Formal", "description": "Good day."},
                    {"label": "Casual", "description": "Hey!"},
                ],
                "multiSelect": False,
            }
        ]
    }
    body = script(
        turn(
            [
                text_block("One question first."),
                tool_use_block("AskUserQuestion", ask, permission=True),
            ],
            [
                text_block(
                    "No style chosen.",
                    by_answer=(
                        "Which greeting style should I use?",
                        {"Casual": "You chose Casual."},
                    ),
                ),
                tool_use_block(
                    "Bash",
                    {"command": "echo hello-from-bash", "description": "Say hello"},
                    permission=True,
                ),
            ],
            ["All done: the shell printed hello-from-bash."],
        )
    )
    record = tmp_path / "argv.jsonl"
    defaults = SessionConfig(
        cli_path=fake_cli_command({**body, "record_path": str(record)}, tmp_path / "fake"),
        cwd=tmp_path,
        policy=PermissionPolicy("supervised"),
    )
    agents = parse_agents(
        '[agents.default]\n[agents.greeter]\ncwd = "work"\nsystem_prompt = "You greet."\n',
        base_dir=tmp_path,
    )

    def page(ctx: ServerContext) -> list[BaseRoute]:
        return [Mount("/page", app=StaticFiles(directory=dist, html=True))]

    app = create_app(
        settings=ServerSettings(
            session_defaults=defaults, state_dir=tmp_path / "state", agents=agents
        ),
        extra_providers=[page],
    )
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "copilotkit-page.png"
    with running(app) as base:
        done = subprocess.run(
            [node, str(CLIENTS / "browser.mjs"), base + "/page/?agent=greeter", str(screenshot)],
            cwd=CLIENTS,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert 0 == done.returncode, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report.get("error") is None, report
    assert [
        "loaded",
        "connected",
        "question shown",
        "approval shown",
        "reply shown",
        "screenshot",
    ] == report["steps"]
    assert "Which greeting style should I use?" in report["questionText"]
    assert "You chose Casual." in report["bodyText"]
    assert "Bash" in report["approvalText"]
    assert "hello-from-bash" in report["toolResult"]
    assert "All done" in report["bodyText"]
    assert [] == report["pageErrors"]
    assert [] == report["consoleErrors"]
    assert screenshot.stat().st_size > 10_000
    (launch,) = [json.loads(line) for line in record.read_text().splitlines() if '"argv"' in line]
    assert str(work) == launch["cwd"]
    assert "You greet." == launch["argv"][launch["argv"].index("--system-prompt") + 1]
