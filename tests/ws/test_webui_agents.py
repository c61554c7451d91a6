"""The web UI's landing form offers the server's named agents (``serve --agents``): picked
by keyboard, described beside the select (the agents file's text shown as text), and the
session really runs with the agent's settings, as the fake CLI recorded its start; the
session's header and its row in the list name the agent it started from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter.server import parse_agents
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import axe_violations, open_webui, page_until

from ._webui import NOTIFY_STUB, open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

#: An operator's description with markup in it: the page shows it, never runs it.
MARKUP = 'Fixes <img src=x onerror="window.__owned=1"> bugs & <b>tests</b>'


def agents_in(tmp_path: Path) -> Any:
    for name in ("reviewer", "fixer"):
        (tmp_path / name).mkdir(exist_ok=True)
    return parse_agents(
        f"""
        [agents.reviewer]
        description = "Reviews the code; changes nothing"
        cwd = "reviewer"
        model = "model-reviewer"
        policy = "plan"
        system_prompt = "You review code."

        [agents.fixer]
        description = '{MARKUP}'
        cwd = "fixer"
        model = "model-fixer"
        append_system_prompt = "Fix it."
        """,
        base_dir=tmp_path,
    )


def test_a_session_starts_from_the_agent_picked(tmp_path: Path, browser: Any) -> None:
    """The select lists the server's settings and both agents, each described; Tab reaches
    it and the arrow keys pick; the session started runs in the fixer's directory with its
    model (as the session view shows and as the CLI was started); nothing is injected and
    axe finds nothing serious."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("Fixed."), record_path=str(record))
    cli = fake_cli_command(body, tmp_path / "fake")
    with serve(tmp_path, cli, agents=agents_in(tmp_path)) as url:
        page = open_page(browser, url)
        page.wait_for_selector("#start-agent:not([hidden])")
        options = page.locator("#start-agent-select option")
        assert ["(server settings)", "reviewer", "fixer"] == options.all_inner_texts()
        assert "" == page.input_value("#start-agent-select")
        # Keyboard: from the prompt, past the Start button, to the select; arrows pick.
        page.focus("#start-prompt")
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert "start-agent-select" == page.evaluate("document.activeElement.id")
        page.keyboard.press("ArrowDown")
        assert "reviewer" == page.input_value("#start-agent-select")
        about = page.locator("#start-agent-about")
        assert "Reviews the code; changes nothing" == about.inner_text()
        page.keyboard.press("ArrowDown")
        assert "fixer" == page.input_value("#start-agent-select")
        assert MARKUP == page.evaluate("document.getElementById('start-agent-about').textContent")
        assert 0 == page.locator("#start-agent img, #start-agent b").count()
        # Screen readers: the select is named by its label and described by the agent's text.
        described = page.evaluate(
            "document.getElementById("
            "document.getElementById('start-agent-select').getAttribute('aria-describedby')"
            ").id"
        )
        assert "start-agent-about" == described
        assert [] == axe_violations(page)
        shot(page, "agents-picked")
        page.fill("#start-prompt", "fix the bug")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Fixed.')")
        assert str(tmp_path / "fixer") == page.get_attribute("#session-title", "title")
        page_until(page, "document.getElementById('model').value === 'model-fixer'")
        # The header and the session's row say which agent it started from.
        assert "Agent: fixer" == page.inner_text("#session-agent")
        assert ["Agent: fixer"] == page.locator("#sessions .named-agent").all_inner_texts()
        shot(page, "agents-session")
        # A second session, of the reviewer: each row names its own agent, the header the
        # one shown; both survive a reload (they come from the server's session info).
        page.click("#new-chat")
        page.select_option("#start-agent-select", "reviewer")
        page.fill("#start-prompt", "review it")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector("#session-agent:has-text('Agent: reviewer')")
        page.reload()
        page_until(page, "document.querySelectorAll('#sessions .named-agent').length === 2")
        rows = page.locator("#sessions .named-agent").all_inner_texts()
        assert ["Agent: fixer", "Agent: reviewer"] == sorted(rows)
        assert [] == axe_violations(page)
        shot(page, "agents-shown")
        # The form on a phone in the dark theme (the page's "auto" follows the system's).
        phone = open_webui(
            browser,
            url + "/",
            init_script=NOTIFY_STUB,
            viewport={"width": 390, "height": 844},
            color_scheme="dark",
            reduced_motion="reduce",
            has_touch=True,
            is_mobile=True,
        )
        phone.select_option("#start-agent-select", "fixer")
        assert [] == axe_violations(phone)
        shot(phone, "agents-picked-phone-dark")
        assert [] == phone.errors
        phone.context.close()
        assert page.evaluate("window.__owned === undefined")
        assert [] == page.errors
    launch, reviewer = [
        json.loads(line) for line in record.read_text().splitlines() if '"argv"' in line
    ]
    argv = launch["argv"]
    assert str(tmp_path / "fixer") == launch["cwd"]
    assert str(tmp_path / "reviewer") == reviewer["cwd"]
    assert "model-fixer" == argv[argv.index("--model") + 1]
    assert "Fix it." == argv[argv.index("--append-system-prompt") + 1]


def test_no_choice_without_an_agents_file(tmp_path: Path, browser: Any) -> None:
    """A server offering only its own settings ("default") shows no agent select: the form
    is as it was, and a session starts with the server's settings."""
    cli = fake_cli_command(script(text_turn("Hi.")), tmp_path / "fake")
    with serve(tmp_path, cli) as url:
        page = open_page(browser, url)
        page_until(page, "document.querySelectorAll('#start-agent-select option').length === 2")
        assert page.locator("#start-agent").is_hidden()
        page.fill("#start-prompt", "hello")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Hi.')")
        assert str(tmp_path / "work") == page.get_attribute("#session-title", "title")
        # No agent, no name: neither the header nor the row claims one.
        assert page.locator("#session-agent").is_hidden()
        assert 0 == page.locator("#sessions .named-agent").count()
        assert [] == page.errors
