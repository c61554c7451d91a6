"""What a leniently decoded message carries: the raw line and the repairs made to read it."""

from __future__ import annotations

import msgspec

__all__ = ("LENIENT_KEY", "Lenient")

#: The key of the ``lenient`` field: one the CLI never writes.
LENIENT_KEY = "__lenient__"


class Lenient(msgspec.Struct, frozen=True, kw_only=True):
    """Set as ``message.lenient`` when a line only decoded after repairs (else ``None``).

    A field of the wrong type was dropped (the message shows its default), a missing
    required field was filled with the zero value of its type; ``repairs`` says which, in
    msgspec's path notation. ``raw`` is the whole line as the CLI wrote it, so nothing is lost.
    """

    raw: bytes
    repairs: tuple[str, ...] = ()
