"""What a long-running command process sets up for itself (``serve`` and ``worker``)."""

from __future__ import annotations

import gc

__all__ = ("SERVE_GC_THRESHOLDS", "tune_collector")

#: The cyclic collector's thresholds while serving (see :func:`tune_collector`): the
#: interpreter's defaults (700, 10, 10) but a full pass after 1000 middle ones, not 10.
SERVE_GC_THRESHOLDS = (700, 10, 1000)


def tune_collector() -> None:
    """Set up the cyclic garbage collector for a long-running server (entry points only).

    What is alive now (modules, classes, the app and its routes) lives as long as the
    process: :func:`gc.freeze` keeps it out of every collection. And full passes become rare:
    each walks every object the sessions hold (~90k at 50 sessions) and stalls every stream
    for 15-20 ms, and at thousands of deltas a second one pass in a turn is the p99. The
    young generations still run as usual (each pass short), and reference counting frees
    almost everything; only cyclic garbage that reached the oldest generation waits longer.
    """
    gc.freeze()
    gc.set_threshold(*SERVE_GC_THRESHOLDS)
