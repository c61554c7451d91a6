"""An ACP agent whose sessions run on a cluster's workers: ``python cluster_gateway.py URL
PREFIX`` serves ACP on stdin / stdout over a :class:`~adapter.cluster.ClusterBackend` (a
gateway), the way an application embeds :class:`~adapter.acp.AcpAgent` in front of a cluster.
Logs go to stderr."""

from __future__ import annotations

import sys

import anyio

from adapter.acp.agent import AgentOptions
from adapter.cluster import ClusterBackend, ClusterConfig, NatsSettings
from adapter.commands._setup import configure_logging
from adapter.commands.acp import _own_stdout, serve_stdio


async def main(url: str, prefix: str, protocol_fd: int) -> None:
    nats = NatsSettings(servers=[url], name="acp-gateway")
    async with ClusterBackend(nats, ClusterConfig(prefix=prefix)) as backend:
        await serve_stdio(backend, AgentOptions(policy="autonomous"), protocol_fd)


if __name__ == "__main__":
    fd = _own_stdout()
    configure_logging(1)
    anyio.run(main, sys.argv[1], sys.argv[2], fd)
