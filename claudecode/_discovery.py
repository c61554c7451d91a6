"""Finding the Claude Code executable."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import CLINotFoundError

__all__ = ("INSTALL_HINT", "candidate_paths", "find_cli")

INSTALL_HINT = (
    "Install it with `npm install -g @anthropic-ai/claude-code` (or see "
    "https://docs.claude.com/en/docs/claude-code), or point CLAUDE_CODE_CLI at the executable."
)


def _npm_global_bin() -> Path | None:
    prefix = os.environ.get("NPM_CONFIG_PREFIX")
    if not prefix and shutil.which("npm"):
        try:
            done = subprocess.run(
                ["npm", "prefix", "-g"], capture_output=True, text=True, timeout=5, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        prefix = done.stdout.strip() if done.returncode == 0 else None
    return Path(prefix) / "bin" / "claude" if prefix else None


def candidate_paths() -> list[str]:
    """The usual install locations, in the order they are tried after env and PATH."""
    home = Path.home()
    places = [
        home / ".claude" / "local" / "claude",
        home / ".local" / "bin" / "claude",
        Path("/usr/local/bin/claude"),
        Path("/usr/bin/claude"),
    ]
    npm_bin = _npm_global_bin()
    if npm_bin is not None:
        places.append(npm_bin)
    return [str(p) for p in places]


def _usable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_cli(explicit: str | os.PathLike[str] | None = None) -> str:
    """Return the path of the Claude Code CLI.

    Tried in order: ``explicit``, the ``CLAUDE_CODE_CLI`` environment variable, ``claude`` on
    ``PATH``, then the usual install locations (``~/.claude/local/claude``,
    ``~/.local/bin/claude``, ``/usr/local/bin/claude``, ``/usr/bin/claude``, the npm global bin).

    Raises:
        CLINotFoundError: nothing usable was found; ``searched`` names every place tried.
    """
    searched: list[str] = []
    if explicit is not None:
        path = os.fspath(explicit)
        resolved = shutil.which(path) if os.sep not in path else path
        if resolved and _usable(resolved):
            return resolved
        raise CLINotFoundError(
            f"the Claude Code CLI given as {path!r} is not an executable file", [path]
        )
    from_env = os.environ.get("CLAUDE_CODE_CLI")
    if from_env:
        searched.append(f"$CLAUDE_CODE_CLI={from_env}")
        if _usable(from_env):
            return from_env
    on_path = shutil.which("claude")
    searched.append("claude on PATH")
    if on_path:
        return on_path
    for place in candidate_paths():
        searched.append(place)
        if _usable(place):
            return place
    raise CLINotFoundError(
        "the Claude Code CLI was not found; searched: " + ", ".join(searched) + ". " + INSTALL_HINT,
        searched,
    )
