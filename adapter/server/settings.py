"""What the HTTP server runs with."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from ..config import SessionConfig
from .agents import Agent
from .jwt_auth import JwtSettings

__all__ = ("ServerSettings",)


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """Settings of :func:`~adapter.server.create_app`; every field has a safe default.

    Security: ``token`` (when set, every route but ``/healthz`` needs ``Authorization:
    Bearer <token>``; WebSocket routes also accept a ``token`` query parameter, since browsers
    cannot set headers there), ``cors_origins`` (the browser origins allowed to call the API
    from another origin; requests carrying any other foreign ``Origin`` are refused),
    ``allowed_hosts`` (names besides ``localhost``, ``127.0.0.1``, ``[::1]`` and the bound
    address a client may reach the server by, as ``name`` for any port or ``name:port``;
    any other ``Host`` header is refused with 421, which is what defeats DNS rebinding; add
    the public name when a proxy or a port mapping sits in front), ``max_body_bytes``
    (larger request bodies get 413).

    Identities (:mod:`adapter.server.identity`): ``token`` is one admin user; ``users_file``
    a TOML file of users (reloaded when it changes); ``jwt`` accepts tokens signed by an
    OpenID Connect provider. With none of them every request is the implicit local user.
    Every session and terminal belongs to the user who started it (:mod:`adapter.owners`);
    ``audit_log`` is the JSON-lines file (created 0600) the audit records also go to.

    Sessions: ``session_defaults``, ``max_sessions`` and ``warm`` (CLIs kept started for
    the defaults, see :class:`~adapter.LocalBackend`) configure the in-process backend the
    app creates when none is given; ``demo`` says the sessions run the built-in scripted
    stand-in (reported by ``/readyz``). ``agents`` are the named agents the AG-UI and
    CopilotKit front end and the WebSocket protocol offer (:mod:`adapter.server.agents`,
    the ``--agents`` file; each runs its sessions from its own spec over the defaults);
    none: one agent, ``default``, with the defaults. ``state_dir`` is where front ends keep
    what must survive a restart (created private, 0700).

    Streams: ``keepalive_seconds`` between ``: keep-alive`` comments on idle SSE streams;
    ``agui_disconnect``: what a client that disconnects mid-run does to the CLI turn
    (``interrupt`` it, the default, or ``keep`` it running); ``agui_max_threads``: AG-UI
    threads kept in memory (past it the least recently used idle thread goes, and its
    session is closed; its next run reloads it from the state directory and resumes it).

    Terminals: ``terminals`` (``False`` serves none: no ``/api/terminals``, no ``/ws/pty``,
    no terminal sessions over ``/ws``; a terminal is a shell, or an agent CLI, running as the
    server's user), ``terminal_input``: who may type into a terminal session, ``all`` its viewers
    (the default) or only the ``first`` (the next in line takes over when it leaves).
    """

    token: str | None = None
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    max_body_bytes: int = 8 * 1024 * 1024
    demo: bool = False
    state_dir: str | os.PathLike[str] | None = None
    session_defaults: SessionConfig = field(default_factory=SessionConfig)
    agents: tuple[Agent, ...] = ()
    max_sessions: int = 32
    warm: int = 0
    keepalive_seconds: float = 15.0
    agui_disconnect: Literal["interrupt", "keep"] = "interrupt"
    agui_max_threads: int = 10_000
    terminals: bool = True
    terminal_input: Literal["all", "first"] = "all"
    users_file: str | os.PathLike[str] | None = None
    jwt: JwtSettings | None = None
    audit_log: str | os.PathLike[str] | None = None
