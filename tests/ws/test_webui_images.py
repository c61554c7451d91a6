"""The images a person sent, as thumbnails under their prompt: live, in a second tab, after a
reload, and in a session reopened from its stored transcript; larger on a click; only the
image types the server takes ever drawn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import axe_violations, page_until
from tests.support.servers import running

from ._webui import Remote, open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

# A 2x1 PNG (red, blue) and a 1x1 GIF.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4zwAE/wEHAAH/"
    "4iOeWQAAAABJRU5ErkJggg=="
)
GIF = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="

PASTE = """([png, gif]) => {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const file = (b64, name, type) => new File([bytes(b64)], name, { type });
  const data = new DataTransfer();
  data.items.add(file(png, "red-blue.png", "image/png"));
  data.items.add(file(gif, "dot.gif", "image/gif"));
  const ev = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
  document.getElementById("prompt").dispatchEvent(ev);
}"""
THUMBS = ".msg.user .thumbs img"
#: The thumbnails' sources once all are drawn.
SOURCES = "[...document.querySelectorAll('.msg.user .thumbs img')].map((i) => i.src)"


def wait_thumbs(page: Any, n: int) -> list[str]:
    page_until(page, f"{SOURCES}.filter((s) => s.startsWith('data:image/')).length === {n}")
    sources: list[str] = page.evaluate(SOURCES)
    return sources


def test_sent_images_show_as_thumbnails_everywhere(tmp_path: Path, browser: Any) -> None:
    body = script(text_turn("hello"), text_turn("I see two images."))
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "hi")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('hello')")
        page.evaluate(PASTE, [PNG, GIF])
        page_until(page, "document.querySelectorAll('#attachments img').length === 2")
        page.fill("#prompt", "what are these?")
        page.click("#composer button[type=submit]")
        page.wait_for_selector(".msg.assistant:has-text('I see two images.')")

        # the sender's tab: both images, with alt text, as the data sent
        expected = [f"data:image/png;base64,{PNG}", f"data:image/gif;base64,{GIF}"]
        assert expected == wait_thumbs(page, 2)
        alts = page.locator(THUMBS).evaluate_all("(imgs) => imgs.map((i) => i.alt)")
        assert ["Image 1 of 2 you sent", "Image 2 of 2 you sent"] == alts
        assert 96 == page.locator(THUMBS).first.evaluate("(i) => i.getBoundingClientRect().width")

        # a click shows it larger; Escape closes it and does not interrupt anything
        page.locator(".thumb-view").first.click()
        viewer = page.locator("#image-viewer")
        viewer.wait_for()
        assert expected[0] == viewer.locator("img").get_attribute("src")
        assert viewer.locator("img").evaluate("(i) => i.getBoundingClientRect().width") > 96
        shot(page, "image-viewer")
        assert [] == axe_violations(page)
        page.keyboard.press("Escape")
        viewer.wait_for(state="hidden")
        assert page.evaluate("document.activeElement.classList.contains('thumb-view')")

        # a second tab on the session's address, and a reload: the same thumbnails
        sid = page.evaluate("window.ccbState.current")
        other = open_page(browser, url)
        other.goto(f"{url}/#/s/{sid}")
        assert expected == wait_thumbs(other, 2)
        page.reload()
        page.wait_for_selector(".msg.assistant:has-text('I see two images.')")
        assert expected == wait_thumbs(page, 2)
        shot(page, "images-sent")
        assert [] == axe_violations(page)

        # the protocol: an image not kept is refused in words, not drawn
        remote = Remote(url)
        entry = page.locator(".msg.user", has_text="what are these?").get_attribute("data-id")
        got = remote.request(
            {"type": "get_image", "session_id": sid, "entry_id": entry, "index": 1}
        )
        assert ("image", "image/gif", GIF) == (got["type"], got["media_type"], got["data"])
        gone = remote.request(
            {"type": "get_image", "session_id": sid, "entry_id": entry, "index": 2}
        )
        assert ("error", "bad_request") == (gone["type"], gone["code"])
        unknown = remote.request({"type": "get_image", "session_id": "nope", "entry_id": entry})
        assert "unknown_session" == unknown["code"]
        remote.conn.close()
        assert [] == page.errors and [] == other.errors


STORED = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
RECORDED_CWD = "/tmp/pytest-of-root/pytest-3/test_history_files_are_written0/cli/work"


def test_images_of_a_stored_session_show_when_it_is_reopened(tmp_path: Path, browser: Any) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "claude-config"
    project = config / "projects" / "-work-demo"
    project.mkdir(parents=True)
    source = next((STORED / "-work-demo").glob("*.jsonl"))
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    # markup posing as an image: never drawn (not a type the server takes)
    hostile = {
        "type": "image",
        "source": {"type": "base64", "media_type": "text/html", "data": "PHNjcmlwdD4="},
    }
    first = {"role": "user", "content": [image, {"type": "text", "text": "say hello"}]}
    second = {"role": "user", "content": [hostile, {"type": "text", "text": "do the work"}]}
    text = source.read_text().replace(RECORDED_CWD, str(work))
    text = text.replace(
        '"message":{"role":"user","content":"say hello"}', '"message":' + json.dumps(first)
    )
    text = text.replace(
        '"message":{"role":"user","content":"do the work"}', '"message":' + json.dumps(second)
    )
    (project / source.name).write_text(text)
    cli = fake_cli_command(script(text_turn("a reply")), tmp_path / "fake")
    defaults = SessionConfig(
        cli_path=cli, cwd=work, env={"CLAUDE_CONFIG_DIR": str(config)}, policy=PermissionPolicy()
    )
    with running(create_app(settings=ServerSettings(session_defaults=defaults))) as url:
        page = open_page(browser, url)
        page.locator("#history li", has_text="say hello").locator(
            "button", has_text="Resume"
        ).click()
        page.wait_for_selector(".msg.assistant:has-text('All done.')")
        assert [f"data:image/png;base64,{PNG}"] == wait_thumbs(page, 1)
        assert "Image you sent" == page.locator(THUMBS).first.get_attribute("alt")
        work_prompt = page.locator(".msg.user", has_text="do the work")
        work_prompt.locator(".sel", has_text="not kept").wait_for()
        assert 0 == work_prompt.locator("img").count()
        shot(page, "images-resumed")
        assert [] == axe_violations(page)
        assert [] == page.errors
