"""AG-UI runs over the session backend: threads, runs, approvals, stop, connect.

:class:`AguiService` owns the thread -> session mapping and the runs in progress. A run is
a task of the service (not of the HTTP request): it translates the session's events into
SSE frames kept on its :class:`RunHandle`, which any number of listeners read (the request
that started it, an ``agent/connect`` that joins it). So a client that disconnects does not
tear the run down mid-event: depending on the settings the run's CLI turn is interrupted
(the default) or runs to its end, and the thread is saved either way.

A run ends when the CLI turn ends (``RUN_FINISHED``, or ``RUN_ERROR`` for a failed turn), when
it waits for an answer to a permission request (the approval tool call stays pending; the
next run carries the answer as a ``role: "tool"`` message and the same turn streams on),
when the user stops it (``RUN_FINISHED``), or when the server shuts down (``RUN_ERROR`` with
code ``shutdown``). A backend that cannot reach its sessions for now (a cluster gateway that
lost NATS) ends the run with ``RUN_ERROR`` code ``unavailable``.

Approval answers and prompts: :mod:`adapter.server.agui.inputs`; the frames of a run:
:mod:`adapter.server.agui.handle`.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.abc
import msgspec

from claudecode import ClaudeCodeError
from claudecode.internal import get_logger

from ...backend import (
    BackendUnavailableError,
    FrontendToolBackend,
    SessionBackend,
    SessionInfo,
)
from ...errors import ThreadAgentError, ThreadBusyError
from ...fanout import SubscriberDropped
from ...manager import UnknownSessionError
from ...owners import SERVER, acting_as, as_caller
from ..agents import Agent, default_agent
from .answers import apply_answer, resume_content, withdraw
from .claims import ThreadClaims
from .events import AguiEvent, RunAgentInput, sse_frames
from .handle import RunHandle, connect_frames
from .inputs import new_user_messages, page_tools, prompt_from_message, with_context
from .snapshot import MessageLog
from .stopping import StopOutcome, stop_idle
from .threads import ThreadRecord, ThreadStore, thread_key
from .translate import RunTranslator, ThreadMemory, initial_state

__all__ = ("AguiService", "RunHandle", "ThreadBusyError")

_log = get_logger("claudecode.adapter.agui")

#: Seconds a stopped run waits for the CLI turn to end before finishing anyway.
_STOP_GRACE = 15.0
#: Seconds between the saver's rounds while runs go on.
_SAVE_INTERVAL = 0.5


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(eq=False)
class _LiveRun:
    """A run in its pump: what stopping it or shutting the server down needs."""

    thread: _Thread
    translator: RunTranslator
    session_id: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    stopper: anyio.CancelScope | None = None  # the stop under way


@dataclass(eq=False)
class _Thread:
    thread_id: str
    record: ThreadRecord
    log: MessageLog
    memory: ThreadMemory
    session_id: str | None = None
    last_seq: int = 0
    awaiting: dict[str, str] = field(default_factory=dict)  # approval call id -> pending id
    awaiting_tools: set[str] = field(default_factory=set)  # frontend tool calls
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # the session's tools
    run: RunHandle | None = None
    key: str = ""  # where it is kept: its id in its user's namespace (thread_key)
    last_saved: float = 0.0
    saving: int = 0  # final saves of its runs under way


class AguiService:
    """Threads and runs over a :class:`SessionBackend` (use ``async with``).

    Args:
        backend: where sessions live.
        store: where threads are saved.
        shutting_down: returns the event set when the server begins shutting down.
        disconnect: what a client disconnect does to its run: ``interrupt`` the CLI turn
            (default) or ``keep`` it running (the thread is saved as it goes).
        keepalive: seconds between ``: keep-alive`` comments on an idle stream.
        max_threads: threads kept in memory; a new one past it makes the least recently
            used idle thread go (its session closed; it is reloaded from the store, and its
            CLI session resumed, on its next run).
        agents: the agents runs may name (:mod:`adapter.server.agents`); none: the one
            default agent. A thread keeps the agent of its first run.
    """

    def __init__(
        self,
        backend: SessionBackend,
        store: ThreadStore,
        *,
        shutting_down: Callable[[], anyio.Event],
        disconnect: Literal["interrupt", "keep"] = "interrupt",
        keepalive: float = 15.0,
        max_threads: int = 10_000,
        agents: tuple[Agent, ...] = (),
    ) -> None:
        self.backend = backend
        self.default_agent = default_agent(agents)
        self.agents = {agent.name: agent for agent in agents or (self.default_agent,)}
        self.store = store
        self.disconnect = disconnect
        self.keepalive = keepalive
        self.max_threads = max_threads
        self._shutting_down = shutting_down
        self._threads: dict[str, _Thread] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        # Threads to save while their runs go on, written by one saver task so a run never
        # waits for the disk.
        self._dirty: dict[str, _Thread] = {}
        self._save_wakeup: anyio.Event | None = None
        # Service-wide, not per run: a run starts no task but its own (a burst of run starts
        # is that much shorter), and keeps fewer objects for the collector to walk.
        self._handles: set[RunHandle] = set()  # ticked for keep-alive comments
        self._claims = ThreadClaims()  # two requests at once on a thread agree
        self._live: dict[RunHandle, _LiveRun] = {}  # runs in their pump

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[AguiService]:
        """Run the service (its runs live in this task group)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._save_wakeup = anyio.Event()
            tg.start_soon(self._saver)
            tg.start_soon(self._keepalive_ticker)
            tg.start_soon(self._on_shutdown)
            try:
                yield self
            finally:
                self._tg = None
                tg.cancel_scope.cancel()
        self.store.close()

    async def _saver(self) -> None:
        assert self._save_wakeup is not None
        while True:
            await self._save_wakeup.wait()
            self._save_wakeup = anyio.Event()
            # One round saves the threads dirty now; those that change meanwhile wait for
            # the next round (draining until nothing is dirty never ends while runs stream).
            dirty, self._dirty = self._dirty, {}
            await self._save(*dirty.values())
            await anyio.sleep(_SAVE_INTERVAL)

    async def _keepalive_ticker(self) -> None:
        """Wake the listeners of every run idle for ``keepalive`` seconds (each sends a
        keep-alive comment): one timer for all runs."""
        while True:
            await anyio.sleep(self.keepalive / 4)
            for handle in list(self._handles):
                handle.tick(self.keepalive)

    async def _on_shutdown(self) -> None:
        """End every run in its pump when the server begins shutting down (those still
        starting end as they reach it)."""
        await self._shutting_down().wait()
        for handle, live in list(self._live.items()):
            handle.shutdown = True
            live.scope.cancel()

    def _request_save(self, thread: _Thread) -> None:
        self._dirty[thread.key] = thread
        if self._save_wakeup is not None:
            self._save_wakeup.set()

    # -- threads -----------------------------------------------------------------------

    async def _thread(self, thread_id: str, *, create: bool) -> _Thread | None:
        key = thread_key(thread_id)
        return await self._claims.load_once(
            self._threads, key, lambda: self._load_thread(thread_id, key, create)
        )

    async def _load_thread(self, thread_id: str, key: str, create: bool) -> _Thread | None:
        record = await self.store.load(key)
        if record is None:
            if not create:
                return None
            record = ThreadRecord(key)
        log = MessageLog(record.messages)
        record.messages = []  # the log holds them from now on
        memory = ThreadMemory()
        for message in log.messages(copy_=False):
            memory.message_ids.add(message["id"])
            for call in message.get("toolCalls") or ():
                memory.tool_calls.add(call.get("id", ""))
        log.clear_dirty()
        thread = _Thread(thread_id, record, log, memory, key=key)
        if len(self._threads) >= self.max_threads:
            self._evict_one()
        self._threads[key] = thread
        return thread

    def _evict_one(self) -> None:
        """Forget the least recently used idle thread and close its session.

        Idle: no run (nor the last one's final save under way), and nothing the page must
        answer (an approval or a frontend tool call the CLI turn waits for). Its record
        stays saved, so its next run reloads it and resumes the CLI session; closing the
        session now keeps two CLI processes from ever resuming the same conversation.
        """
        for thread_id, thread in self._threads.items():
            if (
                thread.run is None
                and not thread.saving
                and not thread.awaiting
                and not thread.awaiting_tools
            ):
                del self._threads[thread_id]
                self.store.forget(thread.key)
                if thread.session_id is not None and self._tg is not None:
                    self._tg.start_soon(self._close_session, thread.session_id)
                return

    async def _close_session(self, session_id: str) -> None:
        with acting_as(SERVER), contextlib.suppress(ClaudeCodeError):  # whoever made room
            await self.backend.close(session_id)

    async def _save(self, *threads: _Thread) -> None:
        """Save the threads: what each one's log changed since its last save is appended
        to its file (the store drains the logs before it next waits)."""
        now = time.monotonic()
        for thread in threads:
            thread.last_saved = now
        try:
            await self.store.save_threads([(thread.record, thread.log) for thread in threads])
        except Exception as exc:  # a full disk must not kill the run
            ids = [thread.thread_id for thread in threads]
            _log.warning("agui.save_failed", thread_ids=ids, error=repr(exc))

    # -- runs ------------------------------------------------------------------------------

    def _agent(self, name: str | None) -> Agent:
        """The agent named ``name`` (``None``: the default one)."""
        return self.default_agent if name is None else self.agents[name]

    def _agent_of(self, thread: _Thread) -> str:
        """The name of the thread's agent (a thread saved before agents had names is the
        default agent's)."""
        return thread.record.agent or self.default_agent.name

    async def start_run(self, run_input: RunAgentInput, agent: str | None = None) -> RunHandle:
        """Start a run on its thread, with ``agent`` (a name of :attr:`agents`; ``None``:
        the default agent).

        Raises:
            ThreadBusyError: the thread's previous run is still going.
            ThreadAgentError: the thread talks to another agent.
        """
        chosen = self._agent(agent).name
        if self._tg is None:
            raise ClaudeCodeError("the AG-UI service is not running")
        with self._claims.starting(thread_key(run_input.thread_id)):  # before the first await
            thread = await self._thread(run_input.thread_id, create=True)
        assert thread is not None  # the claim is let go with no await before thread.run is set
        if thread.record.agent is None and not len(thread.log):
            thread.record.agent = chosen  # a new thread: it keeps this agent
        if self._agent_of(thread) != chosen:
            raise ThreadAgentError(
                f"thread {thread.thread_id!r} talks to agent {self._agent_of(thread)!r}, "
                f"not {chosen!r}; start a new thread for another agent"
            )
        if thread.run is not None and not thread.run.done:
            raise ThreadBusyError(
                f"thread {thread.thread_id!r} has a run in progress ({thread.run.run_id}); "
                "stop it or wait for it to end"
            )
        # What a page joining this run later is shown before the run's own frames: the
        # thread so far and the messages this run was started with (its frames never repeat
        # the user's prompt).
        before = [*thread.log.messages(copy_=False), *new_user_messages(thread.log, run_input)]
        handle = RunHandle(thread.thread_id, run_input.run_id, msgspec.json.encode(before))
        thread.run = handle
        translator = RunTranslator(
            thread.thread_id, run_input.run_id, clock=_now_ms, memory=thread.memory
        )
        handle.use_ticks()
        self._handles.add(handle)
        self._tg.start_soon(as_caller(self._run), thread, run_input, handle, translator)
        return handle

    async def stop(self, thread_id: str) -> StopOutcome:
        """Stop the thread's run, else its session's turn (see :mod:`.stopping`)."""
        thread = self._threads.get(thread_key(thread_id))
        if thread is None:  # not in memory: its session was closed
            return None
        if thread.run is not None and not thread.run.done:
            self._request_stop(thread.run)
            return "run"
        waits = bool(thread.awaiting or thread.awaiting_tools)
        return await stop_idle(self.backend, thread.session_id, waits_for_page=waits)

    def left(self, handle: RunHandle) -> None:
        """A listener went away; the last one leaving may interrupt the run."""
        if handle.listeners == 0 and not handle.done and self.disconnect == "interrupt":
            self._request_stop(handle)

    def _request_stop(self, handle: RunHandle) -> None:
        handle.stop_requested.set()
        live = self._live.get(handle)
        if live is not None and live.stopper is None and self._tg is not None:
            live.stopper = anyio.CancelScope()
            self._tg.start_soon(as_caller(self._stop_run), handle, live)
        # A run not yet in its pump stops as it gets there.

    async def _stop_run(self, handle: RunHandle, live: _LiveRun) -> None:
        """Interrupt the CLI turn; end the run anyway if the turn has not ended after
        the grace period (cancelled as soon as the run ends)."""
        assert live.stopper is not None
        with live.stopper:
            try:
                live.translator.stop()
                with contextlib.suppress(ClaudeCodeError):
                    await self.backend.interrupt(live.session_id)
                await anyio.sleep(_STOP_GRACE)
                # The CLI did not end its turn in time: end the run anyway.
                self._emit(live.thread, handle, live.translator.finish())
            except Exception as exc:  # the service's task group must not fail
                _log.error("agui.stop_failed", thread_id=live.thread.thread_id, error=repr(exc))
            live.scope.cancel()  # not reached when the run ended first (cancelled above)

    async def connect(
        self, run_input: RunAgentInput, agent: str | None = None
    ) -> tuple[list[bytes], RunHandle | None]:
        """What ``agent/connect`` answers: the frames to send now, and a live run to join
        after them (``None``). An unknown thread, or one of another ``agent`` (default:
        the default agent), gets no frames at all."""
        thread = await self._thread(run_input.thread_id, create=False)
        if thread is None or self._agent_of(thread) != self._agent(agent).name:
            return [], None
        live = thread.run if thread.run is not None and not thread.run.done else None
        messages = thread.log.messages(copy_=False)
        return connect_frames(thread.thread_id, run_input.run_id, messages, live), live

    # -- one run -----------------------------------------------------------------------------

    def _emit(self, thread: _Thread, handle: RunHandle, events: list[AguiEvent]) -> None:
        for event in events:
            thread.log.apply(event)
        handle.push(sse_frames(events))

    async def _run(
        self,
        thread: _Thread,
        run_input: RunAgentInput,
        handle: RunHandle,
        translator: RunTranslator,
    ) -> None:
        try:
            await self._drive(thread, run_input, handle, translator)
        except BackendUnavailableError as exc:
            self._emit(thread, handle, translator.error(str(exc), "unavailable"))
        except ClaudeCodeError as exc:
            self._emit(thread, handle, translator.error(str(exc), type(exc).__name__))
        except Exception as exc:
            _log.error("agui.run_failed", thread_id=thread.thread_id, error=repr(exc))
            self._emit(thread, handle, translator.error("internal error", "internal"))
        finally:
            with anyio.CancelScope(shield=True):
                if handle.shutdown:
                    self._emit(
                        thread, handle, translator.error("the server is shutting down", "shutdown")
                    )
                self._emit(thread, handle, translator.finish())
                handle.close()
                self._handles.discard(handle)
                if thread.run is handle:
                    # An idle thread keeps no frames: its listeners hold the handle until
                    # they have read to its end, and nothing else needs a finished run.
                    thread.run = None
                thread.saving += 1  # not evicted (then reloaded) before this save is done
                try:
                    if thread.session_id is not None:
                        with contextlib.suppress(Exception):
                            info = await self.backend.info(thread.session_id)
                            thread.record.cli_session_id = (
                                info.cli_session_id or thread.record.cli_session_id
                            )
                    await self._save(thread)
                finally:
                    thread.saving -= 1

    def _frontend_tools(self, run_input: RunAgentInput) -> dict[str, dict[str, Any]]:
        if not isinstance(self.backend, FrontendToolBackend):
            return {}  # the backend cannot run them: Claude is not told about them
        return page_tools(run_input)

    async def _ensure_session(
        self, thread: _Thread, tools: dict[str, dict[str, Any]]
    ) -> tuple[str, SessionInfo | None]:
        """The thread's live session (and its info, just read), or a new one (``None``:
        read it once it has started)."""
        if thread.session_id is not None:
            try:
                info = await self.backend.info(thread.session_id)
            except UnknownSessionError:
                info = None
            alive = info is not None and info.state not in ("closed", "errored")
            if alive and tools != thread.tools and info is not None and info.state == "idle":
                # The page's tools changed: the session restarts (resumed) to offer them.
                with contextlib.suppress(ClaudeCodeError):
                    await self.backend.close(thread.session_id)
                thread.record.cli_session_id = info.cli_session_id or thread.record.cli_session_id
                alive = False
            if alive:
                return thread.session_id, info
        resume = thread.record.cli_session_id
        spec = self._agent(self._agent_of(thread)).session_spec(
            resume=resume, frontend_tools=tools, origin="ag-ui"
        )
        info = await self.backend.create(spec)
        thread.session_id = info.id
        thread.tools = tools
        thread.last_seq = 0
        thread.awaiting.clear()
        thread.awaiting_tools.clear()
        return info.id, None

    async def _drive(
        self,
        thread: _Thread,
        run_input: RunAgentInput,
        handle: RunHandle,
        translator: RunTranslator,
    ) -> None:
        session_id, info = await self._ensure_session(thread, self._frontend_tools(run_input))
        if info is None:
            info = await self.backend.info(session_id)
        translator.session_id = session_id
        translator.set_frontend_tools(thread.tools)
        state = initial_state(
            session_id=session_id,
            model=info.model,
            permission_mode=info.permission_mode,
            cwd=info.cwd,
        )
        self._emit(thread, handle, translator.start(state))
        answers = [
            m
            for m in run_input.messages
            if m.get("role") == "tool"
            and m.get("id") not in thread.log
            and m.get("toolCallId") in thread.awaiting
        ]
        results = [
            m
            for m in run_input.messages
            if m.get("role") == "tool"
            and m.get("id") not in thread.log
            and m.get("toolCallId") in thread.awaiting_tools
        ]
        new_users = new_user_messages(thread.log, run_input)
        for message in (*new_users, *answers, *results):
            thread.log.add(message)
        # AG-UI 1.0: answers to the last run's interrupts (not messages: not in the log).
        answers += [
            {"toolCallId": r["interruptId"], "content": resume_content(r, r["interruptId"])}
            for r in run_input.resume
            if r.get("interruptId") in thread.awaiting
        ]
        if new_users and thread.awaiting:  # the page moved on: what it left open, it never answers
            thread.last_seq = await withdraw(self.backend, session_id, thread, answers, _STOP_GRACE)
            info = await self.backend.info(session_id)
        busy = info.state in ("busy", "waiting")
        if not answers and not results and not new_users and not busy:
            return  # nothing to do: the run just finishes
        # A new prompt on an idle session skips what the session said while nobody listened.
        after = thread.last_seq if (answers or results or busy) else info.last_seq
        async with self.backend.subscribe(session_id, after_seq=after) as stream:
            for message in answers:
                call_id = str(message["toolCallId"])
                pending_id = thread.awaiting.pop(call_id)
                content = message.get("content")
                note = await apply_answer(self.backend, session_id, pending_id, call_id, content)
                if note is not None:
                    self._emit(thread, handle, [note])
            for message in results:
                call_id = str(message["toolCallId"])
                thread.awaiting_tools.discard(call_id)
                content = message.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                assert isinstance(self.backend, FrontendToolBackend)
                await self.backend.answer_tool(
                    session_id, call_id, text, is_error=bool(message.get("error"))
                )
            if new_users:
                text, images = prompt_from_message(new_users[-1])
                await self.backend.prompt(session_id, with_context(text, run_input), images=images)
            await self._pump(thread, handle, translator, stream, session_id, run_input)

    async def _pump(
        self,
        thread: _Thread,
        handle: RunHandle,
        translator: RunTranslator,
        stream: Any,
        session_id: str,
        run_input: RunAgentInput,
    ) -> None:
        props = run_input.forwarded_props
        options = props.get("claudecode") if isinstance(props, dict) else None
        mode = options.get("approvals") if isinstance(options, dict) else None
        end_at_approval = mode != "in_run"
        # AG-UI 1.0 clients may take requests as interrupts (and answer with `resume`).
        translator.use_interrupts = isinstance(options, dict) and options.get("interrupts") is True
        live = _LiveRun(thread, translator, session_id)
        self._live[handle] = live
        try:
            with live.scope:
                if self._shutting_down().is_set():
                    handle.shutdown = True
                    return
                if handle.stop_requested.is_set():
                    self._request_stop(handle)
                await self._pump_events(thread, handle, translator, stream, end_at_approval)
        finally:
            del self._live[handle]
            if live.stopper is not None:
                live.stopper.cancel()

    async def _pump_events(
        self,
        thread: _Thread,
        handle: RunHandle,
        translator: RunTranslator,
        stream: Any,
        end_at_approval: bool,
    ) -> None:
        while not translator.finished:
            try:
                batch = await stream.receive_batch()
            except anyio.EndOfStream:
                self._emit(
                    thread,
                    handle,
                    translator.error("the Claude Code session ended", "cli_exited"),
                )
                break
            except SubscriberDropped as exc:
                self._emit(thread, handle, translator.error(str(exc), "lagged"))
                break
            except BackendUnavailableError as exc:
                # The backend lost its sessions' transport (a gateway without NATS):
                # the client runs again (reconnects) when it is back.
                self._emit(thread, handle, translator.error(str(exc), "unavailable"))
                break
            out: list[AguiEvent] = []
            translator.batch(batch)
            for event in batch:
                thread.last_seq = event.seq
                out += translator.feed(event)
                if translator.finished:
                    break
            thread.awaiting.update(translator.awaiting)
            thread.awaiting_tools.update(translator.awaiting_tools)
            ended_for = sorted(translator.awaiting_tools)
            if end_at_approval:
                ended_for += sorted(translator.awaiting)
            if translator.interrupts and end_at_approval and not translator.finished:
                out += translator.finish_interrupted()
            if ended_for and not translator.finished:
                # The page must act (run its tools, answer approvals): the run ends here
                # and the next one carries its answers.
                out += translator.finish({"awaiting": ended_for})
            self._emit(thread, handle, out)
            if thread.log.dirty:
                self._request_save(thread)
