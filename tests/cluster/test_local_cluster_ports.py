"""LocalNatsCluster picks its members' ports before they start: one taken in between (by any
other process on the machine) must not fail the cluster."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from adapter.cluster import LocalNatsCluster

pytestmark = [pytest.mark.nats]


def test_a_route_port_taken_before_its_member_starts_gives_fresh_ports(tmp_path: Path) -> None:
    cluster = LocalNatsCluster(tmp_path / "c", size=3)
    member = cluster.servers[1]
    assert member.cluster is not None
    taken = member.cluster[1]  # its route port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        with cluster:
            assert all(s.process is not None and s.process.poll() is None for s in cluster.servers)
            routes = [s.cluster[1] for s in cluster.servers if s.cluster is not None]
            assert taken not in routes
    assert all(s.process is None for s in cluster.servers)
