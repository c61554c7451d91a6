"""Shared pieces of ``query()`` and ``ClaudeSDKClient``: opening the session, sending the
SDK's message dicts, and raising the SDK's error classes."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, Iterator, Mapping
from typing import Any

import anyio

from ..errors import ClaudeCodeError, UsageError
from ..session import Session
from ._mcp_bridge import McpServerBridge
from .errors import from_client_error
from .options import ClaudeAgentOptions, session_args

__all__ = ("TurnCounter", "open_session", "send_prompt", "stop_servers", "translated")


def open_session(options: ClaudeAgentOptions, transport: object | None) -> Session:
    """A :class:`Session` for ``options`` (not started); close it with :func:`stop_servers`
    after it ended, for the mcp-package servers it serves."""
    if transport is not None:
        raise UsageError(
            "claudecode.sdk runs the CLI itself; a claude-agent-sdk Transport cannot be "
            "used (give cli_path, or use claudecode.Session with a claudecode Transport)"
        )
    args = session_args(options)
    return Session(
        args.options,
        can_use_tool=args.can_use_tool,
        hooks=args.hooks,
        mcp_servers=args.mcp_servers,
    )


async def stop_servers(session: Session) -> None:
    """Stop the mcp-package servers a session served (they run in tasks of their own)."""
    for server in session.mcp_servers:
        if isinstance(server, McpServerBridge):
            await server.aclose()


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Raise the client's errors as the SDK's classes (which inherit from both)."""
    try:
        yield
    except ClaudeCodeError as exc:
        replacement = from_client_error(exc)
        if replacement is None:
            raise
        raise replacement from exc


async def send_prompt(session: Session, message: Mapping[str, Any]) -> None:
    """Send one of the SDK's streaming-input dicts (``{"type": "user", "message": ...}``)."""
    if message.get("type") != "user" or not isinstance(message.get("message"), Mapping):
        raise UsageError(f"only user messages can be sent, not {dict(message)!r:.120}")
    origin = message.get("origin")
    await session.send(
        message["message"].get("content", ""),
        uuid=message.get("uuid"),
        parent_tool_use_id=message.get("parent_tool_use_id"),
        origin=origin if isinstance(origin, Mapping) else None,
    )


class TurnCounter:
    """Counts prompts sent and results seen, so input can end once every turn is done
    (the CLI needs stdin open to ask for permissions while a turn runs)."""

    def __init__(self) -> None:
        self.sent = 0
        self.results = 0
        self._changed = anyio.Event()

    def result_seen(self) -> None:
        self.results += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_all_answered(self) -> None:
        while self.results < self.sent:
            await self._changed.wait()


async def feed(
    session: Session, prompt: str | AsyncIterable[Mapping[str, Any]], turns: TurnCounter
) -> None:
    """Send ``prompt``, wait until each prompt has its result, then end the input."""
    try:
        if isinstance(prompt, str):
            await session.send(prompt)
            turns.sent += 1
        else:
            async for message in prompt:
                await send_prompt(session, message)
                turns.sent += 1
        await turns.wait_all_answered()
    except ClaudeCodeError:
        pass  # the CLI is gone: the message loop reports why
    finally:
        with anyio.CancelScope(shield=True):
            await session.close()
