"""``serve``'s identity options: the users file, OpenID Connect (JWT) and the audit log.

Kept apart from :mod:`adapter.commands.serve` so that command stays about binding and
running; it calls :func:`add_identity_arguments` and :func:`identity_settings`.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = (
    "add_identity_arguments",
    "has_identity",
    "identity_settings",
)


def _claim_rule(value: str) -> tuple[str, str]:
    claim, sep, expected = value.partition("=")
    if not sep or not claim or not expected:
        raise argparse.ArgumentTypeError(f"expected CLAIM=VALUE, got {value!r}")
    return claim, expected


def add_identity_arguments(parser: argparse.ArgumentParser) -> None:
    """``--users``, ``--audit-log`` and the ``--jwt-*`` options."""
    group = parser.add_argument_group(
        "users",
        "who may use the server: every session belongs to the user who started it "
        "(docs/security.md)",
    )
    group.add_argument(
        "--users",
        metavar="FILE",
        help="a TOML file of users and the SHA-256 of their tokens (see 'claudecode-bridge "
        "users add'); re-read when it changes and on SIGHUP",
    )
    group.add_argument(
        "--audit-log",
        metavar="PATH",
        help="append audit records (permission decisions, sessions and terminals started "
        "and stopped, admin actions) to this file as JSON lines (created 0600)",
    )
    group.add_argument("--jwt-jwks", metavar="URL", help="accept JWTs signed by this JWKS's keys")
    group.add_argument("--jwt-issuer", metavar="ISS", help="the issuer JWTs must name")
    group.add_argument("--jwt-audience", metavar="AUD", help="the audience JWTs must name")
    group.add_argument(
        "--jwt-name-claim", default="sub", metavar="CLAIM", help="the user's name (sub)"
    )
    group.add_argument(
        "--jwt-admin-claim",
        type=_claim_rule,
        metavar="CLAIM=VALUE",
        help="users whose CLAIM is (or contains) VALUE are admins",
    )
    group.add_argument(
        "--jwt-terminals-claim",
        type=_claim_rule,
        metavar="CLAIM=VALUE",
        help="users whose CLAIM is (or contains) VALUE may open terminal sessions",
    )


def has_identity(args: argparse.Namespace) -> bool:
    """Whether the options name users (a users file or a JWT provider)."""
    return bool(args.users or args.jwt_jwks)


def identity_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~adapter.server.ServerSettings` fields of these options.

    Raises:
        ValueError: ``--jwt-jwks`` without ``--jwt-issuer`` and ``--jwt-audience``.
    """
    jwt = None
    if args.jwt_jwks:
        if not args.jwt_issuer or not args.jwt_audience:
            raise ValueError("--jwt-jwks needs --jwt-issuer and --jwt-audience")
        from ..server.jwt_auth import JwtSettings

        jwt = JwtSettings(
            jwks_url=args.jwt_jwks,
            issuer=args.jwt_issuer,
            audience=args.jwt_audience,
            name_claim=args.jwt_name_claim,
            admin_claim=args.jwt_admin_claim,
            terminals_claim=args.jwt_terminals_claim,
        )
    elif args.jwt_issuer or args.jwt_audience:
        raise ValueError("--jwt-issuer and --jwt-audience need --jwt-jwks")
    return {"users_file": args.users, "jwt": jwt, "audit_log": args.audit_log}
