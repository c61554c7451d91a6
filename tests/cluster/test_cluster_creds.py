"""NATS credentials files (a user JWT and its NKey seed, the standard decentralised auth):
the cluster connects with ``NatsSettings.creds`` / ``--nats-creds``, and a credential the
server rejects, or a file that is not one, fails at start with :class:`NatsConnectError`
instead of retrying forever.

The server runs in operator mode with the built-in MEMORY resolver; the operator, account
and user JWTs are made here with the ``nkeys`` package (ed25519), as ``nsc`` makes them: a
self-signed operator, an account signed by the operator with JetStream enabled, users
signed by their account.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    LocalNatsServer,
    NatsConnectError,
    NatsSettings,
    die_with_parent,
)
from adapter.config import SessionConfig
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.timeouts import PROCESSES_GUARD

from ._turns import one_turn_text

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


# ----------------------------------------------------------------------- JWTs and creds


@dataclass
class Key:
    """An NKey pair: ``public`` (``O...``, ``A...``, ``U...``) and its ``seed``."""

    seed: bytes
    public: str

    @classmethod
    def new(cls, prefix: int) -> Key:
        import nkeys

        seed = nkeys.encode_seed(os.urandom(32), prefix)
        return cls(seed, nkeys.from_seed(bytearray(seed)).public_key.decode())

    def sign(self, data: bytes) -> bytes:
        import nkeys

        return bytes(nkeys.from_seed(bytearray(self.seed)).sign(data))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(issuer: Key, subject: str, name: str, nats: dict[str, Any]) -> str:
    """A v2 NATS JWT (header alg ``ed25519-nkey``, ``jti`` the claims' hash, as the Go
    library writes it), signed by ``issuer``."""
    claims: dict[str, Any] = {
        "iat": int(time.time()),
        "iss": issuer.public,
        "name": name,
        "sub": subject,
    }
    claims["jti"] = (
        base64.b32encode(hashlib.new("sha512_256", json.dumps(claims).encode()).digest())
        .rstrip(b"=")
        .decode()
    )
    claims["nats"] = {**nats, "version": 2}
    header = b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    payload = b64(json.dumps(claims).encode())
    signed = f"{header}.{payload}"
    return f"{signed}.{b64(issuer.sign(signed.encode()))}"


UNLIMITED = {"subs": -1, "data": -1, "payload": -1}
ACCOUNT_LIMITS = {
    **UNLIMITED,
    "imports": -1,
    "exports": -1,
    "wildcards": True,
    "conn": -1,
    "leaf": -1,
    # JetStream is on for an account whose storage limits are not 0.
    "mem_storage": -1,
    "disk_storage": -1,
    "streams": -1,
    "consumer": -1,
}


def creds_file(path: Path, user_jwt: str, user: Key) -> Path:
    path.write_text(
        "-----BEGIN NATS USER JWT-----\n"
        f"{user_jwt}\n"
        "------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{user.seed.decode()}\n"
        "------END USER NKEY SEED------\n"
    )
    path.chmod(0o600)
    return path


@dataclass
class Trust:
    """The server's configuration lines and credentials files made for it."""

    server_config: str
    good: Path
    unknown_account: Path
    wrong_seed: Path


def operator_setup(directory: Path) -> Trust:
    import nkeys

    operator = Key.new(nkeys.PREFIX_BYTE_OPERATOR)
    account = Key.new(nkeys.PREFIX_BYTE_ACCOUNT)
    system = Key.new(nkeys.PREFIX_BYTE_ACCOUNT)  # JetStream needs the server's system account
    operator_jwt = jwt(
        operator,
        operator.public,
        "bridge-test",
        {"type": "operator", "system_account": system.public},
    )
    account_jwt = jwt(
        operator, account.public, "BRIDGE", {"type": "account", "limits": ACCOUNT_LIMITS}
    )
    system_jwt = jwt(operator, system.public, "SYS", {"type": "account", "limits": UNLIMITED})

    def user_creds(name: str, issuer: Key, holder: Key | None = None) -> Path:
        user = Key.new(nkeys.PREFIX_BYTE_USER)
        claims = {"type": "user", "pub": {}, "sub": {}, **UNLIMITED}
        user_jwt = jwt(issuer, user.public, name, claims)
        return creds_file(directory / f"{name}.creds", user_jwt, holder or user)

    stranger = Key.new(nkeys.PREFIX_BYTE_ACCOUNT)  # an account the server does not know
    config = (
        f"operator: {operator_jwt}\n"
        f"system_account: {system.public}\n"
        "resolver: MEMORY\n"
        f"resolver_preload: {{ {account.public}: {account_jwt}, {system.public}: {system_jwt} }}\n"
    )
    return Trust(
        server_config=config,
        good=user_creds("bridge", account),
        unknown_account=user_creds("stranger", stranger),
        # A valid user JWT with someone else's seed: the nonce signature does not match.
        wrong_seed=user_creds("thief", account, Key.new(nkeys.PREFIX_BYTE_USER)),
    )


# ----------------------------------------------------------------------- tests


async def test_the_cluster_with_a_credentials_file(tmp_path: Path) -> None:
    trust = operator_setup(tmp_path)
    cli = fake_cli_command(script(text_turn("with creds")), tmp_path / "fake")
    config = ClusterConfig(prefix=f"c{uuid.uuid4().hex[:8]}")
    with LocalNatsServer(tmp_path / "nats", extra_config=trust.server_config) as server:
        settings = NatsSettings(servers=[server.url], creds=str(trust.good))
        defaults = SessionConfig(cli_path=cli, cwd=tmp_path)
        with anyio.fail_after(PROCESSES_GUARD):
            assert "with creds" == await one_turn_text(settings, config, defaults)


@pytest.mark.parametrize("which", ["unknown_account", "wrong_seed", "none"])
async def test_rejected_credentials_fail_at_start(tmp_path: Path, which: str) -> None:
    trust = operator_setup(tmp_path)
    creds = None if which == "none" else str(getattr(trust, which))
    config = ClusterConfig(prefix=f"c{uuid.uuid4().hex[:8]}")
    with LocalNatsServer(tmp_path / "nats", extra_config=trust.server_config) as server:
        settings = NatsSettings(servers=[server.url], creds=creds)
        # The default options reconnect forever: a refusal must still end the start.
        with anyio.fail_after(PROCESSES_GUARD):
            with pytest.raises(NatsConnectError, match="refused the credentials"):
                await settings.connect()
            with pytest.raises(NatsConnectError):
                async with ClusterBackend(settings, config):
                    pass


@pytest.mark.parametrize("content", ["missing", "garbage", "bad seed"])
async def test_a_file_that_is_no_credentials_fails_before_connecting(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "user.creds"
    if content == "garbage":
        path.write_text("not a credentials file\n")
    elif content == "bad seed":
        path.write_text(
            "-----BEGIN NATS USER JWT-----\na.b.c\n------END NATS USER JWT------\n"
            "-----BEGIN USER NKEY SEED-----\nSUNOTASEED\n------END USER NKEY SEED------\n"
        )
    # No server at this address: the check comes before any connection attempt.
    settings = NatsSettings(servers=["nats://127.0.0.1:1"], creds=str(path))
    with anyio.fail_after(PROCESSES_GUARD), pytest.raises(NatsConnectError, match=str(path)):
        await settings.connect()


@pytest.mark.slow
@pytest.mark.parametrize("role", ["worker", "serve"])
def test_a_process_with_rejected_credentials_exits_with_a_message(
    tmp_path: Path, role: str
) -> None:
    trust = operator_setup(tmp_path)
    extra = ["--demo"] if role == "worker" else ["--port", "0"]
    with LocalNatsServer(tmp_path / "nats", extra_config=trust.server_config) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "adapter", role, "--nats", server.url,
             "--nats-creds", str(trust.unknown_account), *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )  # fmt: skip
        try:
            _, err = proc.communicate(timeout=PROCESSES_GUARD)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert 1 == proc.returncode, err
    assert f"claudecode-bridge {role}: NATS refused the credentials" in err
    assert "Traceback" not in err
    lines = trust.unknown_account.read_text().splitlines()
    seed = lines[lines.index("-----BEGIN USER NKEY SEED-----") + 1]
    assert seed not in err  # secrets never in the output
