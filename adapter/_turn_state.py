"""The translator's bookkeeping: text de-duplication and bounded memories.

Rules (all of the translator's de-duplication lives here):

1. **Text and thinking are counted per API message and kind.** The CLI may deliver the same
   text twice: streamed as ``text_delta`` events and again as an ``assistant`` line for the
   completed block (one line per block). For every ``(message id, kind)`` the ledger counts
   the characters that *streamed* and the characters that were *delivered* by ``assistant``
   lines, and it has emitted ``max(streamed, delivered)`` characters. A delta or an assistant
   block emits only the part that takes its counter past what was already emitted. So:

   * streamed, then the ``assistant`` line: the line emits nothing (or, if some deltas never
     came, exactly the missing tail);
   * not streamed (no ``--include-partial-messages``): the ``assistant`` line emits the text
     once;
   * any order, drops, repeated lines: a message never emits more text than its longest
     account (a repeated delta counts again: ``stream_event`` lines are not checked for
     duplicates, see "Duplicates" in :mod:`adapter.translate`).

2. **Every memory is bounded** (least recently used entries are forgotten), so a long
   session does not grow without limit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ("BoundedMap", "BoundedSet", "SeenIds", "TextLedger")

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

TextKind = Literal["text", "thinking"]


class BoundedMap(Generic[K, V]):
    """A dict that forgets its least recently set entries past ``limit``."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 1)
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value for ``key`` or ``default``."""
        return self._data.get(key, default)

    def set(self, key: K, value: V) -> None:
        """Store ``value`` (refreshing the key's age) and forget the oldest past the limit."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._limit:
            self._data.popitem(last=False)

    def pop(self, key: K) -> V | None:
        """Remove and return the value for ``key`` (``None`` when absent)."""
        return self._data.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        self._data.clear()

    def keys(self) -> list[K]:
        """The keys, least recently set first."""
        return list(self._data)

    def values(self) -> list[V]:
        """The values, least recently set first."""
        return list(self._data.values())

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)


class BoundedSet(Generic[K]):
    """A set that remembers at least its ``limit`` newest members (at most twice as many).

    Two generations instead of an insertion-ordered ring: adding is one or two set lookups
    and one insert, with no per-member bookkeeping (it runs once per CLI line). When the
    new generation is full it becomes the old one and the previous old one is forgotten.
    """

    __slots__ = ("_limit", "_new", "_old")

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 1)
        self._new: set[K] = set()
        self._old: set[K] = set()

    def add(self, key: K) -> bool:
        """Add ``key``; return ``False`` if it was already there."""
        new = self._new
        if key in new or key in self._old:
            return False
        new.add(key)
        if len(new) >= self._limit:
            self._old, self._new = new, set()
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._new or key in self._old

    def __len__(self) -> int:
        return len(self._new) + len(self._old)


class SeenIds:
    """The uuids of recent lines (at least ``limit``), to drop a line seen before.

    Remembered by their hash, not the string: a 64-bit ``int`` costs less than half the
    memory of a 36-character uuid string (a session otherwise keeps thousands of them,
    hundreds of KiB), and the string's hash is already computed and cached when it is
    decoded. Two different uuids have the same 64-bit hash with probability about 2**-64.
    """

    __slots__ = ("_hashes",)

    def __init__(self, limit: int) -> None:
        self._hashes: BoundedSet[int] = BoundedSet(limit)

    def add(self, uuid: str) -> bool:
        """Add ``uuid``; return ``False`` if it was seen before."""
        return self._hashes.add(hash(uuid))

    def __contains__(self, uuid: object) -> bool:
        return isinstance(uuid, str) and hash(uuid) in self._hashes

    def __len__(self) -> int:
        return len(self._hashes)


def _tail(text: str, fresh: int) -> str:
    return text[len(text) - fresh :] if fresh > 0 else ""


@dataclass
class _Counts:
    streamed: int = 0
    delivered: int = 0

    @property
    def emitted(self) -> int:
        return max(self.streamed, self.delivered)


class TextLedger:
    """Rule 1: how much text of each ``(message id, kind)`` was emitted, and what to emit next."""

    def __init__(self, limit: int = 512) -> None:
        self._counts: BoundedMap[tuple[str, TextKind], _Counts] = BoundedMap(limit)
        # Deltas of one message come in runs: remember the last entry to skip the map (its
        # id and kind apart: no key tuple is built for a hit).
        self._last_id: str | None = None
        self._last_kind: str = ""
        self._last: _Counts = _Counts()

    def _get(self, message_id: str, kind: TextKind) -> _Counts:
        if message_id == self._last_id and kind == self._last_kind:
            return self._last
        key = (message_id, kind)
        counts = self._counts.get(key)
        if counts is None:
            counts = _Counts()
        self._counts.set(key, counts)
        self._last_id = message_id
        self._last_kind = kind
        self._last = counts
        return counts

    def streamed(self, message_id: str, kind: TextKind, text: str) -> str:
        """A delta arrived: return the part of ``text`` to emit (``""`` when already shown)."""
        counts = self._get(message_id, kind)
        before = max(counts.streamed, counts.delivered)
        counts.streamed += len(text)
        return _tail(text, max(counts.streamed, counts.delivered) - before)

    def delivered(self, message_id: str, kind: TextKind, text: str) -> str:
        """An ``assistant`` block arrived: return what of ``text`` was not shown yet."""
        counts = self._get(message_id, kind)
        before = counts.emitted
        counts.delivered += len(text)
        return _tail(text, counts.emitted - before)
