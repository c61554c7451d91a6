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
   * any order, duplicates, drops: a message never emits more text than its longest account.

2. **Every memory is bounded** (least recently used entries are forgotten), so a long
   session does not grow without limit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, Literal, TypeVar

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
    """A set that remembers at least its ``limit`` newest members (at most about twice as
    many: twice plus one batch with :meth:`add_fresh`).

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

    def add_fresh(self, keys: set[K]) -> bool:
        """Add all of ``keys`` if none is there yet; else add nothing and return ``False``."""
        new = self._new
        if not (keys.isdisjoint(new) and keys.isdisjoint(self._old)):
            return False
        new |= keys
        if len(new) >= self._limit:
            self._old, self._new = new, set()
        return True

    def add_all(self, keys: list[K], ignore: K | None = None) -> bool:
        """:meth:`add_fresh` of a list (no set to build first): add every key of ``keys`` if
        none is there yet and none repeats; else add nothing and return ``False``.
        ``ignore`` (when given) is never remembered, and may repeat in ``keys``."""
        new = self._new
        if not (new.isdisjoint(keys) and self._old.isdisjoint(keys)):
            return False
        before = len(new)
        new.update(keys)
        added = len(new) - before
        if ignore is not None and ignore in new:
            new.discard(ignore)
            added -= 1
            if added + keys.count(ignore) != len(keys):
                new.difference_update(keys)  # none of them was there before: undone
                return False
        elif added != len(keys):
            new.difference_update(keys)  # a key repeats in ``keys``; none was there before
            return False
        if len(new) >= self._limit:
            self._old, self._new = new, set()
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._new or key in self._old

    def __len__(self) -> int:
        return len(self._new) + len(self._old)


_NONE_HASH = hash(None)
_UUID = attrgetter("uuid")


class SeenIds:
    """The uuids of the recent lines (at least ``limit``), to drop a line seen before.

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

    def add_batch(self, messages: list[Any]) -> bool:
        """:meth:`add_distinct` of the ``uuid`` attributes of ``messages``.

        Raises ``AttributeError`` (or ``TypeError`` for an unhashable uuid) when a message
        has none: the caller then checks one by one.
        """
        return self._hashes.add_all(list(map(hash, map(_UUID, messages))), _NONE_HASH)

    def add_distinct(self, uuids: list[str | None]) -> bool:
        """Add every uuid of ``uuids`` (``None`` is skipped) if none was seen and none repeats.

        Returns ``False``, adding nothing, otherwise: the caller then adds them one by one.
        A few C-level set operations for a whole batch instead of a Python call per line
        (the CLI's lines all have distinct uuids, except after a replay).
        """
        fresh = set(map(hash, uuids))
        if len(fresh) != len(uuids):  # a uuid repeats, or several lines have none
            nones = uuids.count(None)
            if nones < 2 or len(fresh) + nones - 1 != len(uuids):
                return False
        fresh.discard(_NONE_HASH)
        return self._hashes.add_fresh(fresh)

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
        # Deltas of one message come in runs: remember the last entry to skip the map.
        self._last_key: tuple[str, TextKind] | None = None
        self._last: _Counts = _Counts()

    def _get(self, message_id: str, kind: TextKind) -> _Counts:
        key = (message_id, kind)
        if key == self._last_key:
            return self._last
        counts = self._counts.get(key)
        if counts is None:
            counts = _Counts()
        self._counts.set(key, counts)
        self._last_key = key
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
