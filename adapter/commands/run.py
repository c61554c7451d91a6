"""``claudecode-bridge run``: one prompt, its turn, rendered for a person or as JSON lines.

If the turn started background tasks (sub-agents running in the background), ``run`` keeps
listening after the answer until they reported and the turns the CLI starts for them ended
(at most ``--background-timeout`` seconds; Ctrl-C stops waiting), printing those turns too.

Everything printed is escaped: control characters from the model, tools or the CLI never
reach the terminal raw (:mod:`adapter._escape`).

Exit status: 0 when the turn succeeded, 1 when it ended in error (or the CLI failed),
2 for usage errors (handled by argparse and by :func:`run_command`).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import sys
import tempfile
from typing import Any, TextIO

import anyio

from claudecode import ClaudeCodeError, CLINotFoundError, find_cli
from claudecode.internal import INSTALL_HINT

from .._escape import escape_control, escape_json_line
from ..config import SessionConfig
from ..events import (
    Complete,
    ErrorEvent,
    Event,
    PermissionRequest,
    QuestionRequest,
    encode_event,
)
from ..policies import PermissionDecision, PermissionPolicy
from ..session import AgentSession
from ._setup import add_demo_home_argument
from .run_render import TerminalRenderer

__all__ = ("add_run_arguments", "run_command")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``run`` sub-command's arguments."""
    parser.add_argument("prompt", nargs="?", help="what to ask (default for --demo: a tour)")
    parser.add_argument("--cwd", help="working directory of the CLI (default: here)")
    parser.add_argument("--model", help="model to use")
    parser.add_argument("--permission-mode", help="the CLI's permission mode (default, plan, ...)")
    parser.add_argument(
        "--approve",
        choices=("ask", "all", "none"),
        help="tool approval: ask at the terminal (default on a terminal), allow all, or deny all "
        "(default without a terminal; --demo defaults to all)",
    )
    parser.add_argument("--resume", metavar="ID", help="resume the CLI session ID")
    parser.add_argument("--json", action="store_true", help="print one event per line (JSON)")
    parser.add_argument("--demo", action="store_true", help="use the built-in scripted stand-in")
    add_demo_home_argument(parser)
    parser.add_argument("--cli", help="path of the claude executable (default: discovered)")
    parser.add_argument(
        "--otlp",
        nargs="?",
        const="http://localhost:4318",
        metavar="URL",
        help="export the run's trace over OTLP/HTTP (default URL http://localhost:4318; "
        "OTEL_EXPORTER_OTLP_ENDPOINT also switches it on)",
    )
    parser.add_argument("--debug-dir", help="write protocol messages and events as JSONL here")
    parser.add_argument(
        "--background-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="after the answer, keep listening this long for background tasks (sub-agents) the "
        "CLI started, and print the turns they start when they finish (default 600; 0: do "
        "not wait). Ctrl-C stops waiting. Running out of time exits 1",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (to stderr)")


class _Prompter:
    """Asks y / n / always for permission requests on the controlling terminal."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    async def ask(self, event: PermissionRequest) -> PermissionDecision:
        question = escape_control(
            f"\nAllow: {event.title}? [y]es / [n]o / [a]lways for {event.tool_name}: "
        )
        answer = await anyio.to_thread.run_sync(self._read, question)
        if answer in ("a", "always"):
            return PermissionDecision("allow_always")
        if answer in ("y", "yes"):
            return PermissionDecision("allow")
        return PermissionDecision("deny", "the user said no")

    async def ask_question(
        self, event: QuestionRequest
    ) -> tuple[dict[str, list[str]] | None, str | None]:
        """Each question with its numbered options; the answer is a number (several,
        comma-separated, for a multi-select), or text of one's own; an empty line declines
        the whole request. Returns the answers, or ``None`` and why (declined)."""
        answers: dict[str, list[str]] = {}
        for question in event.questions:
            lines = [f"\n{question.header or 'Question'}: {question.question}"]
            for number, option in enumerate(question.options, 1):
                about = f" — {option.description}" if option.description else ""
                lines.append(f"  {number}. {option.label}{about}")
            several = "numbers, comma-separated" if question.multi_select else "a number"
            lines.append(f"Answer ({several}, your own text, or empty to decline): ")
            raw = await anyio.to_thread.run_sync(
                self._read, escape_control("\n".join(lines)), False
            )
            if not raw:
                return None, "the user declined at the terminal"
            labels = [o.label for o in question.options]
            picks = [p.strip() for p in raw.split(",")] if question.multi_select else [raw]
            if all(p.isdigit() and 1 <= int(p) <= len(labels) for p in picks):
                answers[question.question] = [labels[int(p) - 1] for p in picks]
            else:
                answers[question.question] = [raw]
        return answers, None

    def _read(self, question: str, lower: bool = True) -> str:
        self.out.write(question)
        self.out.flush()
        try:
            with open("/dev/tty", encoding="utf-8") as tty:
                line = tty.readline()
        except OSError:
            line = sys.stdin.readline()
        return line.strip().lower() if lower else line.strip()


def _policy(approve: str) -> PermissionPolicy:
    if approve == "all":
        return PermissionPolicy("autonomous")
    if approve == "none":

        async def deny_all(_: PermissionRequest) -> PermissionDecision:
            return PermissionDecision(
                "deny", "tool use is not approved in this run (--approve none)"
            )

        return PermissionPolicy("custom", deny_all)
    return PermissionPolicy("supervised")


async def _run(args: argparse.Namespace, cli_path: str, prompt: str, tracer_provider: Any) -> int:
    approve = args.approve
    config = SessionConfig(
        cli_path=cli_path,
        cwd=args.cwd,
        env=getattr(args, "env", {}),
        model=args.model,
        permission_mode=args.permission_mode,
        policy=_policy(approve),
        resume=args.resume,
        debug_dir=args.debug_dir,
        tracer_provider=tracer_provider,
    )
    renderer = None if args.json else TerminalRenderer()
    prompter = _Prompter(sys.stderr if args.json else sys.stdout)
    # With tracing on, one root span holds the whole run: the CLI is spawned inside it (so
    # its TRACEPARENT points there and its own spans join the trace) and the turn's
    # invoke_agent span is its child.
    root = (
        contextlib.nullcontext()
        if tracer_provider is None
        else tracer_provider.get_tracer("claudecode-bridge").start_as_current_span(
            "claudecode-bridge run"
        )
    )
    with root:
        return await _run_session(config, renderer, prompter, prompt, args.background_timeout)


def _more_to_come(session: AgentSession) -> bool:
    """A turn runs or is queued, or a background task has yet to report (and start the turn
    that tells the model)."""
    return session.status == "active" or session.background_work


async def _run_session(
    config: SessionConfig,
    renderer: TerminalRenderer | None,
    prompter: _Prompter,
    prompt: str,
    background_timeout: float = 600.0,
) -> int:
    failed = False
    quit_requested = anyio.Event()
    async with AgentSession(config) as session, anyio.create_task_group() as tg:
        tg.start_soon(_interrupt_on_sigint, session, tg.cancel_scope, quit_requested)
        if renderer is not None and renderer.live:
            tg.start_soon(_spin, renderer)
        with session.subscribe(after_seq=0) as events:
            await session.prompt(prompt)
            completed = False
            # After the prompt's own turn, a background sub-agent may still be working: the
            # CLI starts a turn by itself when it finishes. Keep listening (bounded) so that
            # turn is printed too, and the CLI is not stopped under the running task.
            deadline: float | None = None
            while True:
                if completed:
                    # The session's state is updated as events are published, so anything
                    # it counts on is already in our queue or still to come.
                    if not _more_to_come(session) and not events.pending:
                        break
                    if deadline is None:
                        deadline = anyio.current_time() + background_timeout
                        if background_timeout <= 0:
                            _note_background_left(session)
                            break
                        _note(
                            f"waiting for background tasks to finish (up to "
                            f"{background_timeout:g}s; Ctrl-C stops waiting)",
                            renderer,
                        )
                wait = math.inf if deadline is None else deadline - anyio.current_time()
                batch: list[Event] = []
                with anyio.move_on_after(wait):
                    try:
                        batch = await events.receive_batch()
                    except anyio.EndOfStream:
                        failed = failed or not completed  # ended before the prompt's turn did
                        break
                if not batch:  # out of time
                    _note_background_left(session, background_timeout)
                    failed = True
                    break
                # Whole batches: the error that follows a failed turn's `complete` is
                # published together with it.
                for event in batch:
                    _emit(event, renderer)
                    if isinstance(event, PermissionRequest):
                        if renderer is not None:
                            renderer.pause()
                        decision = await prompter.ask(event)
                        await session.answer_permission(event.pending_id, decision)
                    elif isinstance(event, QuestionRequest) and event.pending_id in (
                        session.pending_questions  # not one the policy answered already
                    ):
                        if renderer is not None:
                            renderer.pause()
                        answers, why = await prompter.ask_question(event)
                        if answers is None:
                            await session.decline_question(event.pending_id, why)
                        else:
                            await session.answer_question(event.pending_id, answers)
                    elif isinstance(event, ErrorEvent):
                        failed = True
                    elif isinstance(event, Complete):
                        failed = failed or event.is_error
                        completed = True
        tg.cancel_scope.cancel()
    if quit_requested.is_set():
        return 130
    return 1 if failed else 0


def _note(text: str, renderer: TerminalRenderer | None) -> None:
    if renderer is not None:
        renderer.pause()
    print(f"claudecode-bridge: {text}", file=sys.stderr, flush=True)


def _note_background_left(session: AgentSession, waited: float | None = None) -> None:
    tasks = session.background_tasks
    what = f"{len(tasks)} background task(s)" if tasks else "background work"
    after = "" if waited is None else f" after {waited:g}s"
    print(
        escape_control(
            f"claudecode-bridge: {what} of the CLI still running{after}; not waiting for "
            f"{'them' if tasks else 'it'} (their results are not shown)"
        ),
        file=sys.stderr,
        flush=True,
    )


async def _spin(renderer: TerminalRenderer) -> None:
    while True:
        await anyio.sleep(0.1)
        renderer.tick()


async def _interrupt_on_sigint(
    session: AgentSession, scope: anyio.CancelScope, quit_requested: anyio.Event
) -> None:
    """First Ctrl-C interrupts the turn (it then ends in error); a second one quits, and so
    does the first while no turn runs (waiting for background tasks)."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        count = 0
        async for signum in signals:
            count += 1
            if count > 1 or signum == signal.SIGTERM or session.status != "active":
                quit_requested.set()
                scope.cancel()
                return
            print("\ninterrupting… (Ctrl-C again to quit)", file=sys.stderr)
            try:
                await session.interrupt()
            except ClaudeCodeError as exc:
                print(
                    escape_control(f"claudecode-bridge: interrupt failed: {exc}"), file=sys.stderr
                )


def _emit(event: Event, renderer: TerminalRenderer | None) -> None:
    if renderer is None:
        sys.stdout.buffer.write(escape_json_line(encode_event(event)) + b"\n")
        sys.stdout.buffer.flush()
    else:
        renderer.render(event)


def run_command(args: argparse.Namespace) -> int:
    """Carry out ``claudecode-bridge run``; returns the exit status."""
    from ._setup import configure_logging, configure_tracing

    configure_logging(args.verbose)
    interactive = sys.stdin.isatty()
    if args.approve is None:
        args.approve = "all" if args.demo else ("ask" if interactive else "none")
        if not args.demo and not interactive:
            print(
                "note: no terminal to ask on; tool use is denied (--approve all to allow)",
                file=sys.stderr,
            )
    prompt = args.prompt or ("Give me a tour of what you can do." if args.demo else None)
    if not prompt:
        print("claudecode-bridge run: a PROMPT is required (or use --demo)", file=sys.stderr)
        return 2
    tracer_provider = configure_tracing(args.otlp)
    try:
        with tempfile.TemporaryDirectory(prefix="claudecode-demo-") as scratch:
            args.env = {}
            if args.demo:
                from .demo import DemoHome

                home = DemoHome(scratch, args.demo_home)
                cli_path, args.env = str(home.cli), home.env
                if args.cwd is None:
                    args.cwd = str(home.work)
            else:
                try:
                    cli_path = find_cli(args.cli)
                except CLINotFoundError as exc:
                    print(escape_control(f"claudecode-bridge: {exc}"), file=sys.stderr)
                    print(
                        "Try `claudecode-bridge run --demo` to see the bridge work without it. "
                        + INSTALL_HINT,
                        file=sys.stderr,
                    )
                    return 1
            try:
                return anyio.run(_run, args, cli_path, prompt, tracer_provider)
            except ClaudeCodeError as exc:
                print(escape_control(f"claudecode-bridge: {exc}"), file=sys.stderr)
                return 1
            except KeyboardInterrupt:
                return 130
    finally:
        if tracer_provider is not None:
            tracer_provider.shutdown()
