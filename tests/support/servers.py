"""A real uvicorn server on 127.0.0.1 (ephemeral port) in a thread, for tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def running(
    app: Any,
    *,
    timeout: float = 30.0,
    config: Callable[[Any], uvicorn.Config] | None = None,
) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL. The app's lifespan runs.
    ``config`` makes the ``uvicorn.Config`` (``serve``'s own, say); uvicorn's defaults
    without it."""
    if config is None:
        made = uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning")
    else:
        made = config(app)
    server = uvicorn.Server(made)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            # A server that never started leaves no socket for a later test's collector.
            server.should_exit = True
            thread.join(timeout)
            sock.close()
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        app.state.bridge.begin_shutdown_threadsafe()  # streams end their runs first
        server.should_exit = True
        thread.join(timeout)
        sock.close()
        assert not thread.is_alive(), "the test server did not stop"
