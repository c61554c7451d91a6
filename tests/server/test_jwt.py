"""OpenID Connect identities: JWTs checked against a real JWKS this test serves on 127.0.0.1
with keys it generates (RSA and EC), through a real bridge server."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import websockets.sync.client as ws_client
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.server import ServerSettings, create_app
from adapter.server.jwt_auth import JwtSettings, JwtVerifier
from tests.support.servers import running

pytestmark = pytest.mark.server

ISSUER = "https://idp.example/"
AUDIENCE = "claudecode-bridge"


class Provider:
    """A JWKS endpoint with keys made here; counts how often the keys were fetched."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {
            "rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec-1": ec.generate_private_key(ec.SECP256R1()),
        }
        self.published = ["rsa-1", "ec-1"]
        self.fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                provider.fetches += 1
                body = json.dumps(provider.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            public = self.keys[kid].public_key()
            algorithm = (
                jwt.algorithms.RSAAlgorithm if kid.startswith("rsa") else jwt.algorithms.ECAlgorithm
            )
            jwk = json.loads(algorithm.to_jwk(public))
            keys.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": keys}

    def token(self, kid: str = "rsa-1", *, key: Any = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 300}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        algorithm = "RS256" if kid.startswith("rsa") else "ES256"
        return jwt.encode(body, key or self.keys[kid], algorithm=algorithm, headers={"kid": kid})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    p = Provider()
    yield p
    p.close()


@pytest.fixture(scope="module")
def server(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("jwt")
    settings = ServerSettings(
        jwt=JwtSettings(
            jwks_url=provider.url,
            issuer=ISSUER,
            audience=AUDIENCE,
            admin_claim=("groups", "bridge-admins"),
            terminals_claim=("groups", "shell-users"),
            leeway_seconds=0,
            refetch_cooldown_seconds=0,
        ),
        state_dir=tmp / "state",
    )
    with running(create_app(settings=settings)) as url:
        yield url


def me(server: str, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{server}/api/me", headers=headers, timeout=30)


def test_valid_tokens_name_their_user(server: str, provider: Provider) -> None:
    assert {"name": "alice", "admin": False, "terminals": False} == me(
        server, provider.token()
    ).json()
    admin = provider.token("ec-1", sub="root", groups=["staff", "bridge-admins", "shell-users"])
    assert {"name": "root", "admin": True, "terminals": True} == me(server, admin).json()
    # A WebSocket handshake may carry it as ?token=, like any token.
    ws = server.replace("http://", "ws://") + f"/ws?token={provider.token()}"
    with ws_client.connect(ws, open_timeout=30) as conn:
        assert "session_list" == json.loads(conn.recv(timeout=30))["type"]


def test_bad_tokens_are_refused(server: str, provider: Provider) -> None:
    now = int(time.time())
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = (
        provider.keys["rsa-1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    unsigned = jwt.encode(
        {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now + 300},
        None,  # type: ignore[arg-type]  # alg "none" takes no key
        algorithm="none",
        headers={"kid": "rsa-1"},
    )
    forged_hmac = _hmac_token(public_pem, now)
    for label, token in (
        ("expired", provider.token(exp=now - 60, iat=now - 600)),
        ("not yet valid", provider.token(nbf=now + 600)),
        ("wrong audience", provider.token(aud="someone-else")),
        ("wrong issuer", provider.token(iss="https://evil.example/")),
        ("no exp", provider.token(exp=None)),
        ("another key, a known kid", provider.token(key=stranger)),
        ("an unknown kid", provider.token("rsa-unknown", key=stranger)),
        ("alg none", unsigned),
        ("HMAC with the public key", forged_hmac),
        ("no name", provider.token(sub=None)),
        ("not a JWT", "a.b.c"),
    ):
        assert 401 == me(server, token).status_code, label


def _hmac_token(secret: bytes, now: int) -> str:
    """A token 'signed' with HS256 using the provider's public key as the secret."""
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    body = b64(
        json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "root", "exp": now + 300}).encode()
    )
    signature = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64(signature)}"


def test_a_rotated_key_is_fetched_when_a_token_names_it(server: str, provider: Provider) -> None:
    provider.keys["rsa-2"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = provider.token("rsa-2", sub="carol")
    assert 401 == me(server, token).status_code  # not published yet
    provider.published.append("rsa-2")
    before = provider.fetches
    assert "carol" == me(server, token).json()["name"]
    assert provider.fetches > before
    # Cached from then on: the next requests fetch nothing.
    settled = provider.fetches
    for _ in range(3):
        assert 200 == me(server, provider.token("rsa-2", sub="carol")).status_code
    assert settled == provider.fetches


class Clock:
    """Wall-clock time the test moves by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _verifier(provider: Provider, clock: Clock, **changes: Any) -> JwtVerifier:
    settings = JwtSettings(
        jwks_url=provider.url,
        issuer=ISSUER,
        audience=AUDIENCE,
        leeway_seconds=0,
        refetch_cooldown_seconds=0,
    )
    return JwtVerifier(dataclasses.replace(settings, **changes), clock=clock)


def test_a_verified_token_is_remembered_until_the_cache_lapses(provider: Provider) -> None:
    clock = Clock()
    verifier = _verifier(provider, clock, cache_seconds=60)
    token = provider.token(sub="dora")
    assert verifier.cached(token) is None
    principal = verifier.verify(token)
    assert principal is not None and "dora" == principal.name
    # Remembered: no signature check, no thread hop, for a minute...
    clock.now += 59
    assert principal == verifier.cached(token)
    # ...and no longer once its entry lapses: the next request verifies it again.
    clock.now += 2
    assert verifier.cached(token) is None


def test_a_cached_token_ends_at_its_exp(provider: Provider) -> None:
    clock = Clock()
    verifier = _verifier(provider, clock, cache_seconds=600)
    token = provider.token(exp=int(clock.now) + 5)
    assert verifier.verify(token) is not None
    assert verifier.cached(token) is not None
    clock.now += 6
    assert verifier.cached(token) is None


def test_refused_tokens_are_not_remembered_and_the_cache_is_bounded(
    provider: Provider,
) -> None:
    clock = Clock()
    verifier = _verifier(provider, clock, cache_entries=2)
    assert verifier.verify(provider.token(aud="someone-else")) is None
    assert verifier.cached(provider.token(aud="someone-else")) is None
    tokens = [provider.token(sub=name) for name in ("a", "b", "c")]
    for token in tokens:
        assert verifier.verify(token) is not None
    assert [None, "b", "c"] == [
        None if (p := verifier.cached(t)) is None else p.name for t in tokens
    ]
    off = _verifier(provider, clock, cache_seconds=0)
    assert off.verify(tokens[0]) is not None and off.cached(tokens[0]) is None


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=120))
def test_any_bearer_text_is_401_or_a_user(text: str) -> None:
    """Arbitrary text as a bearer token never reaches a route nor fails the server."""
    verifier = JwtVerifier(
        JwtSettings(jwks_url="http://127.0.0.1:9/none", issuer=ISSUER, audience=AUDIENCE)
    )
    assert verifier.verify(text) is None


_JWKS_ONLY = ("--jwt-jwks", "http://127.0.0.1:9/x")


def test_serve_options_need_each_other(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "serve", "--port", "0", "--demo", *_JWKS_ONLY],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert 2 == done.returncode
    assert "--jwt-jwks needs --jwt-issuer and --jwt-audience" in done.stderr
