"""The examples run (against the built-in stand-in) and show what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("client_quickstart.py", "-- success"),
        ("event_stream.py", "You chose Formal"),
        ("sdk_dropin.py", "You chose Formal"),
    ],
)
def test_example_runs_with_the_demo(name: str, expected: str, tmp_path: Path) -> None:
    """Each example completes its turn against the scripted stand-in."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--demo"],
        capture_output=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert 0 == done.returncode, done.stderr.decode()
    assert expected in done.stdout.decode()
