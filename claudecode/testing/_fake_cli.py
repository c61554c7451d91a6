"""The fake Claude Code CLI program: its state, stdin plumbing, control plane and main loop
(its command line is read in :mod:`._fake_args`, its script in :mod:`._fake_script`, its
stdout written in :mod:`._fake_output`).

Theory of operation
-------------------
One daemon thread reads stdin line by line, parses JSON and puts each message (or a
``("garbage", text)`` item, or ``("eof", None)``) on a queue. Everything else happens on the
main thread, cooperatively: :meth:`FakeCLI.pump` takes one item off the queue and handles it
— control requests are answered at once, control responses are filed by ``request_id``,
user messages wait in a deque for their turn. A running turn calls :meth:`FakeCLI.sleep`
between deltas and :meth:`FakeCLI.request` while a permission prompt or hook is open; both
pump the queue, so an ``interrupt`` is acknowledged immediately and then surfaces in the
turn as :class:`Interrupted`. stdout is written only by the main thread, one flushed line per
message, so lines never interleave.

The program uses only the standard library (no anyio, no client types): it is an
independent peer of the client it tests.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from typing import IO, Any, NoReturn

from . import _fake_messages as m
from ._fake_args import Args, arg_files, initial_mode, mcp_servers
from ._fake_interrupt import Interrupted
from ._fake_output import Output, hang_forever
from ._fake_script import SCRIPT_ENV_VAR, ScriptError, load_handler, load_script
from ._fake_transcript import transcript_of

__all__ = ("FakeCLI", "Interrupted", "main")

Json = dict[str, Any]


class FakeCLI:
    """State and control plane of one fake CLI process (see the module docstring)."""

    def __init__(self, script: Json, args: Args, out: Output, inbox: queue.Queue[Any]) -> None:
        self.script = script
        self.args = args
        self.out = out
        self.inbox = inbox
        model = args.value("--model") or script.get("model") or "claude-opus-5-5"
        session_id = (
            args.value("--resume", "-r", "--session-id") or script.get("session_id") or m.new_uuid()
        )
        self.info = m.SessionInfo(
            session_id=str(session_id),
            model=str(model),
            cwd=os.getcwd(),
            version=str(script.get("version", "fake")),
            permission_mode=initial_mode(args.value("--permission-mode")),
            mcp_servers=mcp_servers(args.value("--mcp-config")),
        )
        partial = script.get("include_partial_messages")
        self.partial_messages = (
            bool(partial) if partial is not None else "--include-partial-messages" in args.switches
        )
        self.replay_user_messages = "--replay-user-messages" in args.switches
        self.prompt_tool = args.value("--permission-prompt-tool")
        self.hooks: dict[str, list[tuple[str | None, list[str]]]] = {}
        self.pending_users: deque[Json] = deque()
        self.responses: dict[str, Json] = {}
        #: Answers to AskUserQuestion so far (question -> answer), for ``by_answer`` texts.
        self.answers: dict[str, str] = {}
        self.pending_status: Json | None = None
        self.eof = False
        self.turn_active = False
        self.interrupt_requested = False
        self.last_turn_failed = False
        self.turn_index = 0
        self.handler = load_handler(script.get("handler"))
        self.transcript = transcript_of(script, self.info)
        if self.transcript is not None:
            out.observer = self.transcript.output

    # ---------------------------------------------------------------- inbox

    def receive(self, timeout: float | None) -> tuple[str, Any] | None:
        """Take one raw inbox item, or ``None`` when ``timeout`` passed first."""
        try:
            item: tuple[str, Any] = self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if item[0] == "eof":
            self.eof = True
        return item

    def pump(self, timeout: float | None) -> bool:
        """Handle one inbox item; ``False`` if none arrived within ``timeout``."""
        if self.eof:
            if timeout:
                time.sleep(timeout)
            return False
        item = self.receive(timeout)
        if item is None:
            return False
        kind, msg = item
        if kind == "msg":
            self.dispatch(msg)
        return True

    def drain(self) -> None:
        """Handle everything already waiting, without blocking."""
        while not self.eof and self.pump(0):
            pass

    def dispatch(self, msg: Json) -> None:
        """Route one host message (control requests are answered right here).

        A script ``handler`` sees every message first; when it returns a list, those lines
        (dicts, or raw strings) are written and the default behaviour is skipped.
        """
        if self.handler is not None:
            answer = self.handler(msg)
            if answer is not None:
                for line in answer:
                    if isinstance(line, str):
                        self.out.send_raw(line)
                    else:
                        self.out.send(line)
                return
        kind = msg.get("type")
        if kind == "control_request":
            self.handle_control(msg)
        elif kind == "control_response":
            response = msg.get("response") or {}
            self.responses[str(response.get("request_id"))] = response
        elif kind == "user":
            self.pending_users.append(msg)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` while serving the host; raise :class:`Interrupted` on interrupt."""
        deadline = time.monotonic() + seconds
        while True:
            self.drain()
            if self.interrupt_requested:
                raise Interrupted
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.pump(left)

    def request(self, body: Json) -> Json:
        """Send a control request to the host and wait for its answer.

        Returns the ``response`` object of the host's control_response (``subtype`` success
        or error). Raises :class:`Interrupted` (carrying the request id) if the host
        interrupts or closes stdin first.
        """
        request_id = m.new_uuid()
        self.out.send(m.control_request(request_id, body))
        while request_id not in self.responses:
            if self.interrupt_requested or self.eof:
                raise Interrupted(request_id)
            self.pump(None)
        return self.responses.pop(request_id)

    # ---------------------------------------------------------------- control plane

    def handle_control(self, msg: Json) -> None:
        """Answer one control request from the host the way 2.1.332 does."""
        request_id = str(msg.get("request_id"))
        request = msg.get("request") or {}
        subtype = request.get("subtype")
        if subtype == "initialize":
            if self.script.get("hang_before_init"):
                hang_forever()
            self.hooks = _parse_hooks(request.get("hooks"))
            self.out.send(
                m.initialize_response(self.info, request_id, hooks_applied=bool(self.hooks))
            )
        elif subtype == "interrupt":
            if self.turn_active:
                self.interrupt_requested = True
            self.out.send(m.control_success(request_id, {"still_queued": []}))
        elif subtype == "set_model":
            self.info.model = str(
                request.get("model") or self.script.get("model") or "claude-opus-5-5"
            )
            self.out.send(m.local_command_user(self.info, f"Set model to `{self.info.model}`"))
            self.out.send(m.control_success(request_id, {"model": self.info.model}))
        elif subtype == "set_permission_mode":
            mode = request.get("mode")
            if mode not in m.PERMISSION_MODES:
                text = "Cannot set permission mode: must be one of " + ", ".join(m.PERMISSION_MODES)
                self.out.send(m.control_error(request_id, text, "invalid_mode"))
                return
            self.info.permission_mode = str(mode)
            self.pending_status = m.system_status(self.info, None, permission_mode=str(mode))
            self.out.send(m.control_success(request_id, {"mode": mode}))
        elif subtype == "set_max_thinking_tokens":
            self.out.send(m.control_success(request_id))
        elif subtype == "apply_flag_settings":
            settings = request.get("settings", _ABSENT)
            if not isinstance(settings, dict):
                got = _js_kind(settings)
                text = f"apply_flag_settings requires `settings` to be an object, got {got}"
                self.out.send(m.control_error(request_id, text))
                return
            self.out.send(m.control_success(request_id))
        elif subtype == "mcp_status":
            servers = [{**s, "tools": []} for s in self.info.mcp_servers]
            self.out.send(m.control_success(request_id, {"mcpServers": servers}))
        elif subtype == "get_context_usage":
            body = {
                "categories": [],
                "totalTokens": 0,
                "maxTokens": 200000,
                "percentage": 0,
                "model": self.info.model,
            }
            self.out.send(m.control_success(request_id, body))
        else:
            text = f"Unsupported control request subtype: {subtype}"
            self.out.send(m.control_error(request_id, text, "unsupported_request"))

    # ---------------------------------------------------------------- main loop

    def serve(self) -> int:
        """Run turns until stdin is closed and no user message is left; return the exit code."""
        from ._fake_turns import run_turn

        while True:
            if self.pending_users:
                user = self.pending_users.popleft()
                if self.transcript is not None:
                    self.transcript.prompt(user)
                run_turn(self, user)
            elif self.eof:
                break
            else:
                self.pump(None)
        if "exit_code" in self.script:
            return int(self.script["exit_code"])
        return 1 if self.last_turn_failed else 0


_ABSENT = object()


def _js_kind(value: object) -> str:
    """How the real CLI names a JSON value's kind in its errors (JavaScript's typeof)."""
    if value is _ABSENT:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "string"


def _parse_hooks(raw: Any) -> dict[str, list[tuple[str | None, list[str]]]]:
    hooks: dict[str, list[tuple[str | None, list[str]]]] = {}
    if not isinstance(raw, dict):
        return hooks
    for event, matchers in raw.items():
        for entry in matchers or []:
            if isinstance(entry, dict):
                ids = [str(i) for i in entry.get("hookCallbackIds") or []]
                hooks.setdefault(str(event), []).append((entry.get("matcher"), ids))
    return hooks


def _reader(stream: IO[bytes], inbox: queue.Queue[Any], record: IO[str] | None) -> None:
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if record is not None:
            entry = {"received": msg} if isinstance(msg, dict) else {"received_raw": line}
            record.write(json.dumps(entry) + "\n")
            record.flush()
        if isinstance(msg, dict):
            inbox.put(("msg", msg))
        else:
            sys.stderr.write(
                f"fake claude: ignoring a stdin line that is not a JSON object: {line[:200]!r}\n"
            )
            inbox.put(("garbage", line))
    inbox.put(("eof", None))


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of ``python -m claudecode.testing``; never returns."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        script = load_script(os.environ.get(SCRIPT_ENV_VAR))
    except ScriptError as exc:
        sys.stderr.write(f"fake claude: {exc}\n")
        sys.exit(2)
    if script.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    args = Args.parse(argv)
    version = str(script.get("version", "fake"))
    if "--version" in args.switches or "-v" in args.switches:
        sys.stdout.write(f"{version} (Claude Code)\n")
        sys.exit(0)
    for line in script.get("stderr_lines") or []:
        sys.stderr.write(f"{line}\n")
    sys.stderr.flush()
    printing = bool({"-p", "--print"} & args.switches)
    if (
        printing
        and args.value("--output-format") == "stream-json"
        and "--verbose" not in args.switches
    ):
        sys.stderr.write(
            "Error: When using --print, --output-format=stream-json requires --verbose\n"
        )
        sys.exit(1)
    if script.get("hang"):
        hang_forever()

    record: IO[str] | None = None
    if script.get("record_path"):
        record = open(str(script["record_path"]), "a", encoding="utf-8")  # noqa: SIM115
        header = {
            "argv": argv,
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "env": dict(os.environ),
            "arg_files": arg_files(argv),
        }
        record.write(json.dumps(header) + "\n")
        record.flush()
    inbox: queue.Queue[Any] = queue.Queue()
    out = Output(sys.stdout.buffer, script)
    cli = FakeCLI(script, args, out, inbox)
    threading.Thread(target=_reader, args=(sys.stdin.buffer, inbox, record), daemon=True).start()
    if script.get("replay"):
        from ._fake_replay import replay

        replay(cli, str(script["replay"]), script.get("proc"), float(script.get("replay_speed", 0)))
    code = cli.serve()
    sys.stderr.flush()
    os._exit(code)
