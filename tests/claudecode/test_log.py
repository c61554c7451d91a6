"""Library logging: silent on stdout when unconfigured, captured when asked, cheap when off."""

from __future__ import annotations

import logging
import subprocess
import sys

import structlog

from claudecode._log import get_logger


def test_unconfigured_logging_prints_nothing_on_stdout() -> None:
    """A host that speaks on stdout is never disturbed by our debug/info lines."""
    code = (
        "from claudecode._log import get_logger\n"
        "log = get_logger('claudecode.test')\n"
        "log.debug('x.debug', a=1); log.info('x.info'); log.warning('x.warning')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert b"" == done.stdout
    assert b"x.warning" in done.stderr
    assert b"x.debug" not in done.stderr


def test_events_reach_structlog_capture() -> None:
    """With the level enabled, events keep their structure (structlog.testing)."""
    logging.getLogger("claudecode.captured").setLevel(logging.DEBUG)
    with structlog.testing.capture_logs() as logs:
        get_logger("claudecode.captured").debug("thing.happened", request_id="r1")
    assert [{"event": "thing.happened", "request_id": "r1", "log_level": "debug"}] == logs


def test_disabled_levels_skip_the_processors() -> None:
    """Below the logger's level no processor runs (capture_logs sees nothing)."""
    logging.getLogger("claudecode.quiet").setLevel(logging.WARNING)
    with structlog.testing.capture_logs() as logs:
        get_logger("claudecode.quiet").debug("dropped")
        get_logger("claudecode.quiet").info("dropped too")
    assert [] == logs


def test_a_copied_logger_still_logs() -> None:
    """The level-checking wrapper survives copy (no recursion on its unset slots)."""
    import copy

    logging.getLogger("claudecode.copied").setLevel(logging.DEBUG)
    with structlog.testing.capture_logs() as logs:
        copy.copy(get_logger("claudecode.copied")).info("still.here", n=1)
    assert [{"event": "still.here", "n": 1, "log_level": "info"}] == logs
