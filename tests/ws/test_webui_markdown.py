"""The web UI shows the model's Markdown formatted, and hostile Markdown inert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.browser import page_until

from ._webui import open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")


MARKDOWN = """**bold** and *soft*

- one
- two

```python
print("hi")
```

| a | b |
|---|---|
| 1 | 2 |

[click me](javascript:window.pwned=1) [site](https://example.com/)
![pic](https://example.invalid/x.png)

<img src=x onerror="window.pwned=2"><script>window.pwned=3</script>
<a href="javascript:window.pwned=4">raw</a>
"""


def test_markdown_is_rendered_and_inert(tmp_path: Path, browser: Any) -> None:
    """The model's Markdown is formatted (bold, list, table, a code block with a copy button);
    hostile parts stay inert: a javascript: link loses its address, raw HTML shows as text,
    an image is a link (nothing fetched); a long tool output is folded with "Show all"."""
    long_output = "\n".join(f"line {i}" for i in range(1, 101))
    body = script(
        text_turn(MARKDOWN),
        tool_turn("Bash", {"command": "seq 100"}, result=long_output, after="**Done**."),
    )
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.fill("#start-prompt", "format something")
        page.press("#start-prompt", "Enter")
        reply = page.locator(".msg.assistant").first
        reply.locator("table").wait_for()
        assert "bold" == reply.locator("strong").inner_text()
        assert ["one", "two"] == reply.locator("ul > li").all_inner_texts()
        assert 'print("hi")' == reply.locator("pre code").inner_text().strip()
        assert ["1", "2"] == reply.locator("td").all_inner_texts()
        # nothing hostile became markup
        assert 0 == page.locator("#chat img, #chat script, #chat iframe").count()
        hrefs = reply.locator("a").evaluate_all("(as) => as.map((a) => a.getAttribute('href'))")
        assert all(h is None or h.startswith("https://") for h in hrefs), hrefs
        assert "https://example.com/" in hrefs
        site = reply.locator("a", has_text="site")
        assert ("_blank", "noopener noreferrer") == (
            site.get_attribute("target"),
            site.get_attribute("rel"),
        )
        text = reply.inner_text()
        assert "<img src=x" in text and "<script>" in text and "image: pic" in text
        reply.locator(".codeblock button.copy").click()
        page_until(
            page, "document.querySelector('.codeblock button.copy').textContent === 'Copied'"
        )
        assert 'print("hi")' in page.evaluate("navigator.clipboard.readText()")
        page.wait_for_selector(".msg.user")
        shot(page, "markdown")

        page.fill("#prompt", "run it")
        page.press("#prompt", "Enter")
        page.locator(".card.permission:not(.closed) button.allow").click()
        page.wait_for_selector(".msg.assistant strong:has-text('Done')")
        stdout = page.locator(".card.kind-shell_exec .stdout")
        assert "line 30" in stdout.inner_text() and "line 31" not in stdout.inner_text()
        page.locator(".card.kind-shell_exec button.show-all").click()
        assert "line 100" in stdout.inner_text()
        assert page.evaluate("window.pwned === undefined")
        assert [] == page.errors
