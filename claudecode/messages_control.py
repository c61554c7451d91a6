"""The CLI's control-plane lines: its requests to us, its answers to ours, its cancellations.

Re-exported by :mod:`claudecode.messages`; import them from there.

Answering the CLI's control requests
------------------------------------
:class:`InboundControlRequest` has reply helpers in the style of wsproto's
``Ping.response()``; each returns an :class:`~claudecode.control.OutboundControlResponse`
with the right ``request_id`` and shape::

    match msg:
        case InboundControlRequest(request=CanUseToolRequest(tool_name="Bash")):
            reply = msg.allow()          # {"behavior": "allow", "updatedInput": <input>}
        case InboundControlRequest(request=HookCallbackRequest()):
            reply = msg.pre_tool_use("ask", "let the user decide")
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from .errors import UsageError
from .lenient_info import LENIENT_KEY, Lenient
from .outbound import (
    ControlFailure,
    ControlResponseBody,
    ControlSuccess,
    OutboundControlResponse,
)

__all__ = (
    "CanUseToolRequest",
    "ControlCancelRequest",
    "HookCallbackRequest",
    "InboundControlRequest",
    "InboundControlRequestBody",
    "InboundControlResponse",
    "McpMessageRequest",
)


class _Inbound(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of the top-level control-plane lines."""

    #: Set when the line only decoded after repairs (see :class:`~claudecode.lenient_info.Lenient`).
    lenient: Lenient | None = msgspec.field(default=None, name=LENIENT_KEY)


# ----------------------------------------------------------------- control plane (in)


class _InReq(msgspec.Struct, frozen=True, kw_only=True, tag_field="subtype", omit_defaults=True):
    """Base of the bodies of the CLI's control requests."""


class CanUseToolRequest(_InReq, frozen=True, tag="can_use_tool"):
    """The CLI asks whether a tool call may run (``--permission-prompt-tool stdio``).

    Answer with :meth:`InboundControlRequest.allow` or :meth:`InboundControlRequest.deny`.
    """

    tool_name: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None
    display_name: str | None = None
    description: str | None = None
    #: Rules the user could add instead of answering once (plain JSON).
    permission_suggestions: list[Any] | None = None
    blocked_path: str | None = None
    #: Why the CLI asks, e.g. a hook that answered ``ask``.
    decision_reason: str | None = None
    decision_reason_type: str | None = None
    decision_reason_hook_event: str | None = None
    decision_reason_hook_source: str | None = None
    agent_id: str | None = None
    #: For MCP tools, e.g. ``{"name": "fe", "source": "sdk"}``.
    mcp_server: dict[str, Any] | None = None
    server_policy_ask_only: bool | None = None


class HookCallbackRequest(_InReq, frozen=True, tag="hook_callback"):
    """A hook registered in ``initialize`` fired; ``input`` is the hook's input object.

    ``input["hook_event_name"]`` says which event (``PreToolUse``, ``PostToolUse``, ``Stop``...).
    """

    callback_id: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None


class McpMessageRequest(_InReq, frozen=True, tag="mcp_message"):
    """A JSON-RPC message for an SDK MCP server the host serves in-process."""

    server_name: str
    message: dict[str, Any] = msgspec.field(default_factory=dict)


#: Every control request body the CLI sends, tagged by ``"subtype"``.
InboundControlRequestBody: TypeAlias = CanUseToolRequest | HookCallbackRequest | McpMessageRequest


def _subtype(body: msgspec.Struct) -> object:
    return body.__struct_config__.tag


def _respond(request_id: str, payload: dict[str, Any]) -> OutboundControlResponse:
    return OutboundControlResponse(response=ControlSuccess(request_id=request_id, response=payload))


class InboundControlRequest(_Inbound, frozen=True, tag="control_request"):
    """A request from the CLI that needs an answer (``request_id`` is the CLI's, a UUID).

    The reply helpers return the complete :class:`~claudecode.control.OutboundControlResponse`.
    A helper that does not fit the request's subtype raises :class:`~claudecode.errors.UsageError`.
    """

    request_id: str
    request: InboundControlRequestBody

    # -- can_use_tool

    def _can_use_tool(self, helper: str) -> CanUseToolRequest:
        if not isinstance(self.request, CanUseToolRequest):
            raise UsageError(
                f"{helper}() answers a can_use_tool request, not {_subtype(self.request)!r}"
            )
        return self.request

    def allow(
        self,
        updated_input: dict[str, Any] | None = None,
        updated_permissions: list[Any] | None = None,
    ) -> OutboundControlResponse:
        """Allow the tool call.

        Always sends ``updatedInput``: the original input unless ``updated_input`` replaces
        it (2.1.197 rejects an allow without it, and an empty object would wipe the input).

        Args:
            updated_input: the input the tool should run with instead of the original.
            updated_permissions: permission updates to apply (e.g. from
                ``permission_suggestions``), sent as ``updatedPermissions``.
        """
        req = self._can_use_tool("allow")
        payload: dict[str, Any] = {
            "behavior": "allow",
            "updatedInput": dict(req.input) if updated_input is None else updated_input,
        }
        if updated_permissions is not None:
            payload["updatedPermissions"] = updated_permissions
        return _respond(self.request_id, payload)

    def deny(self, message: str, interrupt: bool = False) -> OutboundControlResponse:
        """Deny the tool call; ``message`` goes to the model, ``interrupt`` also ends the turn."""
        self._can_use_tool("deny")
        return _respond(
            self.request_id, {"behavior": "deny", "message": message, "interrupt": interrupt}
        )

    # -- hook_callback

    def _hook(self, helper: str) -> HookCallbackRequest:
        if not isinstance(self.request, HookCallbackRequest):
            raise UsageError(
                f"{helper}() answers a hook_callback request, not {_subtype(self.request)!r}"
            )
        return self.request

    def hook_output(
        self,
        *,
        continue_: bool | None = None,
        suppress_output: bool | None = None,
        stop_reason: str | None = None,
        decision: Literal["approve", "block"] | None = None,
        reason: str | None = None,
        system_message: str | None = None,
        hook_specific_output: dict[str, Any] | None = None,
    ) -> OutboundControlResponse:
        """Answer a hook callback with a general hook output; ``None`` fields are left out.

        Example: ``hook_output(continue_=True)`` sends ``{"continue": true}``.
        """
        self._hook("hook_output")
        fields = {
            "continue": continue_,
            "suppressOutput": suppress_output,
            "stopReason": stop_reason,
            "decision": decision,
            "reason": reason,
            "systemMessage": system_message,
            "hookSpecificOutput": hook_specific_output,
        }
        return _respond(self.request_id, {k: v for k, v in fields.items() if v is not None})

    def pre_tool_use(
        self,
        decision: Literal["allow", "deny", "ask"],
        reason: str | None = None,
        updated_input: dict[str, Any] | None = None,
    ) -> OutboundControlResponse:
        """Answer a ``PreToolUse`` hook with a permission decision.

        Sends ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision":
        decision, "permissionDecisionReason": reason}}`` (reason and ``updatedInput`` only
        when given). ``ask`` makes the CLI send a ``can_use_tool`` request next.
        """
        self._hook("pre_tool_use")
        specific: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": decision}
        if reason is not None:
            specific["permissionDecisionReason"] = reason
        if updated_input is not None:
            specific["updatedInput"] = updated_input
        return _respond(self.request_id, {"hookSpecificOutput": specific})

    def hook_decision(
        self, decision: Literal["approve", "block"], reason: str | None = None
    ) -> OutboundControlResponse:
        """Answer a ``Stop`` (or ``SubagentStop``/``PostToolUse``) hook: ``{"decision", "reason"}``.

        ``block`` on a Stop hook makes the model continue, with ``reason`` as the instruction.
        """
        self._hook("hook_decision")
        payload: dict[str, Any] = {"decision": decision}
        if reason is not None:
            payload["reason"] = reason
        return _respond(self.request_id, payload)

    # -- mcp_message

    def mcp_response(self, message: dict[str, Any]) -> OutboundControlResponse:
        """Answer an ``mcp_message`` with a JSON-RPC message: ``{"mcp_response": message}``."""
        if not isinstance(self.request, McpMessageRequest):
            raise UsageError(
                f"mcp_response() answers an mcp_message request, not {_subtype(self.request)!r}"
            )
        return _respond(self.request_id, {"mcp_response": message})

    # -- any subtype

    def success(self, payload: dict[str, Any] | None = None) -> OutboundControlResponse:
        """Answer with success and a free-form payload (``{}`` when ``None``)."""
        return _respond(self.request_id, {} if payload is None else payload)

    def error(self, message: str) -> OutboundControlResponse:
        """Answer with an error; the CLI treats the request as failed with ``message``."""
        return OutboundControlResponse(
            response=ControlFailure(request_id=self.request_id, error=message)
        )


class InboundControlResponse(_Inbound, frozen=True, tag="control_response"):
    """The CLI's answer to one of our control requests (``request_id`` inside ``response``)."""

    response: ControlResponseBody

    @property
    def request_id(self) -> str:
        """The id of our request this answers."""
        return self.response.request_id


class ControlCancelRequest(_Inbound, frozen=True, tag="control_cancel_request"):
    """The CLI withdrew its request ``request_id`` (e.g. a permission prompt on interrupt)."""

    request_id: str
