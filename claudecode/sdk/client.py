"""``ClaudeSDKClient``: a multi-turn conversation, as in ``claude-agent-sdk``."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Coroutine, Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import msgspec

from .. import messages as m
from .._detached import DetachedTask, spawn_detached
from ..session import Session
from ._convert import to_sdk_message
from ._session import open_session, send_prompt, stop_servers, translated
from ._store_link import StoreLink
from .errors import CLIConnectionError
from .messages import Message, ResultMessage
from .options import ClaudeAgentOptions
from .permissions import PermissionMode

__all__ = ("ClaudeSDKClient",)


class ClaudeSDKClient:
    """A conversation with the CLI that stays open between prompts.

    ::

        async with ClaudeSDKClient(options) as client:
            await client.query("Hello")
            async for message in client.receive_response():
                ...

    The session lives in a task of its own, so ``connect()``, the calls and
    ``disconnect()`` may come from different tasks (a fixture's set-up and tear-down, say).
    """

    def __init__(self, options: ClaudeAgentOptions | None = None, transport: Any = None):
        self.options = options or ClaudeAgentOptions()
        self._transport = transport
        self._session: Session | None = None
        self._host: _Host | None = None

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Start the CLI; send ``prompt`` if given (a string or a stream of user dicts)."""
        if self._session is not None:
            return
        with translated():
            options, link = await StoreLink.open(self.options)
        session = open_session(options, self._transport)
        host = _Host(session, link)
        host.handle = spawn_detached(host.main(), name="claudecode.sdk client")
        try:
            with translated():
                await host.wait_started()
        except BaseException:
            host.stop()
            with anyio.CancelScope(shield=True):
                await host.handle.wait()
            raise
        self._session, self._host = session, host
        if isinstance(prompt, str):
            await self.query(prompt)
        elif prompt is not None:
            host.start_soon(self.query, prompt)

    def _require(self) -> Session:
        if self._session is None:
            raise CLIConnectionError("Not connected. Call connect() first.")
        return self._session

    async def query(
        self,
        prompt: str | AsyncIterable[dict[str, Any]] | AsyncIterable[Mapping[str, Any]],
        session_id: str = "default",
    ) -> None:
        """Send a prompt (a string, or user-message dicts in order)."""
        session = self._require()
        with translated():
            if isinstance(prompt, str):
                await session.send(prompt)
                return
            async for message in prompt:
                await send_prompt(session, message)

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message from the CLI until it exits."""
        session = self._require()
        link = self._host.link if self._host is not None else None
        with translated():
            async for message in session.messages():
                if link is not None:
                    if link.take(message):
                        continue
                    for error in link.errors():
                        yield error
                    if message.__class__ is m.ResultMessage:
                        # The store holds this turn before its result is seen.
                        await link.flush()
                        for error in link.errors():
                            yield error
                converted = to_sdk_message(message)
                if converted is not None:
                    yield converted
            if link is not None:  # what came after the last result
                await link.flush()
                for error in link.errors():
                    yield error

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next :class:`ResultMessage`."""
        async for message in self.receive_messages():
            yield message
            if isinstance(message, ResultMessage):
                return

    async def interrupt(self) -> None:
        """Interrupt the running turn."""
        with translated():
            await self._require().interrupt()

    async def set_permission_mode(self, mode: PermissionMode) -> None:
        """Change the permission mode for the next tool calls."""
        with translated():
            await self._require().set_permission_mode(mode)

    async def set_model(self, model: str | None = None) -> None:
        """Change the model (``None``: the default)."""
        with translated():
            await self._require().set_model(model)

    async def rewind_files(self, user_message_id: str) -> None:
        """Restore files to their state at ``user_message_id`` (file checkpointing)."""
        with translated():
            await self._require().rewind_files(user_message_id)

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Reconnect one of the CLI's MCP servers."""
        with translated():
            await self._require().mcp_reconnect(server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Enable or disable one of the CLI's MCP servers."""
        with translated():
            await self._require().mcp_toggle(server_name, enabled=enabled)

    async def stop_task(self, task_id: str) -> None:
        """Stop a background task."""
        with translated():
            await self._require().stop_task(task_id)

    async def get_mcp_status(self) -> dict[str, Any]:
        """The CLI's MCP servers and their state (``{"mcpServers": [...]}``)."""
        with translated():
            status = await self._require().mcp_status()
        data: dict[str, Any] = msgspec.to_builtins(status)
        return data

    async def get_context_usage(self) -> dict[str, Any]:
        """The context-window breakdown."""
        with translated():
            usage = await self._require().get_context_usage()
        data: dict[str, Any] = msgspec.to_builtins(usage)
        return data

    async def get_server_info(self) -> dict[str, Any] | None:
        """What the CLI answered to ``initialize`` (commands, models, agents, ...)."""
        result = self._require().initialize_result
        if result is None:
            return None
        data: dict[str, Any] = msgspec.to_builtins(result)
        return data

    async def disconnect(self) -> None:
        """End the conversation: close the CLI's input and wait for it to exit."""
        host, self._host = self._host, None
        self._session = None
        if host is not None:
            host.stop()
            with anyio.CancelScope(shield=True):
                await host.handle.wait()

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool:
        await self.disconnect()
        return False


class _Host:
    """The detached task a client's session runs in, from ``connect()`` to ``disconnect()``."""

    def __init__(self, session: Session, link: StoreLink | None) -> None:
        self.session = session
        self.link = link
        self.handle: DetachedTask
        self._started = anyio.Event()
        self._stop = anyio.Event()
        self._tasks: anyio.abc.TaskGroup | None = None

    async def main(self) -> None:
        try:
            async with self.session, anyio.create_task_group() as tg:
                self._tasks = tg
                self._started.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        finally:
            self._tasks = None
            self._started.set()
            with anyio.CancelScope(shield=True):
                await stop_servers(self.session)
                if self.link is not None:
                    await self.link.aclose()

    async def wait_started(self) -> None:
        await self._started.wait()
        if self._tasks is None:
            await self.handle.wait()  # raises why the session did not start
            raise CLIConnectionError("the CLI session ended while starting")

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        if self._tasks is not None:
            self._tasks.start_soon(fn, *args)

    def stop(self) -> None:
        self._stop.set()
        if not self._started.is_set():
            self.handle.cancel()
