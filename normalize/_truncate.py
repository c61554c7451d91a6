"""Cut text to a byte budget without splitting a UTF-8 sequence."""

from __future__ import annotations

__all__ = ("DEFAULT_MAX_OUTPUT_BYTES", "truncate_text")

DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
"""Default cap, in UTF-8 bytes, on each output text a payload keeps."""


def truncate_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """Return ``text`` cut to at most ``max_bytes`` UTF-8 bytes, and whether it was cut.

    The cut falls on a character boundary. Lone surrogates (which JSON can carry) count as
    three bytes, as ``surrogatepass`` encodes them.
    """
    limit = max(max_bytes, 0)
    if len(text) * 4 <= limit:  # no character is longer than 4 bytes
        return text, False
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, False
    cut = limit
    # Back up over continuation bytes (0b10xxxxxx) to the start of the cut character.
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass"), True
