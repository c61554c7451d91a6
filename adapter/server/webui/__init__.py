"""adapter.server.webui: the built-in web UI at ``/`` (static HTML, CSS and JavaScript modules
in the package; no CDN, no build step). It speaks only the WebSocket protocol of
:mod:`adapter.server.ws`.

Route provider :func:`webui_routes` (mounted by ``claudecode-bridge serve``). The page and its
files are public (they hold no data); with a token configured, open
``http://HOST:PORT/#token=TOKEN`` — the page keeps the token for the tab and passes it to
``/ws`` as the ``token`` query parameter. Every response carries a strict
Content-Security-Policy (scripts, styles and connections from the server only), and the page
inserts model and tool text with ``textContent`` only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from ..app import ServerContext

__all__ = ("STATIC_DIR", "webui_routes")

#: Where the page's files are.
STATIC_DIR: Final = Path(__file__).resolve().parent / "static"

_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
}
_HEADERS: Final = {
    "Content-Security-Policy": (
        # style-src 'unsafe-inline': xterm.js (the terminal view) sizes and colours its cells
        # with <style> elements it creates; scripts stay restricted to the server's files.
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def webui_routes(ctx: ServerContext) -> list[BaseRoute]:
    """``/`` and ``/ui/<file>`` (a route provider for :func:`~adapter.server.create_app`)."""
    files = {p.name: p for p in STATIC_DIR.iterdir() if p.suffix in _TYPES}
    ctx.public_paths.update({"/", *(f"/ui/{name}" for name in files)})
    ctx.endpoints.insert(0, ("web UI", "/"))

    def serve(path: Path) -> Response:
        return FileResponse(path, media_type=_TYPES[path.suffix], headers=_HEADERS)

    async def index(request: Request) -> Response:
        return serve(files["index.html"])

    async def asset(request: Request) -> Response:
        path = files.get(request.path_params["name"])
        if path is None:
            return Response("not found", status_code=404, headers=_HEADERS)
        return serve(path)

    return [Route("/", index, methods=["GET"]), Route("/ui/{name}", asset, methods=["GET"])]
