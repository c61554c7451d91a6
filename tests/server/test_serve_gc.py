"""The collector set-up ``claudecode-bridge serve`` applies before it serves."""

from __future__ import annotations

import gc

from adapter.serve import SERVE_GC_THRESHOLDS, tune_collector


def test_tune_collector_freezes_what_is_alive_and_makes_full_passes_rare() -> None:
    before = gc.get_threshold()
    try:
        alive = object.__new__(type("Alive", (), {}))
        tune_collector()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == SERVE_GC_THRESHOLDS
        # Young passes as usual, the full one far rarer than the interpreter's default.
        assert SERVE_GC_THRESHOLDS[0] <= before[0] * 2
        assert SERVE_GC_THRESHOLDS[2] > before[2] * 10
        assert not any(alive is o for o in gc.get_objects())  # frozen: no collector sees it
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
