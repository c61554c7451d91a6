"""Agent declarations and their discovery.

Every agent a terminal session can run is one :class:`Agent`: where to look for its program,
which arguments to pass, what to install when it is missing, and optional screen hooks (an
automatic answer to a known prompt, markers that tell busy from waiting). The shared logic
(spawning, I/O, lifecycle, the screen) lives in the session; adding an agent is a few lines.

Discovery never runs a subprocess: the caller's ``PATH`` (or the manager's search path) is
searched with :func:`shutil.which`, then the agent's absolute candidates
(``~/.claude/local/claude``, ``~/.local/bin/...``, ``/usr/local/bin/...``, ``/usr/bin/...``)
are checked for an executable file. ``PATH`` comes first so that what a user runs in their own
shell is what the bridge runs; the candidates catch servers started with a minimal ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import msgspec

__all__ = (
    "AGENTS",
    "Agent",
    "AgentStatus",
    "ScreenHook",
    "accept_claude_folder_trust",
)

#: A screen hook sees the rendered screen's lines and returns the keys to type now, or
#: ``None`` when what it waits for is not on the screen.
ScreenHook = Callable[[list[str]], bytes | None]


@dataclass(frozen=True, kw_only=True)
class Agent:
    """One agent program a terminal session can run.

    ``command`` is looked up on the search path; ``candidates`` are absolute paths (``~``
    allowed) checked afterwards. ``env_command`` names an environment variable whose value,
    when it is an executable, wins over both (the shell's ``$SHELL``). ``skip_permissions_args``
    are added when the caller asks to skip permission prompts. ``stop_signal`` is what ``stop``
    sends to the process group before the SIGKILL that follows the grace period.
    ``busy_markers`` / ``waiting_markers`` are texts that, seen on the rendered screen, mean the
    agent works / waits for an answer (else: busy while output flows, idle when it is quiet).
    ``trust_hook`` answers the agent's folder-trust prompt when the caller allows it.
    """

    name: str
    command: str
    install_hint: str
    candidates: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    skip_permissions_args: tuple[str, ...] = ()
    env: Mapping[str, str | None] = field(default_factory=dict)
    env_command: str | None = None
    stop_signal: int = signal.SIGTERM
    busy_markers: tuple[str, ...] = ()
    waiting_markers: tuple[str, ...] = ()
    trust_hook: ScreenHook | None = None

    def resolve(
        self, search_path: str | None = None, *, environ: Mapping[str, str] | None = None
    ) -> str | None:
        """The executable this agent would run, or ``None`` when it is not installed.

        ``search_path`` is a ``PATH``-style string (default: ``environ["PATH"]``).
        """
        environ = os.environ if environ is None else environ
        if self.env_command:
            value = environ.get(self.env_command, "")
            if value and os.path.isabs(value) and _is_executable(value):
                return value
        path = environ.get("PATH", os.defpath) if search_path is None else search_path
        found = shutil.which(self.command, path=path)
        if found:
            return os.path.abspath(found)
        home = environ.get("HOME") or os.path.expanduser("~")
        for candidate in self.candidates:
            expanded = home + candidate[1:] if candidate.startswith("~/") else candidate
            if _is_executable(expanded):
                return expanded
        return None

    def argv(self, executable: str, *, skip_permissions: bool = False) -> list[str]:
        """The full argument vector for ``executable``."""
        args = [executable, *self.args]
        if skip_permissions:
            args.extend(self.skip_permissions_args)
        return args


class AgentStatus(msgspec.Struct, kw_only=True, frozen=True):
    """Whether an agent can start here, and what to install when it cannot."""

    name: str
    available: bool
    path: str | None
    install_hint: str


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _bin_candidates(name: str) -> tuple[str, ...]:
    return (f"~/.local/bin/{name}", f"/usr/local/bin/{name}", f"/usr/bin/{name}")


_TRUST_CONFIRM = "Yes, I trust this folder"
_POINTERS = ("❯", ">", "›")  # noqa: RUF001 (the selection pointers TUIs draw)
_DOWN = b"\x1b[B"


def accept_claude_folder_trust(lines: list[str]) -> bytes | None:
    """Claude Code's folder-trust dialog ("Quick safety check: ... one you trust?"): move the
    selection to "Yes, I trust this folder" (the dialog focuses "No, exit" first) and press
    Enter. Returns the keys to type now, ``None`` when the dialog is not on screen."""
    confirm_row = next((i for i, line in enumerate(lines) if _TRUST_CONFIRM in line), None)
    if confirm_row is None:
        return None
    line = lines[confirm_row].lstrip(" │|")
    if line.startswith(_POINTERS):
        return b"\r"
    return _DOWN


AGENTS: Mapping[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent(
            name="claude",
            command="claude",
            candidates=("~/.claude/local/claude", *_bin_candidates("claude")),
            skip_permissions_args=("--dangerously-skip-permissions",),
            install_hint="npm install -g @anthropic-ai/claude-code",
            # A CLAUDECODE variable inherited from a surrounding Claude Code session makes
            # the CLI refuse to start as a nested session.
            env={"CLAUDECODE": None},
            busy_markers=("esc to interrupt",),
            waiting_markers=("Do you want to", "Would you like to", _TRUST_CONFIRM),
            trust_hook=accept_claude_folder_trust,
        ),
        Agent(
            name="codex",
            command="codex",
            candidates=_bin_candidates("codex"),
            skip_permissions_args=("--dangerously-bypass-approvals-and-sandbox",),
            install_hint="npm install -g @openai/codex",
            busy_markers=("esc to interrupt", "Esc to interrupt"),
            waiting_markers=("Allow command?", "Would you like to", "Press enter to continue"),
        ),
        Agent(
            name="cursor-agent",
            command="cursor-agent",
            candidates=("~/.cursor/bin/cursor-agent", *_bin_candidates("cursor-agent")),
            install_hint="curl https://cursor.com/install -fsS | bash",
        ),
        Agent(
            name="gemini",
            command="gemini",
            candidates=_bin_candidates("gemini"),
            install_hint="npm install -g @google/gemini-cli",
            busy_markers=("esc to cancel",),
            waiting_markers=("Allow execution", "Do you want to", "Do you trust the files"),
        ),
        Agent(
            name="copilot",
            command="copilot",
            candidates=_bin_candidates("copilot"),
            install_hint="npm install -g @github/copilot",
            busy_markers=("Esc to cancel",),
            waiting_markers=("Do you want to", "Do you trust the files"),
        ),
        Agent(
            name="shell",
            command="bash",
            env_command="SHELL",
            candidates=("/bin/bash", "/bin/sh"),
            install_hint="install bash or set SHELL to an interactive shell",
            # An interactive shell ignores SIGTERM; SIGHUP is what closing a terminal sends.
            stop_signal=signal.SIGHUP,
        ),
    )
}
"""The built-in agents by name."""
