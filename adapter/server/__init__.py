"""adapter.server: the bridge's HTTP server, shared by every front end (needs the ``server``
extra: ``pip install 'claudecode-bridge[server]'``).

:func:`create_app` builds a Starlette application over a
:class:`~adapter.backend.SessionBackend`, with the security every route shares
(:class:`SecurityMiddleware`: foreign origins refused, bearer tokens, body limits, CORS for
the configured origins), JSON errors, ``/healthz``, ``/readyz`` and the session REST API.
Front ends add their routes as route providers (:data:`RouteProvider`).
``claudecode-bridge serve`` runs it under uvicorn.
"""

from .agents import Agent, AgentsFileError, load_agents, parse_agents
from .app import BUILTIN_PROVIDERS, LifespanHook, RouteProvider, ServerContext, create_app
from .errors import exception_handlers, json_error
from .json_io import json_response, read_json
from .routes import PermissionAnswer, PromptBody, core_routes
from .security import SecurityMiddleware, token_matches
from .settings import ServerSettings

__all__ = (
    "Agent",
    "AgentsFileError",
    "BUILTIN_PROVIDERS",
    "core_routes",
    "create_app",
    "exception_handlers",
    "json_error",
    "json_response",
    "LifespanHook",
    "load_agents",
    "parse_agents",
    "PermissionAnswer",
    "PromptBody",
    "read_json",
    "RouteProvider",
    "SecurityMiddleware",
    "ServerContext",
    "ServerSettings",
    "token_matches",
)
