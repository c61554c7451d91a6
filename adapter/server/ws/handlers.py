"""What a client's requests do (a mixin of
:class:`~adapter.server.ws.endpoint.WebSocketConnection`): one method per request frame but
``subscribe`` / ``unsubscribe`` (:mod:`adapter.server.ws.subscriptions`), each answered with an
``ack`` (or a reply frame) carrying its ``request_id``; what they raise becomes an ``error``
frame in the connection's reader."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import anyio

from claudecode import UsageError
from claudecode.internal import get_logger

from ...backend import LabelBackend
from ...events import Event
from ...history.transcripts import (
    HistoryIndex,
    HistoryNotFoundError,
    find_session_file,
    load_events,
    load_prompt_images,
)
from ...images import Image
from ...owners import OwnedBackend
from ...policies import PermissionDecision
from ...terminals import as_session_info
from ..agents import DEFAULT_AGENT, Agent, find_agent, offered_agents
from .protocol import (
    CLOSE_UNSUPPORTED_VERSION,
    PROTOCOL_VERSION,
    Ack,
    AgentInfo,
    CloseSession,
    CreateSession,
    DeleteSession,
    Error,
    GetImage,
    Hello,
    History,
    ImageFrame,
    Interrupt,
    ListHistory,
    PermissionResponse,
    Ping,
    Pong,
    Prompt,
    QuestionResponse,
    ServerFrame,
    SetModel,
    SetPermissionMode,
    UpdateSession,
)
from .views import SessionViews

if TYPE_CHECKING:
    from adapter.terminals import OwnedTerminals

__all__ = ("RequestHandlers",)

_log = get_logger("claudecode.adapter.ws")

#: Seconds a ``get_image`` waits for the session's view to fold the prompt it names (the
#: client may have its event before the view does).
_IMAGE_WAIT_SECONDS = 2.0


class RequestHandlers:
    """The requests but subscriptions: sessions (chat and terminal), prompts, permission
    answers, model and mode, history, ping (a mixin)."""

    backend: OwnedBackend
    views: SessionViews
    history: HistoryIndex
    terminals: OwnedTerminals | None
    #: The server's named agents (``serve --agents``; none: only ``default``).
    agents: tuple[Agent, ...]

    if TYPE_CHECKING:  # the connection provides these

        def send(self, frame: ServerFrame) -> None: ...

        def _end(self, code: int, reason: str, *, flush: bool = True) -> None: ...

        def _is_terminal(self, session_id: str) -> bool: ...

    async def _hello(self, frame: Hello) -> None:
        if frame.version != PROTOCOL_VERSION:
            self.send(
                Error(
                    code="unsupported_version",
                    message=f"this server speaks version {PROTOCOL_VERSION}",
                    request_id=frame.request_id,
                )
            )
            self._end(CLOSE_UNSUPPORTED_VERSION, "unsupported protocol version")
            return
        if frame.client_id:
            _log.debug("ws.hello", client_id=frame.client_id[:100])
        # What the agents file says of each agent to choose from, nothing it hands the CLI
        # (system prompts, MCP servers and their credentials stay on the server).
        agents = [
            AgentInfo(name=a.name, description=a.description) for a in offered_agents(self.agents)
        ]
        self.send(Ack(request_id=frame.request_id, version=PROTOCOL_VERSION, agents=agents))

    async def _create(self, frame: CreateSession) -> None:
        if frame.kind == "terminal":
            if frame.named_agent is not None:
                raise UsageError("a terminal session does not start from a named agent")
            await self._create_terminal(frame)
            return
        # Without a name: the server's own settings (DEFAULT_AGENT's empty spec), as before
        # agents had names, even when the agents file calls one of its agents "default".
        agent = DEFAULT_AGENT
        if frame.named_agent is not None:
            agent = find_agent(self.agents, frame.named_agent)
        # The frame's fields replace the agent's as they replace the server's settings: each
        # is one a client may set on any session (a policy only decides who is asked, and the
        # person asked is this client), while what only the agents file sets stays.
        spec = agent.session_spec(
            cwd=frame.cwd,
            model=frame.model,
            policy=frame.policy,
            permission_mode=frame.permission_mode,
            effort=frame.effort,
            origin=frame.origin or "websocket",
            resume=frame.resume,
            resume_session_at=frame.resume_session_at,
            fork=frame.fork,
        )
        info = await self.backend.create(spec)
        if frame.resume:
            await self._seed(info.id, frame.resume, frame.cwd or info.cwd, frame.resume_session_at)
        self.send(Ack(request_id=frame.request_id, session_id=info.id, session=info))

    async def _create_terminal(self, frame: CreateSession) -> None:
        if self.terminals is None:
            raise UsageError("terminal sessions are not served here")
        if not frame.agent:
            raise UsageError("a terminal session needs an agent")
        terminal = await self.terminals.start(
            "term-" + secrets.token_hex(8),
            frame.agent,
            cwd=frame.cwd,
            cols=frame.cols,
            rows=frame.rows,
            skip_permissions=frame.skip_permissions,
        )
        info = as_session_info(terminal)
        self.send(Ack(request_id=frame.request_id, session_id=info.id, session=info))

    async def _seed(
        self, session_id: str, resumed: str, cwd: str | None, at: str | None = None
    ) -> None:
        """Show the resumed conversation from the CLI's stored transcript, when there is one
        on this machine (a resume from elsewhere just starts without it): up to the message
        ``at`` when it resumes there (a fork from a past turn shows no later turn), with each
        stored turn's end marked so the page can fork from it too."""

        def load() -> tuple[list[Event], list[tuple[Image, ...]]]:
            try:
                path = find_session_file(resumed, cwd, config=self.history.config)
            except HistoryNotFoundError:
                try:
                    path = find_session_file(resumed, config=self.history.config)
                except HistoryNotFoundError:
                    return [], []
            return load_events(path, until=at, turn_ends=True), load_prompt_images(path)

        events, images = await anyio.to_thread.run_sync(load)
        if events:
            self.views.seed(session_id, events, images)

    async def _prompt(self, frame: Prompt) -> None:
        images: list[Image] = []
        for image in frame.images:
            try:
                images.append(Image.from_base64(image.media_type, image.data))
            except ValueError as exc:
                raise UsageError(f"an image is not valid base64: {exc}") from None
        if images:
            await self.backend.info(frame.session_id)  # someone else's session: nothing kept
            self.views.images.expect(frame.session_id, frame.text, images)
        await self.backend.prompt(frame.session_id, frame.text, images=images)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _permission(self, frame: PermissionResponse) -> None:
        decision = PermissionDecision(
            frame.decision, message=frame.message or "", updated_input=frame.updated_input
        )
        await self.backend.answer_permission(frame.session_id, frame.pending_id, decision)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _question(self, frame: QuestionResponse) -> None:
        if frame.decline:
            await self.backend.decline_question(frame.session_id, frame.pending_id, frame.message)
        else:
            await self.backend.answer_question(frame.session_id, frame.pending_id, frame.answers)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _interrupt(self, frame: Interrupt) -> None:
        await self.backend.interrupt(frame.session_id)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _set_model(self, frame: SetModel) -> None:
        await self.backend.set_model(frame.session_id, frame.model)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _set_mode(self, frame: SetPermissionMode) -> None:
        await self.backend.set_permission_mode(frame.session_id, frame.mode)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _close_session(self, frame: CloseSession) -> None:
        if self.terminals is not None and self._is_terminal(frame.session_id):
            await self.terminals.stop(frame.session_id)
        else:
            await self.backend.close(frame.session_id)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _update_session(self, frame: UpdateSession) -> None:
        if not isinstance(self.backend, LabelBackend):
            raise UsageError("this server cannot rename or archive sessions")
        info = await self.backend.label(
            frame.session_id, title=frame.title, archived=frame.archived
        )
        self.send(Ack(request_id=frame.request_id, session_id=info.id, session=info))

    async def _delete_session(self, frame: DeleteSession) -> None:
        if self.terminals is not None and self._is_terminal(frame.session_id):
            self.terminals.remove(frame.session_id)  # a running one: stop it first
            self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))
            return
        if not isinstance(self.backend, LabelBackend):
            raise UsageError("this server cannot delete sessions")
        await self.backend.forget(frame.session_id)
        self.views.images.forget(frame.session_id)
        self.send(Ack(request_id=frame.request_id, session_id=frame.session_id))

    async def _list_history(self, frame: ListHistory) -> None:
        cwd = frame.cwd
        limit = max(1, min(frame.limit, 1000))
        found = await anyio.to_thread.run_sync(lambda: self.history.list(cwd, limit=limit))
        # Only the stored sessions this user started through the bridge (an admin: all).
        sessions = [s for s in found if self.backend.history_visible(s.session_id)]
        self.send(History(request_id=frame.request_id, sessions=sessions))

    async def _get_image(self, frame: GetImage) -> None:
        await self.backend.info(frame.session_id)  # the owner check: another's is unknown
        kind, _, seq = frame.entry_id.partition(":")
        if kind == "user" and seq.isdecimal():
            await self.views.folded(frame.session_id, int(seq), _IMAGE_WAIT_SECONDS)
        images = self.views.images.get(frame.session_id, frame.entry_id)
        if not 0 <= frame.index < len(images):
            raise UsageError("that image is not kept on this server")
        image = images[frame.index]
        self.send(
            ImageFrame(
                request_id=frame.request_id,
                session_id=frame.session_id,
                entry_id=frame.entry_id,
                index=frame.index,
                media_type=image.media_type,
                data=image.data,
            )
        )

    async def _ping(self, frame: Ping) -> None:
        self.send(Pong(request_id=frame.request_id))
