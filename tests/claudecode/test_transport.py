"""The subprocess transport's stdout: our own non-blocking pipe, read without the event
loop's pipe transport. Every byte arrives in order, end of output is ``b""``, closing wakes
a waiting reader, and the child never sees our end of the pipe."""

from __future__ import annotations

import hashlib
import json
import sys

import anyio
import pytest

from claudecode.transport import SubprocessTransport
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def _read_all(transport: SubprocessTransport) -> bytes:
    chunks = []
    while chunk := await transport.receive():
        chunks.append(chunk)
    return b"".join(chunks)


async def test_every_byte_in_order_then_end_of_output() -> None:
    # 8 MiB in uneven writes, more than any pipe holds: the reader waits and resumes often.
    code = (
        "import os, hashlib\n"
        "data = bytes(range(256)) * 32768\n"
        "view = memoryview(data)\n"
        "i = 0\n"
        "for n in (1, 7, 4096, 65537, 300000) * 40:\n"
        "    os.write(1, view[i:i + n]); i += n\n"
        "while i < len(data):\n"
        "    i += os.write(1, view[i:i + 1000000])\n"
    )
    transport = SubprocessTransport(_child(code), close_grace=5, kill_after=5)
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        with anyio.fail_after(HANG_GUARD):  # a hang guard only
            data = await _read_all(transport)
            assert await transport.receive() == b""  # and it stays ended
            assert await transport.wait() == 0
        await transport.aclose()
    expected = bytes(range(256)) * 32768
    assert len(data) == len(expected)
    assert hashlib.sha256(data).digest() == hashlib.sha256(expected).digest()


async def test_close_wakes_a_reader_waiting_for_output() -> None:
    transport = SubprocessTransport(
        _child("import time; time.sleep(60)"), close_grace=0.1, kill_after=5
    )
    got: list[bytes] = []
    async with anyio.create_task_group() as tg:
        await transport.start(tg)

        async def read() -> None:
            got.append(await transport.receive())

        tg.start_soon(read)
        await anyio.sleep(0.2)  # the reader is now waiting for the empty pipe
        with anyio.fail_after(HANG_GUARD):
            await transport.aclose()
    assert got == [b""]
    assert transport.returncode is not None
    assert await transport.receive() == b""  # after close: end of output, no error


async def test_the_child_does_not_inherit_our_end_of_its_stdout() -> None:
    # A pipe end leaked into the child (and the tools it starts) would outlive us there; a
    # leaked write end would keep our reader from ever seeing end of output.
    code = (
        "import json, os, stat\n"
        "def fifo(fd):\n"
        "    try:\n"
        "        return stat.S_ISFIFO(os.fstat(fd).st_mode)\n"
        "    except OSError:\n"
        "        return False\n"
        "print(json.dumps({'stdout_is_pipe': fifo(1),\n"
        "                  'other_pipes': [fd for fd in range(3, 256) if fifo(fd)]}))\n"
    )
    transport = SubprocessTransport(_child(code), close_grace=5, kill_after=5)
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        with anyio.fail_after(HANG_GUARD):
            data = await _read_all(transport)
        await transport.aclose()
    assert json.loads(data) == {"stdout_is_pipe": True, "other_pipes": []}
