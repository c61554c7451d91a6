"""The control plane in one namespace: what we write (:mod:`claudecode.outbound`) and the
typed results of our control requests (:mod:`claudecode.results`).

``from claudecode import control as ctl`` keeps working as before 0.2.0; the two modules it
gathers are named for what they hold.
"""

from __future__ import annotations

from ._codec import encode_message
from .outbound import *  # noqa: F403
from .outbound import OutboundMessage
from .outbound import __all__ as _outbound_all
from .results import *  # noqa: F403
from .results import __all__ as _results_all

__all__ = tuple(sorted((*_outbound_all, *_results_all, "encode_raw"), key=str.casefold))


def encode_raw(message: OutboundMessage) -> bytes:
    """Encode an outbound message as one NDJSON line (what the session writes)."""
    return encode_message(message)
