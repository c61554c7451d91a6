"""Strict checks of ACP messages against the protocol's JSON Schema (version 1; the
unstable methods the agent serves, such as ``session/fork``, against the unstable one).

The schema file is ``tests/fixtures/acp_schema/schema.v1.json``, copied from
``@agentclientprotocol/sdk`` 2.4.0 (``schema/v1/schema.json``, the same file the
agent-client-protocol repository publishes). Its top-level union accepts any notification
as an "extension" notification, so each message is checked against the definition its
method names (``x-method``): a request's or notification's ``params``, a response's
``result`` (looked up through the request id), an error against ``Error``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_PATH = Path(__file__).parent.parent / "fixtures" / "acp_schema" / "schema.v1.json"
#: The same SDK's unstable v1 schema (``schema/v1/schema.unstable.json``), for the methods
#: that are only there (:data:`UNSTABLE_METHODS`).
UNSTABLE_PATH = SCHEMA_PATH.with_name("schema.v1.unstable.json")
UNSTABLE_METHODS = frozenset({"session/fork"})


@cache
def _schema(unstable: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((UNSTABLE_PATH if unstable else SCHEMA_PATH).read_text())
    return schema


@cache
def _by_method(unstable: bool = False) -> tuple[dict[str, str], dict[str, str]]:
    params: dict[str, str] = {}
    results: dict[str, str] = {}
    for name, body in _schema(unstable)["$defs"].items():
        method = body.get("x-method")
        if method is None:
            continue
        if name.endswith("Response"):
            results[method] = name
        else:
            params[method] = name
    return params, results


@cache
def validator(definition: str, unstable: bool = False) -> jsonschema.Draft202012Validator:
    """A validator of one ``$defs`` entry."""
    return jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{definition}", "$defs": _schema(unstable)["$defs"]}
    )


def errors_of(definition: str, value: Any, unstable: bool = False) -> list[str]:
    """What is wrong with ``value`` as a ``definition`` (empty: valid)."""
    return [
        f"{definition}: {e.message[:300]} at {list(e.absolute_path)}"
        for e in validator(definition, unstable).iter_errors(value)
    ]


class WireChecker:
    """Checks both directions of one conversation (agent lines, client lines)."""

    def __init__(self) -> None:
        self.pending: dict[tuple[str, Any], str] = {}  # (sender, id) -> method

    def _envelope(self, msg: Any) -> list[str]:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return [f"not a JSON-RPC 2.0 object: {str(msg)[:200]}"]
        return []

    def check(self, sender: str, msg: Any) -> list[str]:
        """Errors of one message sent by ``sender`` (``agent`` or ``client``)."""
        problems = self._envelope(msg)
        if problems:
            return problems
        method = msg.get("method")
        if method is not None:
            if "id" in msg:
                self.pending[(sender, msg["id"])] = method
            unstable = method in UNSTABLE_METHODS
            definition = _by_method(unstable)[0].get(method)
            if definition is None:
                return [f"unknown method {method!r}"]
            return errors_of(definition, msg.get("params"), unstable)
        other = "client" if sender == "agent" else "agent"
        asked = self.pending.pop((other, msg.get("id")), None)
        if "error" in msg:
            return errors_of("Error", msg["error"])
        if asked is None:
            return [f"a response to no request: {str(msg)[:200]}"]
        unstable = asked in UNSTABLE_METHODS
        definition = _by_method(unstable)[1].get(asked)
        if definition is None:
            return [f"no response schema for {asked!r}"]
        return errors_of(definition, msg.get("result"), unstable)


def check_wire(agent_lines: list[bytes], client_lines: list[bytes]) -> list[str]:
    """Errors across a whole recorded conversation, in a plausible order (client first).

    Responses are matched to requests by id whatever the order, so each side's requests are
    registered before the other side's responses are checked.
    """
    checker = WireChecker()
    agent = [json.loads(line) for line in agent_lines if line.strip()]
    client = [json.loads(line) for line in client_lines if line.strip()]
    problems: list[str] = []
    for sender, msgs in (("client", client), ("agent", agent)):
        for msg in msgs:
            if "method" in msg and "id" in msg:
                checker.pending[(sender, msg["id"])] = msg["method"]
    for sender, msgs in (("client", client), ("agent", agent)):
        for msg in msgs:
            if "method" in msg and "id" in msg:
                checker.pending[(sender, msg["id"])] = msg["method"]
            problems += [f"{sender}: {p}" for p in checker.check(sender, msg)]
    return problems
