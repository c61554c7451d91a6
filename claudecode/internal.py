"""What the rest of this distribution (``adapter``, ``normalize``) shares with the client.

Not public API: these names may change in any release, together with the packages of this
distribution that use them. Programs use :mod:`claudecode`. Everything here lives in a private
module of :mod:`claudecode`; this module is the one door the other packages go through, so a
private module can be reorganised without touching them.
"""

from __future__ import annotations

from ._child_exit import ChildExit
from ._discovery import INSTALL_HINT
from ._log import get_logger
from ._proc_environ import pids_with_env
from ._stream_lite import (
    LiteInbound,
    StreamEventLite,
    decode_line_lite,
    decode_small_line_lite,
    use_lite_stream_events,
)
from ._tasks import TaskSet

__all__ = (
    "ChildExit",
    "decode_line_lite",
    "decode_small_line_lite",
    "get_logger",
    "INSTALL_HINT",
    "LiteInbound",
    "pids_with_env",
    "StreamEventLite",
    "TaskSet",
    "use_lite_stream_events",
)
