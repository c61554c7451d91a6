"""The ``claudecode-bridge`` command line.

This is an entry point, so (unlike the libraries) it may configure logging. Sub-commands:

* ``run`` — one prompt, one turn: a readable terminal rendering, or ``--json`` events;
  ``--demo`` runs against a built-in scripted stand-in for the CLI.
* ``schema`` — print the JSON Schema of the event stream (``docs/event-schema.json``).
* ``serve`` — the HTTP server for every front end (needs the ``server`` extra); see
  :mod:`adapter.commands.serve`.
* ``worker`` — run sessions for a cluster of gateways over NATS JetStream
  (``--nats URL``; needs the ``cluster`` extra).
* ``acp`` — run as an Agent Client Protocol agent on stdin/stdout (editors spawn it).
* ``users add NAME`` — a new token and its entry for ``serve --users FILE``.
* ``doctor`` — find the Claude Code CLI, print its path and version, and check that it
  speaks stream-json (spawn, initialize, close). Exit 0 when usable, 1 otherwise.

Every command whose output is cut off (``claudecode-bridge schema | head``) stops quietly
with status 141, as a shell reports for a program stopped by a closed pipe.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio

from .acp import acp_command, add_acp_arguments
from .run import add_run_arguments, run_command
from .serve import add_serve_arguments, serve_command
from .users import add_users_arguments, users_command


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claudecode-bridge",
        description="Put the Claude Code CLI to work inside other programs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run one prompt and show what the agent does")
    add_run_arguments(run)
    serve = sub.add_parser("serve", help="serve sessions over HTTP to UIs and other programs")
    add_serve_arguments(serve)
    sub.add_parser("schema", help="print the JSON Schema of the event stream")
    from .worker import add_worker_arguments

    worker = sub.add_parser("worker", help="run sessions for a cluster over NATS JetStream")
    add_worker_arguments(worker)
    acp = sub.add_parser("acp", help="serve editors as an Agent Client Protocol agent (stdio)")
    add_acp_arguments(acp)
    users = sub.add_parser("users", help="make tokens for the users of 'serve --users FILE'")
    add_users_arguments(users)
    doctor = sub.add_parser("doctor", help="check that the Claude Code CLI is usable")
    doctor.add_argument("--cli", help="path of the claude executable (default: discovered)")
    doctor.add_argument("--timeout", type=float, default=30.0, help="seconds to wait (30)")
    return parser


def _doctor(args: argparse.Namespace) -> int:
    from claudecode.doctor import diagnose
    from normalize._native import native_state

    report = anyio.run(lambda: diagnose(args.cli, timeout=args.timeout))
    for line in report.lines():
        print(line)
    # Not a reason to fail: the pure modules behave the same, slower.
    print(f"{'adapter:':<12} {native_state().describe()}")
    return 0 if report.ok else 1


#: The exit status when stdout was closed under a command (``claudecode-bridge schema |
#: head``): 128 + SIGPIPE, what a shell reports for any program a closed pipe stopped.
EXIT_BROKEN_PIPE = 141


def _silence_stdout() -> None:
    """Point stdout at /dev/null: the interpreter flushes it at exit, which would fail (and
    say so on stderr) once more on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``claudecode-bridge`` console script.

    A reader that goes away (``| head``) ends the command quietly with
    :data:`EXIT_BROKEN_PIPE`, after the session (and its CLI) closed as on any other error.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    status = 0
    broken = False
    try:
        status = _command(parser, args)
    except* BrokenPipeError:
        broken = True
    if broken:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return status


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "doctor":
        return _doctor(args)
    if args.command == "run":
        return run_command(args)
    if args.command == "serve":
        return serve_command(args)
    if args.command == "worker":
        from .worker import worker_command

        return worker_command(args)
    if args.command == "users":
        return users_command(args)
    if args.command == "acp":
        return acp_command(args)
    if args.command == "schema":
        import json

        from ..events import event_schema

        print(json.dumps(event_schema(), indent=2, sort_keys=True))
        return 0
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
