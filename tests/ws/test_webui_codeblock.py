"""A code block's Copy button never covers the code: on a narrow (phone) screen, the
button's box and the first line's box do not meet, whatever the line's length."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.browser import axe_violations
from tests.support.timeouts import NODE_GUARD_MS

from ._webui import NOTIFY_STUB, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

CODE = """Here:

```
long_first_line = compute(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota)
x = 1
```

```
ok
```
"""

#: Per code block: the Copy button's box and its first line's box (a Range over the line).
BOXES = """() => [...document.querySelectorAll('.codeblock')].map((block) => {
  const button = block.querySelector('button.copy').getBoundingClientRect();
  const text = block.querySelector('pre code').firstChild;
  const range = document.createRange();
  const end = text.textContent.indexOf('\\n');
  range.setStart(text, 0);
  range.setEnd(text, end > 0 ? end : text.textContent.length);
  const lines = [...range.getClientRects()];
  const top = Math.min(...lines.map((r) => r.top));
  const first = lines.filter((r) => r.top === top);
  const box = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
  const left = Math.min(...first.map((r) => r.left));
  const right = Math.max(...first.map((r) => r.right));
  const bottom = Math.max(...first.map((r) => r.bottom));
  return { button: box(button), line: { left, right, top, bottom } };
})"""


def meet(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_copy_button_does_not_cover_the_first_line(
    tmp_path: Path, browser: Any, width: int
) -> None:
    body = script(text_turn(CODE))
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        phone = width < 500  # a touch device, as phones are
        context = browser.new_context(
            viewport={"width": width, "height": 844}, has_touch=phone, is_mobile=phone
        )
        page = context.new_page()
        page.set_default_timeout(NODE_GUARD_MS)
        page.add_init_script(NOTIFY_STUB)
        page.goto(url + "/")
        page.wait_for_selector(".conn.ok")
        page.fill("#start-prompt", "show code")
        page.press("#start-prompt", "Enter")
        page.locator(".codeblock").nth(1).wait_for()
        boxes = page.evaluate(BOXES)
        assert 2 == len(boxes)
        for found in boxes:
            assert found["line"]["right"] > found["line"]["left"]  # a real line box
            assert not meet(found["button"], found["line"]), found
        shot(page, f"codeblock-{width}")
        assert [] == axe_violations(page)
        context.close()
