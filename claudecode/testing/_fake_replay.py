"""Replay mode of the fake CLI: play back the CLI's side of a recorded transcript.

Transcript lines are ``{"dir": "from_cli" | "to_cli" | ..., "proc": label, "msg": {...}}``
(the shared format of ``tests/fixtures/transcripts``). The fake writes the ``from_cli``
messages in order; at each ``to_cli`` line it waits until the host has sent a message of the
same kind, so the host drives the pace exactly as it did in the recording.

Request ids: the CLI's own control requests (``can_use_tool``, ``hook_callback``, …) go out
with the transcript's ids, and the host must answer those ids. The host's control requests
(``initialize``, ``interrupt``, …) carry whatever ids the host picks; the recorded answer is
sent back with the host's real id.

Host messages that arrive out of the recorded order are kept and matched later. When the
transcript runs out the fake carries on as a plain scripted CLI (echo turns, generic control
answers) until stdin closes; the exit code is the recorded one unless the script sets
``exit_code``.
"""

from __future__ import annotations

import copy
import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._fake_cli import FakeCLI

__all__ = ("load_transcript", "message_kind", "replay")

Json = dict[str, Any]


def load_transcript(path: str, proc: str | None = None) -> tuple[list[Json], int | None]:
    """Return the ``from_cli``/``to_cli`` entries of one process, and its recorded exit code.

    ``proc`` picks the process label in multi-process transcripts (default: the first one).
    """
    entries: list[Json] = []
    exit_code: int | None = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            if not raw.strip():
                continue
            entry = json.loads(raw)
            direction = entry.get("dir")
            if direction in ("from_cli", "to_cli"):
                if proc is None:
                    proc = entry.get("proc")
                if entry.get("proc") == proc:
                    entries.append(entry)
            elif direction == "note" and entry.get("note") == "exit" and entry.get("proc") == proc:
                exit_code = int(entry.get("rc", 0))
    return entries, exit_code


def message_kind(msg: Json) -> tuple[str, str | None]:
    """``(type, subtype)`` used to match a host message against a recorded one."""
    kind = str(msg.get("type"))
    if kind == "control_request":
        return kind, (msg.get("request") or {}).get("subtype")
    if kind == "control_response":
        return kind, None
    return kind, msg.get("subtype")


def _matches(expected: Json, got: Json) -> bool:
    if message_kind(expected) != message_kind(got):
        return False
    if expected.get("type") == "control_response":
        want = (expected.get("response") or {}).get("request_id")
        return bool((got.get("response") or {}).get("request_id") == want)
    return True


def replay(cli: FakeCLI, path: str, proc: str | None, speed: float) -> None:
    """Play the transcript at ``path`` against the host; return when it is used up.

    ``speed`` > 0 keeps the recorded gaps between ``from_cli`` lines, divided by ``speed``;
    0 writes them as fast as the host allows.
    """
    entries, recorded_exit = load_transcript(path, proc)
    if recorded_exit is not None and "exit_code" not in cli.script:
        cli.script = {**cli.script, "exit_code": recorded_exit}
    id_map: dict[str, str] = {}
    stash: list[Json] = []
    last_t: float | None = None
    for entry in entries:
        msg = entry["msg"]
        if entry["dir"] == "from_cli":
            t = entry.get("t")
            if speed > 0 and isinstance(t, int | float) and last_t is not None and t > last_t:
                time.sleep((t - last_t) / speed)
            last_t = t if isinstance(t, int | float) else last_t
            cli.out.send(_rewrite(msg, id_map))
        elif not _await_host(cli, msg, id_map, stash):
            break  # stdin closed before the host sent what the recording expects
    # Whatever the recording did not account for is served generically from here on.
    for msg in stash:
        cli.dispatch(msg)


def _rewrite(msg: Json, id_map: dict[str, str]) -> Json:
    if msg.get("type") != "control_response":
        return msg
    recorded = (msg.get("response") or {}).get("request_id")
    if recorded not in id_map:
        return msg
    out = copy.deepcopy(msg)
    out["response"]["request_id"] = id_map[recorded]
    return out


def _await_host(cli: FakeCLI, expected: Json, id_map: dict[str, str], stash: list[Json]) -> bool:
    for i, got in enumerate(stash):
        if _matches(expected, got):
            del stash[i]
            _bind(expected, got, id_map)
            return True
    while True:
        item = cli.receive(None)
        if item is None or item[0] == "eof":
            return False
        if item[0] != "msg":
            continue
        got = item[1]
        if _matches(expected, got):
            _bind(expected, got, id_map)
            return True
        stash.append(got)


def _bind(expected: Json, got: Json, id_map: dict[str, str]) -> None:
    if expected.get("type") == "control_request" and "request_id" in expected:
        id_map[str(expected["request_id"])] = str(got.get("request_id"))
