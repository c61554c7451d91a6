"""``python -m adapter``: the ``claudecode-bridge`` command line (:mod:`adapter.commands`)."""

from __future__ import annotations

from .commands.main import main

if __name__ == "__main__":
    raise SystemExit(main())
