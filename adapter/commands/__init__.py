"""Every ``claudecode-bridge`` command, the top of the layers.

Entry points configure what libraries never do (logging, the OpenTelemetry SDK, the event
loop, the garbage collector); everything below them only logs and traces.

* :mod:`adapter.commands.main` — argument parsing and dispatch (the console script);
* :mod:`adapter.commands.run` — ``run``: one prompt, rendered by
  :mod:`adapter.commands.run_render` or printed as ``--json`` events;
* :mod:`adapter.commands.serve` — ``serve``: the HTTP server for every front end;
* :mod:`adapter.commands.worker` — ``worker``: sessions for a cluster over NATS JetStream;
* :mod:`adapter.commands.acp` — ``acp``: the Agent Client Protocol agent on stdio;
* :mod:`adapter.commands.demo` — the scripted stand-in CLI behind every ``--demo``;
* ``_setup`` (logging, tracing), ``_event_loop`` (asyncio / uvloop), ``_process`` (the
  collector of a long-running process): what the commands share.
"""

from __future__ import annotations

from .main import main

__all__ = ("main",)
