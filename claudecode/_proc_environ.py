"""Finding processes by a variable in their environment (Linux ``/proc/<pid>/environ``).

A process's descendants inherit its environment, even those that leave its process group or
session on purpose (a daemon's ``setsid`` and double fork), so a random value put there marks
everything a program started. Two sweeps rely on it: a terminal session's (the helpers its
program detached) and a cluster worker's watchdog (the CLIs of a worker that was killed).
A program started with an environment of its own making (``env -i``) escapes the mark.

Standard library only: the worker's watchdog runs without the rest of the bridge and loads
this file by its path (:mod:`adapter.cluster._reaper`).
"""

from __future__ import annotations

import os

__all__ = ("pids_with_env",)


def pids_with_env(name: str, value: str, *, proc: str = "/proc") -> list[int]:
    """The pids of the processes whose environment holds exactly ``name=value``.

    Never this process. A process that is gone meanwhile, or whose environment we may not
    read, is not listed; without ``/proc`` (not Linux) the list is empty.
    """
    needle = f"{name}={value}".encode()
    own = os.getpid()
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    found: list[int] = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            with open(os.path.join(proc, entry, "environ"), "rb") as fh:
                variables = fh.read().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if needle in variables:
            found.append(int(entry))
    return found
