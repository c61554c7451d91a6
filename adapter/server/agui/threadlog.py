"""A thread's message log on disk: append-only records of what changed (pure).

The saver writes one record per thread per round: the messages dropped, the messages put
whole (new, or changed in a way other than streamed text), and the text streamed onto the
others since the last record. A long run therefore writes what it streamed, not its whole
thread every round. A ``reset`` record holds every message (the first record of a file, and
each compaction).

Framing, one record per line: ``<length> <crc32 hex> <json>\\n``. A record whose length,
checksum, newline or JSON does not hold ends the log there (a torn write at a crash, so the
round it belonged to is lost whole and never half-applied); the store writes its next record
from the last good one.

The record's JSON is an object, and keys the reader does not know are ignored: a later
version can add fields without breaking the files of this one (or this reader).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

import msgspec

__all__ = ("LogRecord", "encode_record", "read_log", "replay")

#: A record: ``reset`` (bool), ``drop`` (ids), ``put`` (messages), ``more`` (id -> text).
LogRecord = dict[str, Any]

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def encode_record(record: LogRecord) -> bytes:
    """One framed record."""
    payload = _encode(record)
    return b"%d %08x %s\n" % (len(payload), zlib.crc32(payload), payload)


def read_log(data: bytes) -> tuple[list[LogRecord], int]:
    """The good records at the start of ``data`` and where they end (the offset the next
    record goes to)."""
    records: list[LogRecord] = []
    pos = 0
    size = len(data)
    while pos < size:
        space = data.find(b" ", pos, pos + 21)
        if space < 0 or not data[pos:space].isdigit():
            break
        length = int(data[pos:space])
        start = space + 10
        end = start + length
        if end >= size or data[end] != 0x0A or data[space + 9] != 0x20:
            break
        payload = data[start:end]
        try:
            if int(data[space + 1 : space + 9], 16) != zlib.crc32(payload):
                break
            record = _decode(payload)
        except (ValueError, msgspec.DecodeError):
            break
        if not isinstance(record, dict):
            break
        records.append(record)
        pos = end + 1
    return records, pos


def replay(records: Iterable[LogRecord]) -> list[dict[str, Any]]:
    """The messages the records leave, oldest first."""
    messages: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.get("reset"):
            messages.clear()
        for message_id in record.get("drop") or ():
            messages.pop(message_id, None)
        for message in record.get("put") or ():
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                messages[message["id"]] = message
        more = record.get("more")
        if isinstance(more, dict):
            for message_id, text in more.items():
                message = messages.get(message_id)
                if message is not None and isinstance(text, str):
                    message["content"] = str(message.get("content") or "") + text
    return list(messages.values())
