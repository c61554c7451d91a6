"""``ClaudeSDKClient``: a multi-turn conversation, as in ``claude-agent-sdk``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import msgspec

from ..session import Session
from ._convert import to_sdk_message
from ._session import open_session, send_prompt, translated
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

    ``connect()`` and ``disconnect()`` (or ``async with``) must run in the same task: the
    session's task group lives between them.
    """

    def __init__(self, options: ClaudeAgentOptions | None = None, transport: Any = None):
        self.options = options or ClaudeAgentOptions()
        self._transport = transport
        self._session: Session | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._tasks: anyio.abc.TaskGroup | None = None

    async def connect(self, prompt: str | AsyncIterable[dict[str, Any]] | None = None) -> None:
        """Start the CLI; send ``prompt`` if given (a string or a stream of user dicts)."""
        if self._session is not None:
            return
        session = open_session(self.options, self._transport)
        stack = contextlib.AsyncExitStack()
        try:
            with translated():
                await stack.enter_async_context(session)
            self._tasks = await stack.enter_async_context(anyio.create_task_group())
        except BaseException:
            await stack.aclose()
            raise
        self._session, self._stack = session, stack
        if isinstance(prompt, str):
            await self.query(prompt)
        elif prompt is not None:
            self._tasks.start_soon(self.query, prompt)

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
        with translated():
            async for message in session.messages():
                converted = to_sdk_message(message)
                if converted is not None:
                    yield converted

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
        stack, self._stack = self._stack, None
        tasks, self._tasks = self._tasks, None
        self._session = None
        if tasks is not None:
            tasks.cancel_scope.cancel()
        if stack is not None:
            await stack.aclose()

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        await self.disconnect()
        return False
