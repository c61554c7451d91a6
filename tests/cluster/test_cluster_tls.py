"""NATS over TLS: the cluster connects with the standard TLS files (``NatsSettings.tls_ca /
tls_cert / tls_key``, the ``--nats-tls-*`` options), with a client certificate when the
server verifies clients; a client without one, or a server certificate from a CA we do not
trust, fails at start with :class:`NatsConnectError` (no retrying forever). Certificates
come from ``trustme`` (a throw-away CA, a server certificate for 127.0.0.1, a client
certificate)."""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import pytest

from adapter.cluster import (
    ClusterConfig,
    LocalNatsServer,
    NatsConnectError,
    NatsSettings,
)
from adapter.config import SessionConfig
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.timeouts import RESTART_GUARD

from ._turns import one_turn_text

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


def make_certificates(directory: Path) -> None:
    """``ca.pem``; ``server.pem`` / ``server.key`` for 127.0.0.1 and ``client.pem`` /
    ``client.key``, both signed by it; ``other-ca.pem``, a CA that signed neither."""
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(directory / "ca.pem"))
    trustme.CA().cert_pem.write_to_path(str(directory / "other-ca.pem"))
    for name, identity in (("server", "127.0.0.1"), ("client", "bridge-worker@example.org")):
        cert = ca.issue_cert(identity)
        cert.cert_chain_pems[0].write_to_path(str(directory / f"{name}.pem"))
        cert.private_key_pem.write_to_path(str(directory / f"{name}.key"))
        (directory / f"{name}.key").chmod(0o600)


def tls_config(certs: Path, *, verify: bool) -> str:
    return (
        f'tls {{ cert_file: "{certs}/server.pem", key_file: "{certs}/server.key", '
        f'ca_file: "{certs}/ca.pem", verify: {"true" if verify else "false"}, timeout: 5 }}'
    )


async def test_the_cluster_over_tls_with_client_certificates(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir(mode=0o700)
    make_certificates(certs)
    tls = tls_config(certs, verify=True)
    cli = fake_cli_command(script(text_turn("over tls")), tmp_path / "fake")
    config = ClusterConfig(prefix=f"s{uuid.uuid4().hex[:8]}")
    with LocalNatsServer(tmp_path / "nats", extra_config=tls) as server:
        url = f"tls://127.0.0.1:{server.port}"
        without_certificate = NatsSettings(servers=[url], tls_ca=str(certs / "ca.pem"))
        # The default options reconnect forever: the refusal must still end the start.
        with anyio.fail_after(RESTART_GUARD), pytest.raises(NatsConnectError, match="TLS"):
            await without_certificate.connect()
        settings = NatsSettings(
            servers=[url],
            tls_ca=str(certs / "ca.pem"),
            tls_cert=str(certs / "client.pem"),
            tls_key=str(certs / "client.key"),
        )
        defaults = SessionConfig(cli_path=cli, cwd=tmp_path)
        with anyio.fail_after(RESTART_GUARD):
            assert "over tls" == await one_turn_text(settings, config, defaults)


async def test_a_server_certificate_from_an_unknown_ca_fails_at_start(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir(mode=0o700)
    make_certificates(certs)
    with LocalNatsServer(tmp_path / "nats", extra_config=tls_config(certs, verify=False)) as server:
        url = f"tls://127.0.0.1:{server.port}"
        trusted = NatsSettings(servers=[url], tls_ca=str(certs / "ca.pem"))
        with anyio.fail_after(RESTART_GUARD):
            nc = await trusted.connect()
            await nc.close()
        for ca in ("other-ca.pem", None):  # another CA; the system's CAs
            untrusted = NatsSettings(servers=[url], tls_ca=str(certs / ca) if ca else None)
            with (
                anyio.fail_after(RESTART_GUARD),
                pytest.raises(NatsConnectError, match="certificate is not trusted"),
            ):
                await untrusted.connect()
