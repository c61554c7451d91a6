"""An editor in memory for :class:`~adapter.acp.agent.AcpAgent` tests: frames in, every
agent message recorded and checked against the ACP schema."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio

from tests.support.acp_schema import WireChecker

__all__ = ("Client",)


class Client:
    """The editor's side, in memory: frames in, every agent message recorded and checked."""

    def __init__(self) -> None:
        self.inbox_send, self.inbox = anyio.create_memory_object_stream[bytes](100)
        self.received: list[dict[str, Any]] = []
        self.arrived = anyio.Event()
        self.checker = WireChecker()
        self.next_id = 0

    async def agent_sends(self, data: bytes) -> None:
        for line in data.splitlines():
            msg = json.loads(line)
            assert [] == self.checker.check("agent", msg), msg
            self.received.append(msg)
        self.arrived.set()
        self.arrived = anyio.Event()

    async def chunks(self) -> AsyncIterator[bytes]:
        async with self.inbox:
            async for chunk in self.inbox:
                yield chunk

    async def send(self, msg: dict[str, Any]) -> None:
        msg = {"jsonrpc": "2.0", **msg}
        assert [] == self.checker.check("client", msg), msg
        await self.inbox_send.send(json.dumps(msg).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        await self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def wait_for(self, predicate: Any) -> dict[str, Any]:
        seen = 0
        while True:
            for msg in self.received[seen:]:
                if predicate(msg):
                    return msg
            seen = len(self.received)
            await self.arrived.wait()

    async def answer(self, request_id: int) -> dict[str, Any]:
        return await self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.received
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == kind
        ]
