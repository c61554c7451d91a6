"""Where the real Claude Code CLI is, and the private environment each real CLI process gets.

The CLI comes from ``CLAUDE_CODE_CLI`` when set, else from the project-local pinned install made
by ``scripts/install-claude-cli`` (``$CLAUDECODE_BRIDGE_CACHE`` or
``~/.cache/claudecode-bridge``, then ``cli-<version>/node_modules/.bin/claude``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = (
    "DEFAULT_CLI_VERSION",
    "INSTALL_HINT",
    "STREAM_JSON_ARGS",
    "CLIEnv",
    "find_real_cli",
    "pinned_install_path",
)

DEFAULT_CLI_VERSION = "2.1.332"
"""The CLI version the project pins (override with ``CLAUDE_CODE_CLI_VERSION``)."""

INSTALL_HINT = (
    "install the pinned CLI with `scripts/install-claude-cli`, "
    "or point CLAUDE_CODE_CLI at a `claude` executable"
)

STREAM_JSON_ARGS: tuple[str, ...] = (
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
    "--include-partial-messages",
)
"""The base argv (after the executable) for a stream-json session with permission prompts."""

_MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"


def pinned_install_path() -> Path:
    """Where ``scripts/install-claude-cli`` puts ``claude`` (same variables, same defaults)."""
    version = os.environ.get("CLAUDE_CODE_CLI_VERSION") or DEFAULT_CLI_VERSION
    cache = os.environ.get("CLAUDECODE_BRIDGE_CACHE") or str(
        Path.home() / ".cache" / "claudecode-bridge"
    )
    return Path(cache) / f"cli-{version}" / "node_modules" / ".bin" / "claude"


def find_real_cli() -> tuple[Path | None, str]:
    """Return ``(path, "")`` for the CLI to test, or ``(None, reason)`` when there is none.

    ``CLAUDE_CODE_CLI`` wins when set; it is an error (reported as the reason) if it does not
    name an executable file.
    """
    explicit = os.environ.get("CLAUDE_CODE_CLI")
    if explicit:
        path = Path(explicit)
        if path.is_file() and os.access(path, os.X_OK):
            return path, ""
        return None, f"CLAUDE_CODE_CLI={explicit} is not an executable file"
    path = pinned_install_path()
    if path.is_file() and os.access(path, os.X_OK):
        return path, ""
    return None, f"no Claude Code CLI at {path}: {INSTALL_HINT}"


@dataclass(frozen=True)
class CLIEnv:
    """Private directories and environment for the real CLI processes of one test.

    Call it to get the environment mapping: ``env = cli_env()`` or, with overrides,
    ``cli_env(CLAUDE_CODE_MAX_RETRIES="1", SOME_VAR=None)`` (``None`` removes a variable).
    Every call uses the same ``home``/``cwd``/``tmpdir``, so a second process (``--resume``)
    sees the first one's session files. Start the process with ``cwd=cli_env.cwd``.
    """

    home: Path
    """Fresh empty ``HOME`` (the CLI writes ``.claude.json`` and ``.claude/`` here)."""
    cwd: Path
    """Fresh empty working directory for the CLI process."""
    tmpdir: Path
    """``CLAUDE_CODE_TMPDIR`` (task outputs, the messaging socket)."""
    base_url: str
    """``ANTHROPIC_BASE_URL``: the fake API."""
    proxy_url: str
    """``HTTPS_PROXY``/``HTTP_PROXY``: the refusing proxy."""

    @classmethod
    def create(cls, root: Path, *, base_url: str, proxy_url: str) -> CLIEnv:
        """Make ``root/home``, ``root/work`` and ``root/cctmp`` and describe them."""
        dirs = [root / "home", root / "work", root / "cctmp"]
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
        return cls(dirs[0], dirs[1], dirs[2], base_url, proxy_url)

    def __call__(self, **overrides: str | None) -> dict[str, str]:
        """The environment for one CLI process (built from scratch, nothing inherited)."""
        env = {
            "HOME": str(self.home),
            "PATH": _MINIMAL_PATH,
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_TMPDIR": str(self.tmpdir),
            "CLAUDE_CODE_MAX_RETRIES": "3",
            "HTTPS_PROXY": self.proxy_url,
            "HTTP_PROXY": self.proxy_url,
            "https_proxy": self.proxy_url,
            "http_proxy": self.proxy_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        for name, value in overrides.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env
