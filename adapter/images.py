"""Images of a prompt as they travel: base64 text, as a front end received it.

A front end receives base64 (WebSocket frames, AG-UI messages, ACP content blocks) and the
CLI wants base64: an :class:`Image` keeps the text it was given and is decoded nowhere on
the way, through a backend and across the cluster's wire (where it encodes as the
``[media type, base64]`` pair the wire always carried). Its alphabet and padding are checked
once, where it comes in (:meth:`Image.from_base64`), without decoding it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

import msgspec

__all__ = ("Image", "PromptImages", "as_images")

#: Standard base64, padded: what every front end's protocol specifies.
_BASE64 = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


class Image(msgspec.Struct, frozen=True, array_like=True):
    """One image: its media type (``image/png`` ...) and its data as base64 text."""

    media_type: str
    data: str

    @classmethod
    def from_base64(cls, media_type: str, data: str) -> Image:
        """An image from base64 text as received (checked, not decoded).

        Raises:
            ValueError: ``data`` is not padded standard base64.
        """
        if not data.isascii() or _BASE64.fullmatch(data.encode("ascii")) is None:
            raise ValueError("not padded standard base64")
        return cls(media_type, data)

    @classmethod
    def from_bytes(cls, media_type: str, raw: bytes) -> Image:
        """An image from its bytes (encoded once, here)."""
        return cls(media_type, base64.b64encode(raw).decode("ascii"))

    def content_block(self) -> dict[str, object]:
        """The Messages API content block the CLI takes."""
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": self.media_type, "data": self.data},
        }


#: What ``prompt(images=...)`` takes: :class:`Image`\ s, or ``(media type, bytes)`` pairs.
PromptImages = Iterable[Image | tuple[str, bytes]]


def as_images(images: PromptImages) -> list[Image]:
    """Every image as an :class:`Image` (bytes encoded once; images passed as they are)."""
    return [i if isinstance(i, Image) else Image.from_bytes(*i) for i in images]
