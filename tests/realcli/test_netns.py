"""The private network namespace: only loopback inside, and the fake API reachable there."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .fake_api import FakeAnthropicAPI
from .netns import NetNamespace

# Runs inside the namespace. It refuses to try any outside connect unless it really is in a
# different namespace than the test process, so a broken setup can never send real traffic.
_PROBE = """
import os, socket, sys
host_ns, port = sys.argv[1], int(sys.argv[2])
if os.readlink("/proc/self/ns/net") == host_ns:
    print("SAME_NAMESPACE")
    sys.exit(3)
print("INTERFACES", ",".join(name for _, name in socket.if_nameindex()))
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("1.1.1.1", 443))
    print("CONNECTED")
except OSError as exc:
    print("ERRNO", exc.errno)
finally:
    s.close()
c = socket.create_connection(("127.0.0.1", port), timeout=2)
c.close()
print("LOOPBACK_OK")
"""


def require_isolation(netns: NetNamespace) -> None:
    if not netns.isolated:
        pytest.skip(f"no network namespace here: {netns.reason}")


def test_inside_only_loopback_exists_and_the_fake_api_is_reachable(
    netns: NetNamespace, fake_api: FakeAnthropicAPI
) -> None:
    require_isolation(netns)
    host_ns = os.readlink("/proc/self/ns/net")
    result = subprocess.run(
        [*netns.command_prefix(), sys.executable, "-c", _PROBE, host_ns, str(fake_api.port)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["INTERFACES lo", f"ERRNO {errno.ENETUNREACH}", "LOOPBACK_OK"]


def test_wrapper_execs_in_the_namespace_keeping_the_pid(
    netns: NetNamespace, tmp_path: Path
) -> None:
    require_isolation(netns)
    wrapper = netns.wrap("/bin/sh", tmp_path)
    proc = subprocess.Popen(
        [str(wrapper), "-c", 'echo "$$"; readlink /proc/self/ns/net'],
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate(timeout=30)
    pid, ns = out.split()
    assert int(pid) == proc.pid
    assert ns == os.readlink(netns.path)
    assert ns != os.readlink("/proc/self/ns/net")


def test_a_namespace_goes_away_when_closed() -> None:
    ns = NetNamespace.create()
    if not ns.isolated:
        pytest.skip(f"no network namespace here: {ns.reason}")
    proc_dir = Path(ns.path).parent.parent
    assert proc_dir.exists()
    ns.close()
    assert not ns.isolated
    assert not proc_dir.exists()


def test_the_fallback_uses_the_host_network(tmp_path: Path) -> None:
    ns = NetNamespace.unavailable("a test of the fallback")
    assert not ns.isolated
    assert ns.command_prefix() == []
    assert ns.wrap("/bin/true", tmp_path) == Path("/bin/true")
    with FakeAnthropicAPI(listen=ns.listen) as api:
        assert api.port > 0
