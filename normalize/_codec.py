"""JSON encoding and decoding of payloads."""

from __future__ import annotations

import msgspec

from .payloads import NormalizedPayload

__all__ = ("decode_payload", "encode_payload")

_encoder = msgspec.json.Encoder()
_decoder: msgspec.json.Decoder[NormalizedPayload] = msgspec.json.Decoder(NormalizedPayload)


def encode_payload(payload: NormalizedPayload) -> bytes:
    """Encode a payload as compact JSON, ``kind`` first and defaults left out.

    Raises:
        TypeError: ``Generic.input`` or ``Generic.output`` holds a value JSON cannot encode
            (it cannot when they came from decoded JSON).
    """
    return _encoder.encode(payload)


def decode_payload(data: bytes | str) -> NormalizedPayload:
    """Decode JSON produced by :func:`encode_payload` back into the payload.

    Raises:
        msgspec.DecodeError: ``data`` is not JSON.
        msgspec.ValidationError: the JSON is not a payload (unknown ``kind``, wrong field
            types).
    """
    return _decoder.decode(data)
