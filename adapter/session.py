"""An adapter session: one CLI session, its normalized event channel, permissions and traces.

``async with AgentSession(config) as session:`` starts the CLI (through
:class:`claudecode.Session`), translates every message into :mod:`adapter.events`, publishes
them to any number of subscribers (:meth:`subscribe`), applies the permission policy, and
traces each turn. Status: ``starting`` -> ``connected`` -> ``active`` (a turn runs) ->
``idle`` -> ... -> ``terminated``, or ``errored`` with :attr:`status_reason`.

``active`` follows what the CLI reports, not what was sent: it holds from :meth:`prompt` until
that prompt's turn ends (a prompt sent while a turn runs is queued by the CLI and keeps the
session active until its own ``result``), and a turn the CLI starts by itself (a background
sub-agent finished) makes the session active while it runs. Background tasks still running
are listed in :attr:`background_tasks`; :attr:`background_work` tells whether more is to come
without a prompt (a :class:`~adapter.SessionManager` never reaps such a session).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Literal, Self

import anyio
import anyio.abc

from claudecode import (
    CanUseToolRequest,
    ClaudeCodeError,
    ControlCancelRequest,
    HookMatcher,
    InboundControlRequest,
    InboundMessage,
    OutboundControlResponse,
    Session,
    StreamEvent,
    UsageError,
    encode_message,
)
from claudecode.internal import (
    LiteInbound,
    StreamEventLite,
    TaskSet,
    get_logger,
    use_lite_stream_events,
)

from ._debug_files import DebugFiles
from ._pending import PendingRequests
from .config import SessionConfig, cli_options
from .errors import UnknownPermissionError
from .events import (
    ErrorEvent,
    Event,
    QuestionRequest,
    UserMessage,
)
from .fanout import EventHub, Subscription
from .images import PromptImages, as_images
from .policies import PermissionDecision, hook_decision
from .telemetry import TurnTracer
from .translate import Translator

__all__ = ("AgentSession", "SessionStatus", "UnknownPermissionError")

_log = get_logger("claudecode.adapter.session")

_CONTROL_TYPES = frozenset({InboundControlRequest, ControlCancelRequest})

SessionStatus = Literal["starting", "connected", "active", "idle", "terminated", "errored"]


class AgentSession(PendingRequests):
    """One Claude Code session seen as a stream of normalized events.

    Args:
        config: what to run and how (:class:`SessionConfig`).
        session_id: our id for the session (a random one by default); the CLI's own id is
            :attr:`cli_session_id` once known.
        transport: a ready :class:`claudecode.Transport` (tests, demos); by default the CLI
            is spawned.
    """

    def __init__(
        self,
        config: SessionConfig | None = None,
        *,
        session_id: str | None = None,
        transport: Any = None,
    ) -> None:
        self.config = config or SessionConfig()
        self.id = session_id or uuid.uuid4().hex
        self.status: SessionStatus = "starting"
        self.status_reason: str | None = None
        self.created_at = time.monotonic()
        self.last_activity = self.created_at
        self._transport = transport
        self._hub = EventHub(
            self.id,
            history=self.config.history_size,
            subscriber_buffer=self.config.subscriber_buffer,
        )
        self._translator = Translator(resumed=self.config.resume is not None)
        # Called with every published batch, in the publisher's step (see observe()).
        self._observers: list[Callable[[Sequence[Event]], None]] = []
        self._tracer = TurnTracer(
            session_id=self.id,
            tracer_provider=self.config.tracer_provider,
            capture_content=self.config.capture_content,
        )
        self._client: Session | None = None
        # Who answers each open permission request (the requests are the client's: see
        # adapter._pending): the ids a person must answer, those a custom policy decides.
        self._asked: dict[str, None] = {}
        self._deciding: dict[str, anyio.CancelScope] = {}
        # the asked requests that are questions (AskUserQuestion), by the same pending id
        self._questions: dict[str, QuestionRequest] = {}
        self._always_allowed: set[str] = set()
        # Tools the session's own permission rules name (``allowed_tools``): the policy's
        # hook leaves them to the CLI, which allows what a rule matches and asks (through
        # can_use_tool) for the rest, so an agent's rules mean what they say.
        self._ruled_tools = {rule.split("(", 1)[0] for rule in self.config.allowed_tools}
        self._stack: contextlib.AsyncExitStack | None = None
        #: close() was called: the CLI's end is ours, not its own (for the log).
        self._closing = False
        self._tasks: TaskSet | None = None
        self._done = anyio.Event()
        self._plan_grace: anyio.CancelScope | None = None
        self._turns = 0
        self._debug: DebugFiles | None = None

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._open_debug_files(stack)
            self._tasks = TaskSet(await stack.enter_async_context(anyio.create_task_group()))
            self._client = Session(
                cli_options(self.config),
                hooks=self._hooks(),
                mcp_servers=list(self.config.mcp_servers),
                transport=self._transport,
                on_messages=self._on_messages,
                on_permission_timeout=self._timed_out,
            )
            if self._debug is None:  # the protocol file records whole messages
                use_lite_stream_events(self._client)  # the translator reads no stream ids
            await stack.enter_async_context(self._client)
            self._set_status("connected")
            cwd = None if self.config.cwd is None else str(self.config.cwd)
            _log.info("session.started", session_id=self.id, pid=self._client.pid, cwd=cwd)
            if self._client.initialize_result is not None:
                self._publish(self._translator.initialized(self._client.initialize_result))
            self._tasks.spawn(self._pump, name=f"adapter pump {self.id}")
        except BaseException as exc:
            _log.warning("session.start_failed", session_id=self.id, error=str(exc))
            self._set_status("errored", f"{type(exc).__name__}: {exc}")
            self._hub.close(self.status_reason)
            self._done.set()
            # Not inside a shielded scope: the task group's scope must be the innermost one
            # when it exits.
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Deny what is pending, end the CLI, finish the event stream. Idempotent."""
        stack, self._stack = self._stack, None
        if stack is None:
            return
        self._closing = True
        with anyio.CancelScope(shield=True):
            for pending_id in self.pending_permissions:
                self._cancel_pending(pending_id, "session_closed")
            if self._client is not None:
                await self._client.close()
            with anyio.move_on_after(5):
                await self._done.wait()
            if self._tasks is not None:
                self._tasks.cancel_all()
        await stack.__aexit__(None, None, None)
        self._finish("terminated" if self.status != "errored" else "errored", None)

    async def wait_closed(self) -> None:
        """Wait until the session ended (the CLI exited or :meth:`close` was called)."""
        await self._done.wait()

    def adopt(self, session_id: str | None = None) -> None:
        """Take over a session a warm pool started ahead (nobody subscribed or prompted
        yet): it counts as created now, under ``session_id`` when given (its events, spans,
        logs and debug files carry it from here on)."""
        self.created_at = self.last_activity = time.monotonic()
        if session_id is not None and session_id != self.id:
            self.id = session_id
            for part in (self._hub, self._tracer, self._debug):
                if part is not None:
                    part.rename(session_id)

    def _hooks(self) -> dict[str, list[HookMatcher]]:
        matchers = self.config.policy.hook_matchers
        if not matchers:
            return {}
        return {"PreToolUse": [HookMatcher(m, [self._pre_tool_use]) for m in matchers]}

    async def _pre_tool_use(self, req: InboundControlRequest) -> OutboundControlResponse:
        tool_input = getattr(req.request, "input", None) or {}
        tool_name = tool_input.get("tool_name") if isinstance(tool_input, dict) else None
        name = str(tool_name or "")
        with self._tracer.control(
            "hook_callback", direction="inbound", hook="PreToolUse", tool=name
        ) as span:
            decision: Literal["allow", "ask"] | None
            if name in self._always_allowed:
                decision = "allow"
            elif name in self._ruled_tools:
                decision = None
            else:
                decision = hook_decision(self.config.policy, name)
            span.set_attribute("claudecode.control.decision", decision or "none")
            if decision is None:
                return req.success({})
            return req.pre_tool_use(decision, f"{self.config.policy.name} policy")

    def _open_debug_files(self, stack: contextlib.AsyncExitStack) -> None:
        if self.config.debug_dir is not None:
            self._debug = stack.enter_context(DebugFiles(self.config.debug_dir, self.id))

    # -- the pump: CLI messages -> events ------------------------------------------------

    async def _pump(self) -> None:
        # Messages are translated and published in the client's reader task (_on_messages);
        # this task only waits for the end of the stream to finish the session.
        assert self._client is not None
        error: str | None = None
        try:
            while True:
                try:
                    stray = await self._client.receive_batch()
                except anyio.EndOfStream:
                    break
                self._on_messages(stray)
        except ClaudeCodeError as exc:
            error = str(exc)
        except Exception as exc:
            _log.error("adapter.pump_crashed", session_id=self.id, error=repr(exc))
            error = f"internal error: {exc!r}"
        finally:
            closing = self._translator.close(error)
            if error is None:  # a clean exit in the middle of a turn is an error too
                error = next(
                    (
                        e.message
                        for e in closing
                        if type(e) is ErrorEvent and e.kind == "cli_exited"
                    ),
                    None,
                )
            self._publish(closing)
            self._tracer.end(error)
            self._finish("errored" if error else "terminated", error)

    def _on_messages(self, batch: list[InboundMessage]) -> None:
        """Translate and publish one batch (runs in the client's reader task; never raises)."""
        self.last_activity = time.monotonic()
        try:
            self._publish(self._translate(batch))
            # A line may open or end a turn without an event of its own: follow it anyway.
            self._follow_turns()
        except Exception as exc:  # a bug here must not kill the reader
            _log.error("adapter.translate_failed", session_id=self.id, error=repr(exc))

    def _translate(self, batch: Sequence[LiteInbound]) -> list[Event]:
        if self._debug is not None:
            self._debug.from_cli(batch)
        if self._tracer.capture_content:
            self._record_raw(batch)  # before translating: a result ends the turn's span
        if self._plan_grace is not None:
            self._plan_grace.cancel()
            self._plan_grace = None
        if _CONTROL_TYPES.isdisjoint(map(type, batch)):  # one C-level pass, no genexpr
            return self._translator.feed_many(batch)  # the common case: no control messages
        out: list[Event] = []
        run: list[LiteInbound] = []
        for message in batch:
            if type(message) is InboundControlRequest and isinstance(
                message.request, CanUseToolRequest
            ):
                out.extend(self._translator.feed_many(run))
                run = []
                out.extend(self._permission(message))
                continue
            if type(message) is ControlCancelRequest:
                self._withdrawn(message.request_id)
            run.append(message)
        out.extend(self._translator.feed_many(run))
        return out

    def _record_raw(self, batch: Sequence[LiteInbound]) -> None:
        for message in batch:
            if isinstance(message, StreamEventLite) or message.__class__ is StreamEvent:
                continue  # hundreds per turn; their content reaches the span as events
            raw = getattr(message, "raw", None) or getattr(message, "line", None)
            with contextlib.suppress(Exception):
                self._tracer.record_raw(raw if raw else encode_message(message).rstrip())

    def _permission(self, req: InboundControlRequest) -> list[Event]:
        event = self._translator.permission_request(req)
        if event.tool_name == "AskUserQuestion":
            return self._question(req, event)
        policy = self.config.policy
        if (
            policy.name == "autonomous"
            or (policy.name == "plan" and event.tool_name != "ExitPlanMode")
            or event.tool_name in self._always_allowed
        ):
            self._spawn(self._respond, req, PermissionDecision("allow"))
            return []
        if policy.name == "custom":
            self._ask_policy(req, event)
            return []
        return self._ask_person(req, event)

    def _spawn(self, fn: Any, *args: Any) -> anyio.CancelScope:
        assert self._tasks is not None
        return self._tasks.spawn(fn, *args)

    # -- publishing ----------------------------------------------------------------------

    def _publish(self, events: Sequence[Event]) -> None:
        if not events:
            return
        stamped = self._hub.publish(events)
        tracer = self._tracer
        for event in stamped:
            tracer.observe(event)
        if self._debug is not None:
            self._debug.events(stamped)
        self._follow_turns()
        if stamped and self._observers:
            for observer in tuple(self._observers):
                try:
                    observer(stamped)
                except Exception:  # a broken observer must not stop the session's events
                    _log.exception("session.observer_failed", session_id=self.id)
                    self._observers.remove(observer)

    def _follow_turns(self) -> None:
        """``active`` while the CLI has a turn running or a prompt of ours to run."""
        busy = self._translator.busy
        if busy and self.status in ("connected", "idle"):
            self._set_status("active")
        elif not busy and self.status == "active":
            self._set_status("idle")

    def _set_status(self, status: SessionStatus, reason: str | None = None) -> None:
        if self.status in ("terminated", "errored"):
            return
        self.status = status
        self.status_reason = reason
        self.last_activity = time.monotonic()
        _log.debug("adapter.status", session_id=self.id, status=status, reason=reason)
        if status in ("terminated", "errored"):
            why = reason or ("closed" if self._closing else "the CLI exited")
            _log.info("session.closed", session_id=self.id, status=status, reason=why)

    def _finish(self, status: SessionStatus, reason: str | None) -> None:
        self._set_status(status, reason)
        self._hub.close(None)
        self._done.set()

    # -- the public API ------------------------------------------------------------------

    @property
    def cli_session_id(self) -> str | None:
        """The CLI's own session id (for ``resume``), once known."""
        return self._client.session_id if self._client is not None else None

    @property
    def pid(self) -> int | None:
        """The CLI's process id (``None`` before it started or with a transport of one's own)."""
        return self._client.pid if self._client is not None else None

    @property
    def last_message_uuid(self) -> str | None:
        """The last committed message uuid (usable as ``resume_session_at``)."""
        return self._translator.last_committed_uuid

    @property
    def background_tasks(self) -> tuple[str, ...]:
        """Ids of the background tasks (sub-agents) the CLI runs that have not finished."""
        return self._translator.background_tasks

    @property
    def background_work(self) -> bool:
        """Whether the CLI has work of its own going: background tasks still running, or one
        finished and the turn that reports it has not started yet."""
        return bool(self._translator.background_tasks) or self._translator.self_start_expected

    @property
    def last_seq(self) -> int:
        """Sequence number of the newest event."""
        return self._hub.last_seq

    def subscribe(
        self, after_seq: int | None = None, *, max_pending: int | None = None
    ) -> Subscription:
        """Receive this session's events: live ones, after replaying history past ``after_seq``.

        ``after_seq=0`` replays everything still in the history; ``None`` gives live events only.
        """
        return self._hub.subscribe(after_seq, max_pending=max_pending)

    def observe(self, observer: Callable[[Sequence[Event]], None]) -> Callable[[], None]:
        """Call ``observer`` with every batch of events as it is published (after the
        session's :attr:`status` has followed it); returns the function that stops it.

        Synchronous, in the step that publishes: no task to wake and no queue per batch, for
        bookkeeping that must see every event and is quick (a backend's list of sessions),
        where a :meth:`subscribe` reader would cost a wake-up of the event loop per batch. An
        observer that raises is logged and dropped. Events published before the call are in
        :meth:`history`.
        """
        self._observers.append(observer)

        def stop() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return stop

    def history(self, after_seq: int = 0) -> list[Event]:
        """The recorded events newer than ``after_seq``."""
        return self._hub.history(after_seq)

    def _require_client(self) -> Session:
        if self._client is None or self.status in ("terminated", "errored"):
            raise UsageError(f"session {self.id} is {self.status}")
        return self._client

    async def prompt(self, text: str, *, images: PromptImages = ()) -> None:
        r"""Start a turn with ``text`` (and :class:`~adapter.images.Image`\ s, or images as
        ``(media_type, bytes)`` pairs)."""
        client = self._require_client()
        content: Any = text
        images = as_images(images)
        if images:
            content = [*(image.content_block() for image in images), {"type": "text", "text": text}]
        self._turns += 1
        # The uuid makes the CLI report the prompt's fate (command_lifecycle), which is how
        # the session knows when its turn starts, even after turns queued before it.
        prompt_uuid = str(uuid.uuid4())
        self._translator.prompt_sent(prompt_uuid)
        self._tracer.start_turn(text, model=self.config.model)
        self._follow_turns()
        if self._debug is not None:
            self._debug.to_cli({"prompt": text, "images": len(images)})
        # Published before the write so it precedes every event of the turn it starts.
        self._publish([UserMessage(text=text, images=len(images))])
        try:
            await client.send(content, uuid=prompt_uuid)
        except BaseException:
            self._translator.prompt_failed(prompt_uuid)
            self._follow_turns()
            raise

    async def _respond(self, req: InboundControlRequest, decision: PermissionDecision) -> None:
        body = req.request
        assert isinstance(body, CanUseToolRequest)
        if decision.behavior == "deny":
            response = req.deny(decision.message or "denied", interrupt=decision.interrupt)
        elif decision.behavior == "allow_always":
            # Remembered here too: under the supervised policy our own PreToolUse hook would
            # otherwise keep asking, whatever rules the CLI adds.
            self._always_allowed.add(body.tool_name)
            response = req.allow(
                updated_input=decision.updated_input,
                updated_permissions=list(body.permission_suggestions or []) or None,
            )
        else:
            response = req.allow(updated_input=decision.updated_input)
        self._tracer.answered(req.request_id, decision.behavior)
        # The decision, never the tool's input (it may hold anything the model wrote).
        _log.info(
            "permission.decided",
            session_id=self.id,
            pending_id=req.request_id,
            tool=body.tool_name,
            behavior=decision.behavior,
        )
        client = self._client
        if client is None:
            return
        with contextlib.suppress(ClaudeCodeError):
            await client.respond(response)
        if body.tool_name == "ExitPlanMode" and decision.behavior != "deny":
            # Any message from the CLI cancels this watch (see _translate).
            self._plan_grace = self._spawn(self._plan_exit_watch)

    async def _plan_exit_watch(self) -> None:
        # After ExitPlanMode is approved the CLI may end the turn without a result; if
        # nothing arrives within the grace period, complete the turn ourselves.
        await anyio.sleep(self.config.plan_exit_grace)
        self._plan_grace = None
        if self._translator.turn_open:
            self._publish(self._translator.finish_turn("plan_approved"))

    async def interrupt(self) -> None:
        """Interrupt the running turn."""
        client = self._require_client()
        with self._tracer.control("interrupt", direction="outbound"):
            await client.interrupt()

    async def set_model(self, model: str | None) -> None:
        """Use ``model`` from the next turn on."""
        client = self._require_client()
        with self._tracer.control("set_model", direction="outbound", model=model or ""):
            await client.set_model(model)

    async def set_effort(self, effort: str | None) -> None:
        """Use ``effort`` from the next model request on (``None``: the model's default);
        an unknown level is a :class:`~claudecode.UsageError`."""
        client = self._require_client()
        with self._tracer.control("set_effort", direction="outbound", effort=effort or ""):
            await client.set_effort(effort)

    async def set_permission_mode(self, mode: str) -> None:
        """Switch the CLI's permission mode (a ``mode_changed`` event follows)."""
        client = self._require_client()
        with self._tracer.control("set_permission_mode", direction="outbound", mode=mode):
            await client.set_permission_mode(mode)

    async def rewind_files(self, user_message_uuid: str, *, dry_run: bool = False) -> Any:
        """Restore files to their state at a user message (needs file checkpointing)."""
        client = self._require_client()
        with self._tracer.control("rewind_files", direction="outbound"):
            return await client.rewind_files(user_message_uuid, dry_run=dry_run)
