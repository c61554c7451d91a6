"""Terminal tests need Linux pseudo-terminals and /proc."""

from __future__ import annotations

import sys

import pytest

if not sys.platform.startswith("linux"):
    pytest.skip("terminal tests use Linux ptys and /proc", allow_module_level=True)
