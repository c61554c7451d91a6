"""Create a JetStream stream once, without asking the server to create it again.

Several processes (workers, gateways) start at once and each makes sure the streams exist.
Asking the server to add a stream that already exists is not harmless: nats-server checks
the account's storage for the stream's ``max_bytes`` reservation *before* it notices that
the stream is there with the same configuration, so once the reservations have used most of
the JetStream store (by default 75% of the free disk), the second process's ``add_stream``
fails with "insufficient storage resources" although there is nothing to create, and that
process never starts. So: look the stream up first, add it only when it is missing, and
update it only when its limits differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from nats.js import api
    from nats.js.client import JetStreamContext

__all__ = ("ensure_stream",)

#: The settings compared with an existing stream: what an update changes.
_COMPARED = (
    "subjects",
    "max_age",
    "max_bytes",
    "max_msg_size",
    "num_replicas",
    "duplicate_window",
    "allow_direct",
    "discard",
)


def _differs(current: api.StreamConfig, wanted: api.StreamConfig) -> bool:
    for name in _COMPARED:
        want, have = getattr(wanted, name), getattr(current, name)
        if want is None:
            continue
        if isinstance(want, float) and isinstance(have, float | int):
            if abs(want - have) > 1e-6:  # seconds from the server's nanoseconds
                return True
        elif want != have:
            return True
    return False


async def ensure_stream(js: JetStreamContext, stream: api.StreamConfig) -> None:
    """Create ``stream`` if it is missing, update it if its limits differ, else nothing."""
    from nats.js.errors import APIError, NotFoundError

    assert stream.name is not None
    try:
        info = await js.stream_info(stream.name)
    except NotFoundError:
        try:
            await js.add_stream(stream)
            return
        except APIError:
            # Another process may have created it meanwhile (the add then fails with a
            # different configuration, or for storage as above): use theirs, else re-raise.
            try:
                info = await js.stream_info(stream.name)
            except NotFoundError:
                pass
            else:
                if _differs(info.config, stream):
                    await js.update_stream(stream)
                return
            raise
    if _differs(info.config, stream):
        await js.update_stream(stream)
