"""``claudecode-bridge users add NAME [--admin] [--terminals] [--file FILE]``.

Prints a new random bearer token for ``NAME`` and the entry for ``serve --users FILE`` (only
the token's SHA-256 goes in it). With ``--file`` the entry is appended to the file (created
0600; a running server picks it up within a second) and only the token is printed. The token
is shown once: hand it to the user over a private channel.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = (
    "add_users_arguments",
    "users_command",
)


def add_users_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``users`` sub-command's arguments."""
    sub = parser.add_subparsers(dest="users_command", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="make a token for a new user and print its entry")
    add.add_argument("name", help="the user's name (shown in the audit log)")
    add.add_argument("--admin", action="store_true", help="may see and act on every session")
    add.add_argument(
        "--terminals",
        action="store_true",
        help="may open terminal sessions (a shell as the server's own user)",
    )
    add.add_argument("--file", help="append the entry to this users file (created 0600)")


def users_command(args: argparse.Namespace) -> int:
    """Carry out ``claudecode-bridge users``; returns the exit status."""
    from ..server.identity import UsersFileError, new_token, parse_users, user_entry

    name = args.name.strip()
    if not name or not name.isprintable():
        print("claudecode-bridge users: NAME must be printable and not empty", file=sys.stderr)
        return 2
    token = new_token()
    entry = user_entry(name, token, admin=args.admin, terminals=args.terminals)
    if args.file is None:
        print(f"token for {name}: {token}\n\n{entry}", end="")
        return 0
    existing = ""
    if os.path.exists(args.file):
        with open(args.file, encoding="utf-8") as fh:
            existing = fh.read()
    try:
        parse_users(existing + "\n" + entry, source=args.file)
    except UsersFileError as exc:
        print(f"claudecode-bridge users: {exc}", file=sys.stderr)
        return 1
    fd = os.open(args.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(("\n" if existing and not existing.endswith("\n\n") else "") + entry)
    print(f"token for {name}: {token}")
    return 0
