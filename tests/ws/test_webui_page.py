"""The built-in web UI in headless Chromium against sessions on the fake CLI: notifications
for a background session, reconnecting with since_seq without showing anything twice, a clear
error when the CLI is missing, the page's security headers. (The real-CLI scenarios are in
tests/realcli/test_webui_browser.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, replay_script, script, text_turn, tool_turn
from tests.support.browser import axe_violations, page_until, start_session
from tests.support.servers import running

from ._webui import ARTIFACTS, Remote, open_page, serve, shot

pytestmark = [pytest.mark.browser, pytest.mark.server]

pytest.importorskip("playwright.sync_api")


def test_background_approval_notifies_and_reconnect_shows_nothing_twice(
    tmp_path: Path, browser: Any
) -> None:
    body = script(
        text_turn("first reply"),
        tool_turn("Bash", {"command": "echo hi"}, permission=True, result="hi"),
    )
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        current = start_session(page)
        page.fill("#prompt", "hello")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('first reply')")

        remote = Remote(url)
        other = remote.request({"type": "create_session"})["session_id"]
        remote.request({"type": "prompt", "session_id": other, "text": "a"})
        remote.request({"type": "prompt", "session_id": other, "text": "b"})
        page_until(page, "window.__notes.length > 0")
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
        page_until(page, "window.ccbState.waiting.size === 0")
        page.fill("#model", "claude-test-model")
        page.locator("#prompt").focus()  # "change" fires when the field loses focus
        page_until(page, f"window.ccbState.sessions.get('{current}').model === 'claude-test-model'")
        assert "error" not in (page.get_attribute("#banner", "class") or "")
        assert [] == page.errors
        remote.conn.close()


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
    """The CLI exits in the middle of its first turn, having written markup and an internal
    path on stderr: the session's badge says errored, the banner (an alert) says what
    happened and what to do in words, the CLI's own text only under a folded "Details", as
    text (its markup inert). The failure shows there once: the chat's line for the same
    error is hidden while the banner says it. The composer is disabled, the connection
    stays up, and axe finds nothing serious."""
    hostile = '<img src=x onerror="window.__pwned=1"><b id="injected">bold</b> /srv/internal/x.py'
    body = {
        **script(text_turn("this reply is cut short")),
        "crash_after_type": "assistant",
        "crash_exit_code": 3,
        "stderr_lines": [hostile],
    }
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        current = start_session(page)
        page.fill("#prompt", "hello")
        page.press("#prompt", "Enter")
        page.locator(f"#sessions li[data-session='{current}'] .badge.errored").wait_for()
        banner = page.locator("#banner.error")
        banner.wait_for()
        page_until(page, "document.querySelector('#banner details') !== null")
        words = page.evaluate("document.getElementById('banner').firstChild.textContent")
        assert words == (
            "The Claude Code CLI stopped, so this session ended. Start a new session to go on."
        )
        assert "alert" == banner.get_attribute("role")
        details = banner.locator("details")
        assert not details.evaluate("d => d.open")
        assert not page.locator("#banner pre").is_visible()
        details.locator("summary").click()
        raw = banner.locator("pre").inner_text()
        assert "code 3" in raw and hostile in raw
        # the chat has the error (adapter.chat's entry), but not on show: the page says it once
        note = page.locator("#chat .note.error")
        assert 1 == note.count() and note.is_hidden()
        assert "stopped" in note.text_content()
        shown = page.evaluate("document.getElementById('main').innerText")
        assert (1, 1) == (shown.count("The Claude Code CLI stopped"), shown.count(hostile))
        assert "this reply is cut short" in page.locator("#chat").inner_text()
        assert 0 == page.locator("#injected, img[src=x]").count()
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("#composer button[type=submit]").is_disabled()
        assert "connected" == page.inner_text("#conn")
        assert [] == axe_violations(page)
        shot(page, "session-failed")
        # The landing page does not keep this session's failure; the session shows it again.
        page.click("#new-chat")
        assert banner.is_hidden()
        page.click(f"#sessions li[data-session='{current}'] button.row")
        banner.wait_for()
        page_until(page, "document.querySelector('#chat .note.error') !== null")
        assert note.is_hidden()
        assert [] == page.errors


def test_a_failure_after_an_earlier_error_hides_only_its_own_line(
    tmp_path: Path, browser: Any
) -> None:
    """The first turn's API call fails (the session goes on: that error stays a chat line);
    the second turn's CLI dies: the banner says the CLI stopped and its line alone is
    hidden, the earlier error is not taken for the failure."""
    api_error = {
        "messages": [{"blocks": ["partial"], "error": {"status": 529, "message": "Overloaded"}}]
    }
    body = {
        **script(api_error, tool_turn("Bash", {"command": "ls"}, permission=True, result="x")),
        "crash_after_type": "can_use_tool",
        "crash_exit_code": 5,
    }
    with serve(tmp_path, fake_cli_command(body, tmp_path / "fake")) as url:
        page = open_page(browser, url)
        current = start_session(page)
        page.fill("#prompt", "one")
        page.press("#prompt", "Enter")
        first = page.locator("#chat .note.error")
        first.wait_for()
        assert "Claude API error 529 (overloaded)" in first.inner_text()
        assert "Overloaded" in (first.locator("details pre").text_content() or "")
        page.locator(f"#sessions li[data-session='{current}'] .badge.idle").wait_for()
        page.fill("#prompt", "two")
        page.press("#prompt", "Enter")
        page.locator(f"#sessions li[data-session='{current}'] .badge.errored").wait_for()
        page_until(page, "document.querySelectorAll('#chat .note.error').length === 2")
        words = page.evaluate("document.getElementById('banner').firstChild.textContent")
        assert words.startswith("The Claude Code CLI stopped, so this session ended.")
        assert [True, False] == [n.is_visible() for n in first.all()]
        page.locator("#banner summary").click()
        shown = page.evaluate("document.getElementById('main').innerText")
        assert (1, 1) == (shown.count("The Claude Code CLI stopped"), shown.count("code 5"))
        assert [] == axe_violations(page)
        assert [] == page.errors


def test_the_failure_the_banner_describes_is_the_last_turns_error(
    tmp_path: Path, browser: Any
) -> None:
    """failure.js on chat.js's entries: the chat line a failed session's banner stands for
    (and hides) is an error of the last turn, never one of a turn the session outlived;
    a lost cluster session's banner stands for its line too."""
    with serve(tmp_path, str(tmp_path / "none")) as url:
        page = open_page(browser, url)
        got = page.evaluate(
            """async () => {
              const { Chat } = await import("/ui/chat.js");
              const { failure } = await import("/ui/failure.js");
              const c = new Chat();
              const failed = { status: "errored", status_reason: "exit 3" };
              const seen = () => {
                const f = failure(failed, c, []);
                return [f.entry, f.text.split(",")[0], f.detail];
              };
              const out = [];
              c.apply({ type: "user_message", seq: 1, text: "one" });
              c.apply({ type: "error", seq: 2, kind: "api_error", message: "Overloaded" });
              c.apply({ type: "user_message", seq: 3, text: "two" });
              out.push(seen());
              c.apply({ type: "error", seq: 4, kind: "cli_exited", message: "exit 3" });
              out.push(seen());
              const lost = failure({ status: "lost", status_reason: "no heartbeats" }, c, []);
              out.push([lost.entry, lost.text.split(";")[0], lost.detail]);
              return out;
            }"""
        )
        assert [
            [None, "This session ended with an error. Start a new session to go on.", "exit 3"],
            ["error:4", "The Claude Code CLI stopped", "exit 3"],
            ["error:4", "The server running this session stopped answering", "no heartbeats"],
        ] == got
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
        current = start_session(page)
        remote = Remote(url)
        for i, text in enumerate(prompts):
            remote.request({"type": "prompt", "session_id": current, "text": text})
            page.wait_for_selector(f".msg.assistant:has-text('reply {i}')")
        # The entries (not the turns' "Fork from here", which come as each turn ends).
        live = page.locator("#chat > [data-id]").all_inner_texts()
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
        page.locator(f"#sessions li[data-session='{current}'] button.row").click()
        page.wait_for_selector(".msg.assistant:has-text('reply 4')")
        assert live == page.locator("#chat > [data-id]").all_inner_texts()
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
        stored = page.locator("#history li", has_text="say hello")
        stored.locator("button", has_text="Resume").click()
        page.wait_for_selector(".msg.assistant:has-text('All done.')")
        before = page.locator("#chat > [data-id]").all_inner_texts()
        assert ["say hello", "do the work"] == page.locator(".msg.user").all_inner_texts()
        # Its stored turns can be forked, each control named after its turn.
        forks = page.locator(".turn-end button.fork")
        assert [
            "Fork from here: turn 1 (“say hello”)",
            "Fork from here: turn 2 (“do the work”)",
        ] == [f.get_attribute("aria-label") for f in forks.all()]
        page.fill("#prompt", "and now this")
        page.press("#prompt", "Enter")
        page.wait_for_selector(".msg.assistant:has-text('fresh reply')")
        after = page.locator("#chat > [data-id]").all_inner_texts()
        assert before == after[: len(before)]
        assert ["say hello", "do the work", "and now this"] == page.locator(
            ".msg.user"
        ).all_inner_texts()
        current = page.evaluate("window.ccbState.current")
        page.reload()
        page.wait_for_selector(".conn.ok")
        page.locator(f"#sessions li[data-session='{current}'] button.row").click()
        page.wait_for_selector(".msg.assistant:has-text('fresh reply')")
        assert after == page.locator("#chat > [data-id]").all_inner_texts()
        assert [] == page.errors


def test_sub_agent_work_is_nested_under_its_call(tmp_path: Path, browser: Any) -> None:
    """A recorded real-CLI run with a sub-agent (replayed by the fake CLI): the sub-agent's
    tool call is drawn inside the card of the Agent call that started it."""
    transcript = Path(__file__).parents[1] / "fixtures" / "transcripts" / "task_subagent.jsonl"
    cli = fake_cli_command(replay_script(transcript), tmp_path / "fake")
    with serve(tmp_path, cli) as url:
        page = open_page(browser, url)
        start_session(page)
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
    a session streams, asks which greeting style to use (answered "Casual" in the form, named
    in its next sentence), asks to run a command, runs it once allowed, edits a file with a
    diff and keeps a todo list."""
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
            page.fill("#start-prompt", "show me around")
            page.press("#start-prompt", "Enter")
            allowed = 0
            open_card = ".card.permission:not(.closed)"
            question = ".card.question:not(.closed)"
            page.wait_for_selector(f"{open_card}, {question}")  # it asks before it acts
            while True:  # allow every request, answer its question "Casual", until idle
                page.wait_for_selector(f"#session-state.badge.idle, {open_card}, {question}")
                if page.locator(question).count():
                    form = page.locator(question).first
                    assert "Which greeting style should I use?" in form.inner_text()
                    form.get_by_text("Casual", exact=True).click()
                    form.locator("button[type=submit]").click()
                    page_until(page, f"document.querySelectorAll('{question}').length === 0")
                    continue
                if page.locator(open_card).count() == 0:
                    break
                page.locator(open_card).first.locator("button.allow").click()
                allowed += 1
                page_until(page, f"document.querySelectorAll('{open_card}').length === 0")
            assert allowed >= 1
            # the demo's next sentence names the option clicked
            page.wait_for_selector(".msg.assistant:has-text('You chose Casual')")
            assert "Casual" in page.locator(".card.question.closed").inner_text()
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
