"""Looks and access: axe-core inside the page finds no serious or critical violation on the
landing page, in a conversation, with a permission card and with a question open, at desktop
and phone sizes, in the light and the dark theme; the phone's conversation gets at least 70%
of the height and the page itself does not scroll; the decisions are reachable by keyboard.
Screenshots of every state go to tests/artifacts/webui (CI keeps them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import (
    fake_cli_command,
    script,
    text_block,
    tool_turn,
    tool_use_block,
    turn,
)
from tests.support.browser import axe_violations, open_webui, page_until

from ._webui import ARTIFACTS, NOTIFY_STUB, serve

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

STYLE = "Which greeting style should I use?"
ASK = {
    "questions": [
        {
            "question": STYLE,
            "header": "Style",
            "options": [
                {"label": "Formal", "description": "Good day."},
                {"label": "Casual", "description": "Hey!"},
            ],
            "multiSelect": False,
        }
    ]
}
TODOS = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running"},
    ]
}
REPLY = """Here is the **plan**:

1. read `parser.py`
2. fix the off-by-one

```python
def last(items):
    return items[-1]
```

See [the docs](https://example.com/)."""

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


def body() -> dict[str, Any]:
    return script(
        turn(
            [tool_use_block("TodoWrite", TODOS)],
            [text_block(REPLY)],
        ),
        tool_turn("Bash", {"command": "pytest -q"}, permission=True, result="3 passed"),
        turn(
            [tool_use_block("AskUserQuestion", ASK, permission=True)],
            [text_block("none", by_answer=(STYLE, {"Casual": "Casual it is."}))],
        ),
    )


def check(page: Any, state: str, problems: list[str]) -> None:
    """Record axe's serious and critical findings, and a screenshot of the state."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"access-{state}.png"))
    for v in axe_violations(page):
        problems.append(f"{state}: {v['id']} ({v['impact']}) {v['help']}: {v['nodes'][:3]}")


@pytest.mark.parametrize("size", list(SIZES))
def test_every_state_is_accessible(tmp_path: Path, browser: Any, size: str) -> None:
    width, height = SIZES[size]
    problems: list[str] = []
    with serve(tmp_path, fake_cli_command(body(), tmp_path / "fake")) as url:
        # A phone is a touch device (a coarse pointer), as the page's placeholders know.
        phone = size == "phone"
        page = open_webui(
            browser,
            url + "/",
            init_script=NOTIFY_STUB,
            viewport={"width": width, "height": height},
            reduced_motion="reduce",
            has_touch=phone,
            is_mobile=phone,
        )
        # No "Enter to send" on a touch device: the Send button is the way there.
        assert phone == page.evaluate("matchMedia('(pointer: coarse)').matches")
        placeholders = page.evaluate(
            "[document.getElementById('start-prompt').placeholder,"
            " document.getElementById('prompt').placeholder]"
        )
        if phone:
            assert ["What should Claude work on?", "Message Claude"] == placeholders
        else:
            assert "Enter to send" in placeholders[1]
        check(page, f"{size}-landing", problems)

        # start by keyboard: the prompt has the focus, Enter starts
        page.keyboard.type("plan the fix")
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.assistant:has-text('See')")
        page.wait_for_selector("#todos li")
        check(page, f"{size}-conversation", problems)
        if size == "phone":
            share = page.evaluate("document.getElementById('chat').clientHeight / innerHeight")
            assert share >= 0.7, f"the conversation has {share:.0%} of the height"
            assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight")

        page.fill("#prompt", "run the tests")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".card.permission:not(.closed)")
        page_until(page, "document.title.startsWith('(1)')")
        check(page, f"{size}-permission", problems)
        page.locator("#prompt").focus()
        page.keyboard.press("Shift+Tab")  # backwards from the composer to the card
        for _ in range(40):
            if page.evaluate("document.activeElement.matches('.card.permission button.allow')"):
                break
            page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.activeElement.matches('.card.permission button.allow')")
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.assistant:has-text('Done.')")

        page.fill("#prompt", "greet")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".card.question:not(.closed)")
        check(page, f"{size}-question", problems)
        page.click("#theme")  # auto -> light
        page.click("#theme")  # light -> dark
        assert "dark" == page.evaluate("document.documentElement.dataset.theme")
        check(page, f"{size}-question-dark", problems)
        page.locator(".card.question:not(.closed)").get_by_text("Casual", exact=True).click()
        page.locator(".card.question:not(.closed) button[type=submit]").click()
        page.wait_for_selector(".msg.assistant:has-text('Casual it is.')")
        check(page, f"{size}-conversation-dark", problems)
        page.reload()
        page.wait_for_selector(".msg.assistant:has-text('Casual it is.')")
        assert "dark" == page.evaluate("document.documentElement.dataset.theme"), "kept"
        if size == "phone":
            page.click("#menu")
            page.wait_for_selector("#sidebar.open")
            check(page, f"{size}-sessions-dark", problems)
        page.context.close()
        assert [] == page.errors
    assert [] == problems, "\n".join(problems)
