"""The images kept for showing again: the bounded store, and a stored transcript's images
paired with the prompts its events show (a property over arbitrary content blocks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.chat import ChatView, UserEntry
from adapter.history import load_events, load_prompt_images
from adapter.images import Image
from adapter.server.ws.sent_images import SentImages

PNG = Image("image/png", "iVBORw0KGgo=")


def test_claimed_by_text_and_count_in_order() -> None:
    store = SentImages()
    store.expect("s", "look", [PNG])
    store.expect("s", "look", [PNG, PNG])
    store.expect("s", "look", [Image("image/jpeg", "AAAA")])
    assert not store.claim("s", "user:1", "other text", 1)
    assert store.claim("s", "user:2", "look", 2)
    assert store.claim("s", "user:3", "look", 1)
    assert (PNG,) == store.get("s", "user:3")
    assert store.claim("s", "user:4", "look", 1)
    assert (Image("image/jpeg", "AAAA"),) == store.get("s", "user:4")
    assert not store.claim("s", "user:5", "look", 1)  # nothing waits any more
    assert () == store.get("t", "user:2")  # per session


def test_only_drawable_types_and_bounded_in_bytes() -> None:
    store = SentImages(max_bytes=100)
    store.put("s", "user:1", [Image("text/html", "PHNjcmlwdD4="), Image("image/svg+xml", "AAAA")])
    assert () == store.get("s", "user:1")
    store.put("s", "user:2", [Image("image/png", "A" * 60)])
    store.put("s", "user:3", [Image("image/gif", "B" * 60)])  # the oldest goes
    assert () == store.get("s", "user:2") and store.get("s", "user:3")
    store.put("s", "user:4", [Image("image/png", "C" * 101)])  # larger than it all: not kept
    assert () == store.get("s", "user:4") and store.size == 60
    store.forget("s")
    assert 0 == store.size


_text = st.sampled_from(["look", "", "/compact", "<command-name>/cost</command-name>", "x"])
_image = st.builds(
    lambda t, d: {"type": "image", "source": {"type": "base64", "media_type": t, "data": d}},
    st.sampled_from(["image/png", "image/gif", "text/html"]),
    st.sampled_from(["iVBORw0KGgo=", "not base64!", ""]),
)
_block = st.one_of(
    _image,
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.just({"type": "image"}),
    st.just({"type": "tool_result", "tool_use_id": "t1", "content": "ok"}),
)
_content = st.one_of(_text, st.lists(_block, max_size=4))


@settings(max_examples=200, deadline=None)
@given(st.lists(_content, max_size=6))
def test_stored_images_pair_with_the_prompts_shown(
    tmp_path_factory: Any, contents: list[Any]
) -> None:
    path: Path = tmp_path_factory.mktemp("t") / "s.jsonl"
    lines = [
        {
            "type": "user",
            "uuid": f"u{i}",
            "sessionId": "s",
            "message": {"role": "user", "content": c},
        }
        for i, c in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    view = ChatView()
    view.apply(load_events(path))
    shown = [e.images for e in view.entries if isinstance(e, UserEntry) and e.images]
    found = load_prompt_images(path)
    # one tuple per prompt shown with images, never more images than it counts
    assert len(shown) == len(found)
    assert all(len(f) <= n for f, n in zip(found, shown, strict=True))
    assert all(i.media_type and i.data is not None for f in found for i in f)
