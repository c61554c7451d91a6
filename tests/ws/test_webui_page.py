"""The built-in web UI in headless Chromium against sessions on the fake CLI: notifications
for a background session, reconnecting with since_seq without showing anything twice, a clear
error when the CLI is missing, the page's security headers. (The real-CLI scenarios are in
tests/realcli/test_webui_browser.py.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.sync.client as ws_client
from server._running import running

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, replay_script, script, text_turn, tool_turn

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")

WAIT = 90_000
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "webui"
# Records notifications instead of showing them (headless Chromium has no notification UI).
NOTIFY_STUB = """
window.__notes = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push({title, body: options && options.body}); }
};
"""


def serve(tmp_path: Path, cli_path: str) -> Any:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(cli_path=cli_path, cwd=work, policy=PermissionPolicy("supervised"))
    return running(create_app(settings=ServerSettings(session_defaults=defaults)))


def until(page: Any, expression: str) -> None:
    """Poll a JavaScript expression from here (the page's CSP forbids the eval that
    ``wait_for_function`` polls with)."""
    for _ in range(WAIT // 50):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"never true: {expression}")


def open_page(browser: Any, url: str) -> Any:
    page = browser.new_context().new_page()
    page.set_default_timeout(WAIT)
    page.add_init_script(NOTIFY_STUB)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(url + "/")
    page.wait_for_selector(".conn.ok")
    return page


class Remote:
    """Another client on the same server (plain WebSocket)."""

    def __init__(self, url: str) -> None:
        ws_url = url.replace("http://", "ws://") + "/ws"
        self.conn = ws_client.connect(ws_url, open_timeout=60).__enter__()
        self.n = 0

    def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = f"x{self.n}"
        self.conn.send(json.dumps({**frame, "request_id": rid}))
        while True:
            reply: dict[str, Any] = json.loads(self.conn.recv(timeout=60))
            if reply.get("request_id") == rid:
                return reply


def test_background_approval_notifies_and_reconnect_shows_nothing_twice(
    tmp_path: Path, browser: Any
) -> None:
    body = script(
        text_turn("first reply"),
        tool_turn("Bash", {"command": "echo hi"}, permission=True, result="hi"),
    )
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.click("#start button[type=submit]")
        until(page, "window.ccbState.current !== null")
        current = page.evaluate("window.ccbState.current")
        page.fill("#prompt", "hello")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('first reply')")

        remote = Remote(url)
        other = remote.request({"type": "create_session"})["session_id"]
        remote.request({"type": "prompt", "session_id": other, "text": "a"})
        remote.request({"type": "prompt", "session_id": other, "text": "b"})
        until(page, "window.__notes.length > 0")
        assert "Claude needs your approval" == page.evaluate("window.__notes[0].title")
        badge = page.locator(f"#sessions li[data-session='{other}'] .badge")
        badge.filter(has_text="waiting for you").wait_for()
        assert [current] == [page.evaluate("window.ccbState.current")]

        # the page's socket drops; meanwhile the session goes on; it comes back by itself
        page.evaluate("window.ccbState.ws.close()")
        remote.request({"type": "prompt", "session_id": current, "text": "more"})
        page.wait_for_selector(".conn.ok")
        page.wait_for_selector(".card.permission:not(.closed)")
        assert ["hello", "more"] == page.locator(".msg.user").all_inner_texts()
        texts = page.locator(".msg.assistant").all_inner_texts()
        assert ["first reply", "Let me do that."] == texts
        assert 1 == page.locator(".card.kind-shell_exec").count()
        page.locator(".card.permission button.allow").click()
        page.wait_for_selector(".msg.assistant:has-text('Done.')")
        assert 1 == page.locator(".msg.assistant:has-text('Done.')").count()

        # the selectors: the CLI accepts the mode (answered, no error); the model is recorded
        page.select_option("#mode", "acceptEdits")
        until(page, "window.ccbState.waiting.size === 0")
        page.fill("#model", "claude-test-model")
        page.locator("#prompt").focus()  # "change" fires when the field loses focus
        until(page, f"window.ccbState.sessions.get('{current}').model === 'claude-test-model'")
        assert "error" not in (page.get_attribute("#banner", "class") or "")
        assert [] == page.errors
        remote.conn.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_start_by_typing(tmp_path: Path, browser: Any) -> None:
    """The landing page is a composer: a directory that is not one is refused in the form
    (in words, nothing started, the prompt kept); Enter starts a session in the server's
    default directory and sends the prompt as its first turn."""
    body = script(text_turn("Hello from the landing page."))
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        assert page.evaluate("document.activeElement.id") == "start-prompt"
        shot(page, "landing")
        page.click("#start-settings summary")
        page.fill("#start input[name=cwd]", "give me the tour")
        page.fill("#start-prompt", "hello there")
        page.press("#start-prompt", "Enter")
        error = page.locator("#start-error")
        error.wait_for()
        assert "'give me the tour' does not exist" in error.inner_text()
        assert "Errno" not in error.inner_text() and str(tmp_path) not in error.inner_text()
        assert "hello there" == page.input_value("#start-prompt")
        assert 0 == page.evaluate("window.ccbState.sessions.size")
        assert page.locator("#session").is_hidden()
        page.fill("#start input[name=cwd]", "")
        page.select_option("#start select[name=effort]", "low")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('Hello from the landing page.')")
        assert ["hello there"] == page.locator(".msg.user").all_inner_texts()
        assert page.locator("#landing").is_hidden() and page.locator("#start-error").is_hidden()
        current = page.evaluate("window.ccbState.current")
        assert str(tmp_path / "work") == page.evaluate(
            f"window.ccbState.sessions.get('{current}').cwd"
        )
        assert page.evaluate("document.activeElement.id") == "prompt"
        page.click("#new-chat")
        assert page.locator("#landing").is_visible() and page.locator("#session").is_hidden()
        assert [] == page.errors


def test_a_url_per_session(tmp_path: Path, browser: Any) -> None:
    """Each session has an address: a reload lands in it at the end, back and forward go
    between sessions and the landing page, a link opened in another browser context shows
    the same chat; nothing is shown twice."""
    body = script(*(text_turn(f"reply {i}") for i in range(2)))  # each CLI: from the start
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.fill("#start-prompt", "first session")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        first = page.evaluate("window.ccbState.current")
        assert page.url.endswith(f"/#/s/{first}")
        chat = page.locator("#chat > *").all_inner_texts()
        page.reload()
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        assert first == page.evaluate("window.ccbState.current")
        assert chat == page.locator("#chat > *").all_inner_texts()
        until(
            page,
            "(() => { const c = document.getElementById('chat');"
            " return c.scrollHeight - c.scrollTop - c.clientHeight < 2; })()",
        )

        page.click("#new-chat")
        assert page.url.rstrip("/") == url
        page.fill("#start-prompt", "second session")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.user:has-text('second session')")
        page.wait_for_selector(".msg.assistant:has-text('reply 0')")
        second = page.evaluate("window.ccbState.current")
        assert second != first and page.url.endswith(f"/#/s/{second}")
        page.go_back()
        page.locator("#landing").wait_for()
        page.go_back()
        page.wait_for_selector(".msg.user:has-text('first session')")
        assert first == page.evaluate("window.ccbState.current")
        assert chat == page.locator("#chat > *").all_inner_texts()
        page.go_forward()
        page.go_forward()
        page.wait_for_selector(".msg.user:has-text('second session')")
        assert ["second session"] == page.locator(".msg.user").all_inner_texts()

        other = open_page(browser, url)
        other.goto(f"{url}/#/s/{first}")
        other.wait_for_selector(".msg.assistant:has-text('reply 0')")
        assert chat == other.locator("#chat > *").all_inner_texts()
        other.fill("#prompt", "from the other device")
        other.press("#prompt", "Enter")
        page.go_back()
        page.go_back()
        page.wait_for_selector(".msg.assistant:has-text('reply 1')")
        assert ["first session", "from the other device"] == page.locator(
            ".msg.user"
        ).all_inner_texts()

        other.goto(f"{url}/#/s/no-such-session")
        other.locator("#banner.error").wait_for()
        assert other.locator("#landing").is_visible()
        assert [] == page.errors and [] == other.errors


def test_a_session_link_with_the_token(tmp_path: Path, browser: Any) -> None:
    """With a token: "#token=T" still works, and "#/s/<id>&token=T" (a link for another
    device) lands in the session; the token leaves the address, the session stays in it."""
    work = tmp_path / "work"
    work.mkdir()
    cli = fake_cli_command(script(text_turn("guarded reply")), tmp_path / "fake")
    defaults = SessionConfig(cli_path=cli, cwd=work, policy=PermissionPolicy("supervised"))
    app = create_app(settings=ServerSettings(session_defaults=defaults, token="s3cret"))
    with running(app) as url:
        page = browser.new_context().new_page()
        page.goto(url + "/#token=s3cret")
        page.wait_for_selector(".conn.ok")
        assert "s3cret" not in page.url
        page.fill("#start-prompt", "hello")
        page.press("#start-prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('guarded reply')")
        sid = page.evaluate("window.ccbState.current")
        other = browser.new_context().new_page()
        other.goto(f"{url}/#/s/{sid}&token=s3cret")
        other.wait_for_selector(".msg.assistant:has-text('guarded reply')")
        assert other.url.endswith(f"/#/s/{sid}")


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
        until(page, "document.querySelector('.codeblock button.copy').textContent === 'Copied'")
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


def test_a_missing_cli_is_a_clear_error(tmp_path: Path, browser: Any) -> None:
    with serve(tmp_path, str(tmp_path / "no-such-claude")) as url:
        page = open_page(browser, url)
        page.click("#start button[type=submit]")
        error = page.locator("#start-error")
        error.wait_for()
        assert "claude" in error.inner_text().lower()
        assert "connected" == page.inner_text("#conn")
        assert [] == page.errors


def test_a_session_whose_cli_dies_is_a_clear_error(tmp_path: Path, browser: Any) -> None:
    """The CLI exits in the middle of a turn: the session's badge says errored, a banner
    says why, and the composer is disabled; the connection itself stays up."""
    body = {**script(text_turn("this reply is cut short")), "crash_after_type": "assistant"}
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.click("#start button[type=submit]")
        until(page, "window.ccbState.current !== null")
        current = page.evaluate("window.ccbState.current")
        page.fill("#prompt", "hello")
        page.press("#prompt", "Enter")
        page.locator(f"#sessions li[data-session='{current}'] .badge.errored").wait_for()
        banner = page.locator("#banner.error")
        banner.wait_for()
        assert "This session failed" in banner.inner_text()
        assert page.locator("#composer button").is_disabled()
        assert "connected" == page.inner_text("#conn")
        assert [] == page.errors


def test_page_headers_and_token(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    defaults = SessionConfig(cli_path=str(tmp_path / "none"), cwd=work)
    app = create_app(settings=ServerSettings(session_defaults=defaults, token="t0ken"))
    with running(app) as url:
        page = httpx.get(url + "/")
        assert 200 == page.status_code and "text/html" in page.headers["content-type"]
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "nosniff" == page.headers["x-content-type-options"]
        for name in ("app.js", "chat.js", "render.js", "app.css"):
            assert 200 == httpx.get(f"{url}/ui/{name}").status_code
        for sneaky in ("/ui/../__init__.py", "/ui/%2E%2E%2F__init__.py", "/ui/__init__.py"):
            assert httpx.get(url + sneaky).status_code in (401, 404), sneaky
        # only the page's own files are public
        assert 401 == httpx.get(f"{url}/ui/missing.js").status_code
        # the data is not public
        assert 401 == httpx.get(f"{url}/api/sessions").status_code


def test_the_page_chat_model_folds_events_once(tmp_path: Path, browser: Any) -> None:
    """chat.js: slash commands, text runs, a repeated event ignored, tool results on their
    call, permissions closed by the call's result, successful reads merged (also when they
    finish out of order) under the first read's id."""
    with serve(tmp_path, str(tmp_path / "none")) as url:
        page = open_page(browser, url)
        got = page.evaluate(
            """async () => {
              const { Chat } = await import("/ui/chat.js");
              const c = new Chat();
              const n = { kind: "shell_exec", command: "ls" };
              const r = { kind: "read_file", file_path: "/f" };
              for (const ev of [
                { type: "user_message", seq: 1, text: "/compact keep it" },
                { type: "user_message", seq: 2, text: "/usr/bin is here" },
                { type: "message_chunk", seq: 3, message_id: "m", text: "a" },
                { type: "message_chunk", seq: 4, message_id: "m", text: "b" },
                { type: "message_chunk", seq: 4, message_id: "m", text: "b" },
                { type: "tool_call", seq: 5, tool_call_id: "T", title: "ls", normalized: n },
                { type: "permission_request", seq: 6, pending_id: "p", title: "ls",
                  input: {}, normalized: n, tool_call_id: "T" },
                { type: "tool_update", seq: 7, tool_call_id: "T", status: "complete",
                  title: "ls", normalized: n },
                { type: "message_chunk", seq: 8, message_id: "m", text: "c" },
                { type: "tool_call", seq: 9, tool_call_id: "R1", title: "a", normalized: r },
                { type: "tool_call", seq: 10, tool_call_id: "R2", title: "b", normalized: r },
                { type: "tool_update", seq: 11, tool_call_id: "R2", status: "complete",
                  title: "b", normalized: r },
                { type: "tool_update", seq: 12, tool_call_id: "R1", status: "complete",
                  title: "a", normalized: r },
                { type: "tool_call", seq: 13, tool_call_id: "R3", title: "c", normalized: r },
                { type: "tool_update", seq: 14, tool_call_id: "R3", status: "complete",
                  title: "c", normalized: r },
              ]) c.apply(ev);
              const show = (e) =>
                e.text || e.name || e.status || e.state || e.reads.map((x) => x.id).join();
              return [...c.entries.values()].map((e) => [e.kind, show(e)]);
            }"""
        )
        assert [
            ["command", "compact"],
            ["user", "/usr/bin is here"],
            ["text", "ab"],
            ["tool", "complete"],
            ["permission", "closed"],
            ["text", "c"],
            ["read_group", "R1,R2,R3"],
        ] == got


def test_slash_commands_stream_as_they_show_after_a_reload(tmp_path: Path, browser: Any) -> None:
    """Prompts in the CLI's tags (a slash command, its output, an IDE selection, a system
    reminder, an interruption) render live as they do from a snapshot after a reload: the
    command with its output, the selection beside the prompt, no tags, nothing twice."""
    body = script(*(text_turn(f"reply {i}") for i in range(5)))
    prompts = [
        "<command-name>/cost</command-name>\n<command-message>cost</command-message>\n"
        "<command-args>--all</command-args>",
        "<local-command-stdout>Total cost: \x1b[1m$0.01\x1b[22m</local-command-stdout>",
        "<ide_selection>lines 1-3 of a.py</ide_selection>explain this"
        "<system-reminder>do not show this</system-reminder>",
        "/compact keep the plan",
        "[Request interrupted by user]",
    ]
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        page.click("#start button[type=submit]")
        until(page, "window.ccbState.current !== null")
        current = page.evaluate("window.ccbState.current")
        remote = Remote(url)
        for i, text in enumerate(prompts):
            remote.request({"type": "prompt", "session_id": current, "text": text})
            page.wait_for_selector(f".msg.assistant:has-text('reply {i}')")
        live = page.locator("#chat > *").all_inner_texts()
        assert [f"reply {i}" for i in range(5)] == live[1::2]
        # each prompt got a reply, so the output is an entry of its own (right after its
        # command, it would be shown on it: the chat model tests cover that)
        assert ["/cost --all", "Total cost: $0.01"] == live[0:3:2]
        assert "explain this" in live[4] and "selection: lines 1-3 of a.py" in live[4]
        assert "/compact keep the plan" == live[6]
        assert "Interrupted" in live[8]
        shown = "\n".join(live)
        for tag in ("<command-", "<local-command", "<ide_", "<system-reminder", "do not show"):
            assert tag not in shown
        page.reload()
        page.wait_for_selector(".conn.ok")
        page.locator(f"#sessions li[data-session='{current}']").click()
        page.wait_for_selector(".msg.assistant:has-text('reply 4')")
        assert live == page.locator("#chat > *").all_inner_texts()
        assert [] == page.errors
        remote.conn.close()


def test_resume_from_history_then_go_on(tmp_path: Path, browser: Any) -> None:
    """The history panel lists a transcript the real CLI wrote; Resume shows its stored
    conversation, a new prompt adds to it (the stored entries and the live ones keep apart,
    nothing replaced), and a reload shows the same."""
    stored = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
    source = next((stored / "-work-demo").glob("*.jsonl"))
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "claude-config"
    project = config / "projects" / "-work-demo"
    project.mkdir(parents=True)
    recorded_cwd = "/tmp/pytest-of-root/pytest-3/test_history_files_are_written0/cli/work"
    text = source.read_text()
    assert recorded_cwd in text
    (project / source.name).write_text(text.replace(recorded_cwd, str(work)))
    cli = fake_cli_command(script(text_turn("fresh reply")), tmp_path / "fake")
    defaults = SessionConfig(
        cli_path=cli, cwd=work, env={"CLAUDE_CONFIG_DIR": str(config)}, policy=PermissionPolicy()
    )
    with running(create_app(settings=ServerSettings(session_defaults=defaults))) as url:
        page = open_page(browser, url)
        page.click("#history-box summary")
        page.locator("#history li", has_text="say hello").locator("button").click()
        page.wait_for_selector(".msg.assistant:has-text('All done.')")
        before = page.locator("#chat > *").all_inner_texts()
        assert ["say hello", "do the work"] == page.locator(".msg.user").all_inner_texts()
        page.fill("#prompt", "and now this")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('fresh reply')")
        after = page.locator("#chat > *").all_inner_texts()
        assert before == after[: len(before)]
        assert ["say hello", "do the work", "and now this"] == page.locator(
            ".msg.user"
        ).all_inner_texts()
        current = page.evaluate("window.ccbState.current")
        page.reload()
        page.wait_for_selector(".conn.ok")
        page.locator(f"#sessions li[data-session='{current}']").click()
        page.wait_for_selector(".msg.assistant:has-text('fresh reply')")
        assert after == page.locator("#chat > *").all_inner_texts()
        assert [] == page.errors


def test_sub_agent_work_is_nested_under_its_call(tmp_path: Path, browser: Any) -> None:
    """A recorded real-CLI run with a sub-agent (replayed by the fake CLI): the sub-agent's
    tool call is drawn inside the card of the Agent call that started it."""
    transcript = Path(__file__).parents[1] / "fixtures" / "transcripts" / "task_subagent.jsonl"
    cli = fake_cli_command(replay_script(transcript), tmp_path / "fake")
    with serve(tmp_path, cli) as url:
        page = open_page(browser, url)
        page.click("#start button[type=submit]")
        until(page, "window.ccbState.current !== null")
        page.fill("#prompt", "delegate it")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('The sub-agent says')")
        agent = page.locator(".card.kind-subagent_task")
        agent.wait_for()
        nested = agent.locator(":scope > .children > .card")
        assert nested.count() >= 1
        assert 0 == page.locator("#chat > .card.kind-shell_exec").count(), "not at top level"
        shell = nested.first.inner_text()
        assert "ls -1 | wc -l" in shell and "exit code 0" in shell
        assert "null" not in shell and "undefined" not in shell
        page.screenshot(path=str(ARTIFACTS / "subagent.png"), full_page=True)
        assert [] == page.errors


def test_the_readme_first_command(tmp_path: Path, browser: Any) -> None:
    """`claudecode-bridge serve --demo` as a process, then the URL it prints for the web UI:
    a session streams, asks to run a command, runs it once allowed, edits a file with a diff
    and keeps a todo list."""
    with subprocess.Popen(
        [sys.executable, "-m", "adapter", "serve", "--demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    ) as proc:
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline() for _ in range(2)]
            assert "(DEMO)" in lines[0], lines
            assert "web UI:" in lines[1], lines
            url = lines[1].split("web UI:")[1].strip()
            while "WebSocket:" not in lines[-1] and len(lines) < 16:
                lines.append(proc.stdout.readline())
            # The WebSocket route is printed as the URL a client connects to.
            assert lines[-1].split()[-1] == "ws" + url.removeprefix("http").rstrip("/") + "/ws"
            page = open_page(browser, url.rstrip("/"))
            page.click("#start button[type=submit]")
            until(page, "window.ccbState.current !== null")
            page.fill("#prompt", "show me around")
            page.press("#prompt", "Enter")
            allowed = 0
            open_card = ".card.permission:not(.closed)"
            page.wait_for_selector(open_card)  # the demo asks before its command first
            while True:  # allow every request it makes, until the turn ends
                page.wait_for_selector(f"#session-state.badge.idle, {open_card}")
                if page.locator(open_card).count() == 0:
                    break
                page.locator(open_card).first.locator("button.allow").click()
                allowed += 1
                until(page, f"document.querySelectorAll('{open_card}').length === 0")
            assert allowed >= 1
            assert page.locator(".card.kind-shell_exec .stdout").count() >= 1
            page.locator(".card.kind-modify_file .diff .add").first.wait_for()
            assert page.locator("#todos li").count() == 3
            assert "Use an f-string" in page.inner_text("#todos")
            page.screenshot(path=str(ARTIFACTS / "demo.png"), full_page=True)
            assert [] == page.errors
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
