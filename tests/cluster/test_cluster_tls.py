"""NATS over TLS with client certificates: the cluster connects with the standard TLS files
(``NatsSettings.tls_ca / tls_cert / tls_key``, the worker's ``--nats-tls-*`` options); a
client without a certificate is refused."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import anyio
import pytest

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
)
from adapter.config import SessionConfig
from adapter.events import Complete, MessageChunk
from claudecode.testing import fake_cli_command, script, text_turn

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory: Path) -> None:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "1", "-subj", "/CN=bridge test CA", cwd=directory)  # fmt: skip
    for name, ext in (
        ("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ):
        (directory / f"{name}.ext").write_text(ext)
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
                f"{name}.csr", "-subj", f"/CN={name}", cwd=directory)  # fmt: skip
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "1", "-extfile",
                f"{name}.ext", cwd=directory)  # fmt: skip
    for key in directory.glob("*.key"):
        key.chmod(0o600)


async def test_the_cluster_over_tls_with_client_certificates(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir(mode=0o700)
    make_certificates(certs)
    tls = (
        f'tls {{ cert_file: "{certs}/server.pem", key_file: "{certs}/server.key", '
        f'ca_file: "{certs}/ca.pem", verify: true, timeout: 5 }}'
    )
    cli = fake_cli_command(script(text_turn("over tls")), tmp_path / "fake")
    config = ClusterConfig(prefix=f"s{uuid.uuid4().hex[:8]}")
    with LocalNatsServer(tmp_path / "nats", extra_config=tls) as server:
        url = f"tls://127.0.0.1:{server.port}"
        without_certificate = NatsSettings(servers=[url], tls_ca=str(certs / "ca.pem"))
        with anyio.fail_after(60), pytest.raises(OSError):  # noqa: PT011 - TLS alert or reset
            await connect_and_close(without_certificate)
        settings = NatsSettings(
            servers=[url],
            tls_ca=str(certs / "ca.pem"),
            tls_cert=str(certs / "client.pem"),
            tls_key=str(certs / "client.key"),
        )
        defaults = SessionConfig(cli_path=cli, cwd=tmp_path)
        with anyio.fail_after(60):
            async with (
                ClusterWorker(settings, config, defaults, idle_timeout=None),
                ClusterBackend(settings, config) as backend,
            ):
                while True:
                    if backend._require().workers:
                        break
                    await anyio.sleep(0.05)
                info = await backend.create(SessionSpec())
                async with backend.subscribe(info.id, after_seq=0) as events:
                    await backend.prompt(info.id, "hello")
                    text = ""
                    async for event in events:
                        if isinstance(event, MessageChunk):
                            text += event.text
                        if isinstance(event, Complete):
                            break
                assert "over tls" == text
                await backend.close(info.id)


async def connect_and_close(settings: NatsSettings) -> None:
    nc = await settings.connect(allow_reconnect=False, max_reconnect_attempts=0)
    await nc.close()
