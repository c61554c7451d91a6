"""The typed control requests a session can send, as methods (mixed into ``Session``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import control as ctl
from .errors import CLIStartError, UsageError
from .options import EFFORT_LEVELS, ClaudeCodeOptions

__all__ = ("ControlRequests",)


class ControlRequests:
    """Convenience methods over :meth:`request`, one per control request subtype.

    Each raises :class:`~claudecode.errors.ControlRequestError` when the CLI answers with an
    error, :class:`~claudecode.errors.ControlTimeoutError` without an answer in time, and
    :class:`~claudecode.errors.CLIExitedError` when the CLI exits first.
    """

    initialize_result: ctl.InitializeResult | None
    options: ClaudeCodeOptions
    _hook_config: dict[str, list[dict[str, Any]]]

    async def request(self, body: Any, *, timeout: float | None = None) -> dict[str, Any] | None:
        """Send a control request body and return the CLI's success body."""
        raise NotImplementedError

    async def initialize(self) -> ctl.InitializeResult:
        """Send ``initialize`` (hooks, agents, skills) and return the CLI's description."""
        body = ctl.Initialize(hooks=self._hook_config or None, **self.options.initialize_fields())
        result = await self.request(body)
        self.initialize_result = ctl.parse_result(ctl.InitializeResult, result)
        self._check_blocking_hooks(self.initialize_result)
        return self.initialize_result

    def _check_blocking_hooks(self, result: ctl.InitializeResult) -> None:
        """A hook meant to block when it fails must not run unguarded: fail instead."""
        blocking = any(
            entry.get("onFailure", "continue") != "continue"
            for entries in self._hook_config.values()
            for entry in entries
        )
        if not blocking:
            return
        if not result.hook_on_failure_supported:
            raise CLIStartError(
                "the CLI does not honour on_failure on hook matchers, so a failing hook "
                'would not block; update Claude Code or drop on_failure="block"'
            )
        if result.hooks_applied is False:
            raise CLIStartError(
                "the CLI did not register the hooks (the session was already running), so "
                'a hook with on_failure="block" would never run'
            )

    async def interrupt(self) -> ctl.InterruptResult:
        """Interrupt the running turn; it ends with an ``error_during_execution`` result."""
        return ctl.parse_result(ctl.InterruptResult, await self.request(ctl.Interrupt()))

    async def set_model(self, model: str | None) -> ctl.SetModelResult:
        """Switch the model for the next turns (``None``: the default)."""
        return ctl.parse_result(ctl.SetModelResult, await self.request(ctl.SetModel(model=model)))

    async def set_permission_mode(self, mode: str) -> ctl.SetPermissionModeResult:
        """Switch the permission mode; an invalid mode raises :class:`ControlRequestError`."""
        answer = await self.request(ctl.SetPermissionMode(mode=mode))
        return ctl.parse_result(ctl.SetPermissionModeResult, answer)

    async def set_max_thinking_tokens(self, tokens: int | None) -> None:
        """Limit thinking tokens for the next turns."""
        await self.request(ctl.SetMaxThinkingTokens(max_thinking_tokens=tokens))

    async def apply_flag_settings(self, settings: Mapping[str, Any]) -> None:
        """Change settings of the running session (``apply_flag_settings``: the keys of
        Claude Code's settings files; ``None`` removes a key). The CLI drops a value it does
        not accept without an error, so prefer a typed method such as :meth:`set_effort`."""
        await self.request(ctl.ApplyFlagSettings(settings=dict(settings)))

    async def set_effort(self, effort: str | None) -> None:
        """Use ``effort`` (``low``, ``medium``, ``high``, ``xhigh``, ``max``: the CLI's
        ``--effort``) from the next model request on; ``None`` returns to the model's own
        default, dropping an ``--effort`` the session started with too.

        Raises:
            UsageError: ``effort`` is not one of :data:`claudecode.options.EFFORT_LEVELS`
                (the CLI would ignore it silently).
        """
        if effort is not None and effort not in EFFORT_LEVELS:
            raise UsageError(f"unknown effort {effort!r} (one of: {', '.join(EFFORT_LEVELS)})")
        await self.apply_flag_settings({"effortLevel": effort})

    async def mcp_status(self) -> ctl.McpStatusResult:
        """The CLI's view of its MCP servers."""
        return ctl.parse_result(ctl.McpStatusResult, await self.request(ctl.McpStatus()))

    async def get_context_usage(self) -> ctl.ContextUsageResult:
        """The context-window breakdown (slow: the CLI counts tokens through the API)."""
        answer = await self.request(ctl.GetContextUsage())
        return ctl.parse_result(ctl.ContextUsageResult, answer)

    async def rewind_files(self, user_message_id: str, *, dry_run: bool = False) -> Any:
        """Restore files to their state at ``user_message_id`` (needs file checkpointing)."""
        return await self.request(ctl.RewindFiles(user_message_id=user_message_id, dry_run=dry_run))

    async def stop_task(self, task_id: str) -> Any:
        """Stop a background task (sub-agent or shell)."""
        return await self.request(ctl.StopTask(task_id=task_id))

    async def mcp_message(self, server_name: str, message: dict[str, Any]) -> Any:
        """Send a JSON-RPC message to one of the CLI's MCP servers; returns its answer."""
        return await self.request(ctl.McpMessage(server_name=server_name, message=message))

    async def mcp_reconnect(self, server_name: str) -> Any:
        """Reconnect an MCP server of the CLI."""
        return await self.request(ctl.McpReconnect(server_name=server_name))

    async def mcp_toggle(self, server_name: str, *, enabled: bool) -> Any:
        """Enable or disable an MCP server of the CLI."""
        return await self.request(ctl.McpToggle(server_name=server_name, enabled=enabled))

    async def mcp_set_servers(self, servers: dict[str, Any]) -> Any:
        """Replace the CLI's dynamically configured MCP servers."""
        return await self.request(ctl.McpSetServers(servers=servers))
