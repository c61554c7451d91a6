"""The uvicorn and collector set-up ``claudecode-bridge serve`` applies before it serves."""

from __future__ import annotations

import gc

from adapter.commands._process import SERVE_GC_THRESHOLDS, tune_collector


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


def test_serve_runs_h11_whatever_else_is_installed() -> None:
    """uvicorn would pick httptools when something installed it; ``serve`` does not."""
    from adapter.commands.serve import uvicorn_config

    async def app(scope: object, receive: object, send: object) -> None:
        raise AssertionError("never called")

    config = uvicorn_config(app)
    assert "h11" == config.http
    assert config.server_header is False
