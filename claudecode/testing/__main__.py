"""``python -m claudecode.testing [real CLI argv]``: run the fake Claude Code CLI."""

from ._fake_cli import main

if __name__ == "__main__":
    main()
