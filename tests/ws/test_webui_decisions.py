"""Decisions in the web UI: an approval reads as a decision (waiting, then allowed or denied
by you, folded into its tool card; a denial is not an error), a new card comes into view and
the tab title says a decision waits; the agent's questions are a form (radio buttons,
checkboxes, "Other" free text) whose answer the CLI reads back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import (
    fake_cli_command,
    script,
    text_block,
    text_turn,
    tool_turn,
    tool_use_block,
    turn,
)
from tests.support.browser import page_until

from ._webui import open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

STYLE = "Which greeting style should I use?"
EXTRAS = "Which extras should the greeting have?"


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is inside the chat's visible area."""
    return bool(
        page.evaluate(
            """(sel) => {
              const n = document.querySelector(sel), c = document.getElementById('chat');
              const a = n.getBoundingClientRect(), b = c.getBoundingClientRect();
              return a.top >= b.top - 1 && a.bottom <= b.bottom + 1; }""",
            selector,
        )
    )


def test_approvals_read_like_decisions(tmp_path: Path, browser: Any) -> None:
    filler = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(40))
    body = script(
        text_turn(filler),
        tool_turn("Bash", {"command": "echo hi"}, permission=True, result="hi"),
        tool_turn("Bash", {"command": "rm -rf ./precious"}, permission=True, after="Kept."),
    )
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "a long answer first")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Paragraph 39')")
        assert "claudecode-bridge" == page.title()

        page.fill("#prompt", "run it")
        page.press("#prompt", "Enter")
        card = ".card.permission:not(.closed)"
        page.wait_for_selector(card)
        tool = page.locator(".card.kind-shell_exec").first
        assert "waiting for approval" == tool.locator(".status").inner_text()
        assert "echo hi" in page.locator(card).inner_text()  # what it would run, not JSON
        page_until(page, "document.title.startsWith('(1) Decision waiting')")
        assert in_view(page, card), "the new card is scrolled into view"
        shot(page, "permission")
        page.locator(card).locator("button.allow").click()
        page.wait_for_selector(".msg.assistant:has-text('Done.')")
        assert "complete" == tool.locator(".status").inner_text()
        assert "Allowed by you" == tool.locator(".decision").inner_text()
        assert 0 == page.locator(".card.permission").count(), "folded into the tool card"
        page_until(page, "document.title === 'claudecode-bridge'")

        page.fill("#prompt", "delete it")
        page.press("#prompt", "Enter")
        page.wait_for_selector(card)
        page.locator(card).locator("input[name=message]").fill("Keep that directory.")
        page.locator(card).locator("button.deny").click()
        page.wait_for_selector(".msg.assistant:has-text('Kept.')")
        denied = page.locator(".card.kind-shell_exec").nth(1)
        assert "denied" == denied.locator(".status").inner_text()
        assert "Denied by you" == denied.locator(".decision").inner_text()
        assert 0 == page.locator("#chat .note.error, #chat .status.error").count()
        assert "error" not in page.inner_text("#chat").lower()
        shot(page, "decisions")
        assert [] == page.errors


def test_a_question_is_a_form(tmp_path: Path, browser: Any) -> None:
    ask = {
        "questions": [
            {
                "question": STYLE,
                "header": "Style",
                "options": [
                    {"label": "Formal", "description": "Good day."},
                    {"label": "Casual", "description": "Hey!"},
                ],
                "multiSelect": False,
            },
            {
                "question": EXTRAS,
                "header": "Extras",
                "options": [{"label": "Emoji"}, {"label": "Signature"}],
                "multiSelect": True,
            },
        ]
    }
    named = {"Casual": "Casual it is: hey there!", "Formal": "Formal it is: good day."}
    body = script(
        turn(
            [tool_use_block("AskUserQuestion", ask, permission=True)],
            [text_block("No style chosen.", by_answer=(STYLE, named))],
        )
    )
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "greet me")
        page.press("#start-prompt", "Enter")
        form = page.locator(".card.question:not(.closed) form")
        form.wait_for()
        assert 0 == page.locator(".card.permission, .card.tool").count(), "no JSON, no tool card"
        assert 3 == form.locator("input[type=radio]").count()  # two options and Other
        assert 3 == form.locator("input[type=checkbox]").count()
        assert "Hey!" in form.inner_text()
        page_until(page, "document.title.startsWith('(1) Decision waiting')")
        shot(page, "question")
        form.get_by_text("Casual", exact=True).click()
        form.locator("button[type=submit]").click()
        assert "Choose an answer for: " + EXTRAS == form.locator("[role=alert]").inner_text()
        form.get_by_text("Emoji", exact=True).click()
        form.get_by_label("Other answer for: " + EXTRAS).fill("a joke")
        form.locator("button[type=submit]").click()
        page.wait_for_selector(".msg.assistant:has-text('Casual it is')")
        answered = page.locator(".card.question.closed")
        assert "Answered by you" in answered.inner_text()
        assert "Casual" in answered.inner_text() and "Emoji, a joke" in answered.inner_text()
        entry = page.evaluate(
            "[...window.ccbState.chats.get(window.ccbState.current).entries.values()]"
            ".find((e) => e.kind === 'question')"
        )
        assert {STYLE: ["Casual"], EXTRAS: ["Emoji", "a joke"]} == entry["answers"]
        assert [] == page.errors
