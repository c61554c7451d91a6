"""The web UI's composer: images pasted or picked (thumbnails, sent as the protocol's
images), the slash-command picker fed by the CLI's command list, Send and Interrupt."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import page_until

from ._webui import open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

PASTE = """(b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
  const ev = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
  document.getElementById("prompt").dispatchEvent(ev);
}"""


def test_images_slash_commands_and_send(tmp_path: Path, browser: Any) -> None:
    body = script(text_turn("hello"), text_turn("I see two images."), text_turn("reviewed"))
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "hi")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('hello')")

        # an image pasted and one picked: thumbnails, removable
        page.evaluate(PASTE, base64.b64encode(PNG).decode())
        page.locator("#attachments img[alt='pasted.png']").wait_for()
        picked = tmp_path / "picked.png"
        picked.write_bytes(PNG)
        page.set_input_files("#attach-input", str(picked))
        page.locator("#attachments img[alt='picked.png']").wait_for()
        not_image = tmp_path / "notes.txt"
        not_image.write_text("x")
        page.set_input_files("#attach-input", str(not_image))
        page.locator("#banner.error", has_text="only PNG, JPEG, GIF and WebP").wait_for()
        assert 2 == page.locator("#attachments img").count()
        page.fill("#prompt", "what are these?")
        shot(page, "images")
        page.click("#composer button[type=submit]")  # the Send button
        page.wait_for_selector(".msg.assistant:has-text('I see two images.')")
        user = page.locator(".msg.user").nth(1)
        assert "what are these?" in user.inner_text()
        assert 2 == user.locator(".thumbs img").count()  # tests/ws/test_webui_images.py: more
        assert page.locator("#attachments").is_hidden()
        assert "" == page.input_value("#prompt")

        # the slash-command picker: the CLI's commands, filtered, chosen by keyboard
        page.locator("#prompt").focus()
        page.keyboard.type("/")
        page.locator("#slash").wait_for()
        assert ["/compact", "/review"] == page.locator("#slash li").all_inner_texts()
        assert "true" == page.get_attribute("#prompt", "aria-expanded")
        page.keyboard.type("re")
        page_until(page, "document.querySelectorAll('#slash li').length === 1")
        shot(page, "slash")
        page.keyboard.press("Enter")
        assert "/review " == page.input_value("#prompt")
        assert page.locator("#slash").is_hidden()
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.user.command:has-text('/review')")
        page.wait_for_selector(".msg.assistant:has-text('reviewed')")
        page.keyboard.type("/co")
        page.keyboard.press("Escape")
        assert page.locator("#slash").is_hidden() and "/co" == page.input_value("#prompt")
        assert [] == page.errors
