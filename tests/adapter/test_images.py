"""Images travel as the base64 text a front end received: checked at the edge, never decoded."""

from __future__ import annotations

import base64
import binascii

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.cluster.wire import Prompt
from adapter.images import Image, as_images


@given(st.binary(max_size=300))
def test_base64_of_any_bytes_is_taken_as_it_came(raw: bytes) -> None:
    text = base64.b64encode(raw).decode()
    image = Image.from_base64("image/png", text)
    assert text == image.data
    assert image == Image.from_bytes("image/png", raw)


@given(st.text(max_size=40))
def test_text_is_taken_exactly_when_strict_base64_decoding_would_take_it(text: str) -> None:
    try:
        binascii.a2b_base64(text.encode(), strict_mode=True)
        strict_ok = text.isascii()
    except (binascii.Error, ValueError, UnicodeEncodeError):
        strict_ok = False
    try:
        Image.from_base64("image/png", text)
        ok = True
    except ValueError:
        ok = False
    assert strict_ok == ok


@pytest.mark.parametrize("bad", ["a", "ab=", "abc", "ab==c", "ab c", "é===", "Zm9v\n"])
def test_malformed_base64_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="base64"):
        Image.from_base64("image/png", bad)


def test_bytes_and_images_mix_in_one_prompt() -> None:
    png = Image.from_base64("image/png", "iVBORw0KGgo=")
    assert [png, Image("image/gif", "R0lG")] == as_images([png, ("image/gif", b"GIF")])


def test_the_cluster_wire_carries_an_image_as_the_pair_it_always_did() -> None:
    image = Image.from_bytes("image/png", b"\x89PNG")
    wire = msgspec.json.encode(Prompt(text="look", images=[image]))
    old_peer = msgspec.json.decode(wire)
    assert [["image/png", base64.b64encode(b"\x89PNG").decode()]] == old_peer["images"]
    assert [image] == msgspec.json.decode(wire, type=Prompt).images
