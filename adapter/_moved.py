"""Old import paths of modules that moved in 0.2.0, kept working for one minor version.

Importing an old path (``adapter.agui``, ``adapter.ws.protocol``, ``adapter.serve``, ...)
imports the module where it lives now, binds it under the old name too and warns with a
:class:`DeprecationWarning` naming the new path; the CHANGELOG lists the moves. One finder
serves every old path, submodules included, so nothing of the old layout is left on disk.
Names that moved out of a package that stayed (``adapter.chat``'s history functions) go
through :func:`moved_names`, a module ``__getattr__``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ("MOVED_MODULES", "install", "moved_names")

#: Old module path -> new module path; an old package's submodules move with it.
MOVED_MODULES: dict[str, str] = {
    "adapter.agui": "adapter.server.agui",
    "adapter.ws": "adapter.server.ws",
    "adapter.webui": "adapter.server.webui",
    "adapter.serve": "adapter.commands.serve",
    "adapter.cli_run": "adapter.commands.run",
    "adapter.terminal": "adapter.commands.run_render",
    "adapter.demo": "adapter.commands.demo",
    "adapter.acp.command": "adapter.commands.acp",
    "adapter.cluster.cli_worker": "adapter.commands.worker",
    "adapter.chat.history": "adapter.history.transcripts",
    "adapter.chat.history_events": "adapter.history.events",
    "adapter.chat.history_index": "adapter.history.index",
    "adapter.chat.usertext": "adapter.history.usertext",
}


def new_name(old: str) -> str | None:
    """Where the module once imported as ``old`` lives now (``None``: it did not move)."""
    for prefix, target in MOVED_MODULES.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix) :]
    return None


def _warn(old: str, new: str) -> None:
    warnings.warn(
        f"{old} moved to {new} in claudecode-bridge 0.2.0; the old path goes in 0.3.0",
        DeprecationWarning,
        stacklevel=3,
    )


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self._new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self._new)
        module = importlib.import_module(self._new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module ran where it lives now. The import system has just set its
        ``__spec__`` to the old name's (it does so for whatever module ``create_module``
        returns): put its own back, or its relative imports would see a ``__spec__.parent``
        that is not its ``__package__`` (an ImportWarning) and reloads would go astray."""
        if self._spec is not None:
            module.__spec__ = self._spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the old paths' finder on ``sys.meta_path`` once.

    First, not last: once an old package's alias is imported, its ``__path__`` is the new
    package's, and the path finder would load ``adapter.ws.protocol`` from there a second time
    as a separate module. It answers only for the old names.
    """
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())


def moved_names(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that moved from ``package`` to other modules."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        _warn(f"{package}.{name}", f"{module}.{name}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
