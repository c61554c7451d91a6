"""The `claudecode-bridge` command line (filled in as sub-commands land)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``claudecode-bridge`` console script."""
    print("claudecode-bridge: no commands yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
