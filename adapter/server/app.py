"""The application factory: one Starlette app for every front end, over one backend.

``create_app(backend=..., settings=...)`` returns an ASGI application that can be served by
itself (``claudecode-bridge serve``) or mounted inside any ASGI app (FastAPI, Starlette).
Front ends contribute their routes through *route providers*: callables that receive the
:class:`ServerContext` (the backend, the settings, a shutdown signal) and return Starlette
routes; they may also register lifespan hooks and public paths on the context.
:data:`BUILTIN_PROVIDERS` names the providers ``serve`` mounts, as ``module:attribute``
strings imported when the app is built.

Backend ownership: given a ``backend``, the app only uses it (its owner runs and closes it);
given none, the app creates a :class:`~adapter.LocalBackend` from the settings and runs it in
its lifespan. A host app that mounts this one must run that lifespan itself (Starlette does
not run the lifespans of mounted apps): pass a backend it runs, or enter
``app.router.lifespan_context(app)`` from its own lifespan.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import anyio.from_thread
import anyio.lowlevel
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

from ..audit import AuditLog
from ..backend import SessionBackend
from ..local import LocalBackend
from ..owners import SERVER, HistoryOwners, OwnedBackend, acting_as, owned
from .errors import exception_handlers
from .identity import Authenticator, IdentityMiddleware, UsersFile
from .security import AllowedHosts, SecurityMiddleware
from .settings import ServerSettings

if TYPE_CHECKING:
    from ..terminals import OwnedTerminals

__all__ = (
    "BUILTIN_PROVIDERS",
    "LifespanHook",
    "RouteProvider",
    "ServerContext",
    "create_app",
)

#: An async context manager factory entered for the app's lifetime (after the backend).
LifespanHook: TypeAlias = Callable[[], contextlib.AbstractAsyncContextManager[Any]]


@dataclass(eq=False)
class ServerContext:
    """What route providers get: the backend, the settings and the app's shared state.

    ``endpoints`` are ``(label, path)`` pairs ``serve`` prints at start (add yours);
    ``public_paths`` need no token (``/healthz`` by default); ``lifespan_hooks`` run for the
    app's lifetime (e.g. a registry of terminals to close at shutdown). ``shutting_down``
    is set when the server begins a graceful shutdown: long-lived streams should then end
    their runs cleanly and return.

    ``backend`` is the ownership layer (:class:`~adapter.owners.OwnedBackend`) over
    ``inner_backend``: front ends use ``backend`` only, so every call is checked against
    the caller. ``audit`` is the server's audit log; ``authenticator`` its identities
    (``None``: the implicit local user).
    """

    backend: OwnedBackend
    settings: ServerSettings
    inner_backend: SessionBackend
    audit: AuditLog = field(default_factory=AuditLog)
    authenticator: Authenticator | None = None
    public_paths: set[str] = field(default_factory=lambda: {"/healthz"})
    lifespan_hooks: list[LifespanHook] = field(default_factory=list)
    endpoints: list[tuple[str, str]] = field(default_factory=list)
    owns_backend: bool = False
    #: The terminal sessions, when the terminal routes are mounted: every front end lists,
    #: watches, starts and stops them through this one manager.
    terminals: OwnedTerminals | None = None
    _shutdown: anyio.Event | None = None
    _shutdown_requested: bool = False
    _loop_token: Any = None

    @property
    def shutting_down(self) -> anyio.Event:
        """Set once a graceful shutdown began (create it inside the event loop)."""
        if self._shutdown is None:
            self._shutdown = anyio.Event()
            if self._shutdown_requested:
                self._shutdown.set()
        return self._shutdown

    def begin_shutdown(self) -> None:
        """Tell every stream that the server is stopping (call from the event loop)."""
        self._shutdown_requested = True
        if self._shutdown is not None:
            self._shutdown.set()

    def begin_shutdown_threadsafe(self) -> None:
        """:meth:`begin_shutdown` from another thread (the app must be running)."""
        if self._loop_token is None:
            self._shutdown_requested = True
            return
        anyio.from_thread.run_sync(self.begin_shutdown, token=self._loop_token)

    def state_path(self, *parts: str) -> Path | None:
        """A path in the state directory (created 0700), or ``None`` when there is none."""
        if self.settings.state_dir is None:
            return None
        base = Path(self.settings.state_dir)
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(base, 0o700)
        return base.joinpath(*parts)


#: A front end's routes: called once per app with the shared :class:`ServerContext`.
RouteProvider: TypeAlias = Callable[[ServerContext], Sequence[BaseRoute]]

#: The providers ``claudecode-bridge serve`` mounts, as ``module:attribute`` names.
BUILTIN_PROVIDERS: tuple[str, ...] = (
    "adapter.server.routes:core_routes",
    "adapter.server.terminal_routes:terminal_routes",
    "adapter.server.agui.server:agui_routes",
    "adapter.server.ws.endpoint:ws_routes",
    "adapter.server.webui:webui_routes",
)


def _load(name: str) -> RouteProvider:
    module_name, _, attribute = name.partition(":")
    provider: RouteProvider = getattr(importlib.import_module(module_name), attribute)
    return provider


def create_app(
    backend: SessionBackend | None = None,
    settings: ServerSettings | None = None,
    *,
    providers: Iterable[RouteProvider | str] | None = None,
    extra_providers: Iterable[RouteProvider | str] = (),
) -> Starlette:
    """The bridge as an ASGI application.

    Args:
        backend: where sessions live; ``None`` creates and runs a :class:`LocalBackend`
            from ``settings.session_defaults`` / ``max_sessions`` / ``warm``.
        settings: security and defaults (:class:`ServerSettings`).
        providers: the route providers (callables or ``module:attribute`` names); default
            :data:`BUILTIN_PROVIDERS`.
        extra_providers: more providers after those (your own routes).

    The :class:`ServerContext` is available as ``app.state.bridge``.

    Raises:
        ValueError: ``settings.allowed_hosts`` holds something that is not a host.
    """
    settings = settings or ServerSettings()
    AllowedHosts(settings.allowed_hosts)  # a malformed entry fails here, not at a request
    owns_backend = backend is None
    if backend is None:
        backend = LocalBackend(
            settings.session_defaults, max_sessions=settings.max_sessions, warm=settings.warm
        )
    authenticator = None
    if settings.token is not None or settings.users_file is not None or settings.jwt is not None:
        authenticator = Authenticator(
            token=settings.token,
            users=None if settings.users_file is None else UsersFile(settings.users_file),
            jwt=settings.jwt,
        )
    audit = AuditLog(settings.audit_log)
    history_file = None
    if settings.state_dir is not None:
        history_file = Path(settings.state_dir) / "history-owners.jsonl"
        history_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    context = ServerContext(
        backend=owned(backend, audit=audit, history=HistoryOwners(history_file)),
        inner_backend=backend,
        settings=settings,
        owns_backend=owns_backend,
        audit=audit,
        authenticator=authenticator,
    )
    routes: list[BaseRoute] = []
    for provider in (*(BUILTIN_PROVIDERS if providers is None else providers), *extra_providers):
        routes.extend((_load(provider) if isinstance(provider, str) else provider)(context))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        context._loop_token = anyio.lowlevel.current_token()
        # The server's own tasks (status feeds, evictions, shutdown) see every session.
        async with contextlib.AsyncExitStack() as stack:
            stack.enter_context(acting_as(SERVER))
            stack.callback(context.audit.close)
            if context.owns_backend:
                assert isinstance(context.inner_backend, LocalBackend)
                await stack.enter_async_context(context.inner_backend)
            await stack.enter_async_context(context.backend.auditing_ends())
            for hook in context.lifespan_hooks:
                await stack.enter_async_context(hook())
            # Registered last, so it runs first at shutdown: streams end before sessions.
            stack.callback(context.begin_shutdown)
            yield

    cors = Middleware(
        CORSMiddleware,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "PUT", "DELETE", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "Accept"],
        max_age=600,
    )
    security = Middleware(
        SecurityMiddleware,
        # Tokens are the identity middleware's: one check, which also says who calls.
        token=None,
        allowed_origins=settings.cors_origins,
        allowed_hosts=settings.allowed_hosts,
        max_body_bytes=settings.max_body_bytes,
        public_paths=context.public_paths,
    )
    identity = Middleware(
        IdentityMiddleware, authenticator=authenticator, public_paths=context.public_paths
    )
    app = Starlette(
        routes=routes,
        middleware=[cors, security, identity],
        exception_handlers=exception_handlers,
        lifespan=lifespan,
    )
    app.state.bridge = context
    return app
