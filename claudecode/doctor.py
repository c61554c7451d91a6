"""``claudecode-bridge doctor``: is the Claude Code CLI here, and does it speak stream-json?"""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from ._discovery import find_cli
from .errors import ClaudeCodeError
from .options import ClaudeCodeOptions
from .session import Session

__all__ = ("DoctorReport", "diagnose")


@dataclass
class DoctorReport:
    """What :func:`diagnose` found; ``ok`` is true when the CLI is usable."""

    ok: bool = False
    path: str | None = None
    version: str | None = None
    problem: str | None = None
    details: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """A human-readable report, one finding per line."""
        out = [f"CLI path:    {self.path or '-'}", f"CLI version: {self.version or '-'}"]
        out += [f"{key + ':':<12} {value}" for key, value in self.details.items()]
        out.append("status:      " + ("usable" if self.ok else f"NOT usable: {self.problem}"))
        return out


async def diagnose(cli_path: str | None = None, *, timeout: float = 30.0) -> DoctorReport:
    """Find the CLI, read its version, and run ``initialize`` over stream-json, then close."""
    report = DoctorReport()
    try:
        report.path = find_cli(cli_path)
    except ClaudeCodeError as exc:
        report.problem = str(exc)
        return report
    try:
        done = await anyio.run_process([report.path, "--version"], check=False)
    except OSError as exc:
        report.problem = f"could not run {report.path} --version: {exc}"
        return report
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        report.problem = f"`{report.path} --version` exited with {done.returncode}: {stderr}"
        return report
    report.version = done.stdout.decode("utf-8", "replace").strip()
    options = ClaudeCodeOptions(
        cli_path=report.path, spawn_timeout=timeout, control_timeout=timeout
    )
    try:
        with anyio.fail_after(timeout + 10):
            async with Session(options) as session:
                init = session.initialize_result
                if init is not None:
                    report.details["mode"] = str(init.current_permission_mode or "-")
                    report.details["commands"] = str(len(init.commands or []))
                report.details["stream-json"] = "initialize answered"
    except (ClaudeCodeError, TimeoutError) as exc:
        report.problem = f"the CLI did not complete initialize over stream-json: {exc}"
        return report
    report.ok = True
    return report
