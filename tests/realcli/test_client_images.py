"""Real CLI: image content blocks in a stream-json user message reach the Messages API."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from claudecode import ResultMessage
from claudecode.session import Session
from tests.support.timeouts import HANG_GUARD

from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def test_image_block_is_forwarded_to_the_api(
    cli_options: Any, fake_api: FakeAnthropicAPI
) -> None:
    """The CLI accepts base64 image blocks on stdin and sends them on to the model."""
    fake_api.add_main(text_turn("a tiny transparent square"))
    image = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(PNG).decode(),
        },
    }
    with anyio.fail_after(HANG_GUARD):
        async with Session(cli_options()) as session:
            await session.send([image, {"type": "text", "text": "what is this?"}])
            result = [m async for m in session.receive_response()][-1]
    assert isinstance(result, ResultMessage)
    assert not result.is_error
    [request] = fake_api.main_requests()
    user = [m for m in request.body["messages"] if m["role"] == "user"][-1]
    blocks = [b for b in user["content"] if isinstance(b, dict)]
    images = [b for b in blocks if b.get("type") == "image"]
    assert 1 == len(images)
    assert "image/png" == images[0]["source"]["media_type"]
    assert base64.b64encode(PNG).decode() == images[0]["source"]["data"]
