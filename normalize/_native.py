"""Compiled or pure: which implementation of the adapter's hot modules Python imports.

A wheel built by the project's build hook (``hatch_build.py``: mypyc through hatch-mypyc)
holds, next to the ``.py`` sources of the modules listed in ``pyproject.toml``, extension
modules compiled from them, and a record of the sources they were compiled from
(:data:`BUILD_RECORD`: module name -> SHA-256 of its source). Python imports an extension
module before a ``.py`` file of the same name; this module, imported by :mod:`normalize` and
:mod:`adapter` before any of those modules, decides first:

* no record (a pure build: no compiler, or ``CLAUDECODE_BRIDGE_PURE=1`` while building):
  there is nothing compiled; the sources are imported as always.
* ``CLAUDECODE_BRIDGE_PURE=1`` in the environment: the sources of every compiled module
  (same behaviour, slower), e.g. to compare or to debug with Python tools.
* a source that differs from the one compiled (an editable install whose ``.py`` was edited
  after the build; ``pip install -e .`` again compiles it anew): the sources of *every*
  compiled module, never a stale extension. All or none: compiled modules call each other
  directly, so one stale module would still run its old code through the others.
* otherwise the compiled modules.

:func:`native_state` says which was chosen and why. This module itself is never compiled.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Final, Literal

__all__ = (
    "BUILD_RECORD",
    "decide",
    "digest",
    "native_state",
    "NativeState",
    "PURE_ENV",
    "restore_class_doc",
    "source_of",
)

#: Set to ``1`` to import the pure-Python modules even when compiled ones are installed (and,
#: while building a wheel, to build none).
PURE_ENV: Final = "CLAUDECODE_BRIDGE_PURE"
#: Written by the build hook next to this module: ``{"modules": {name: sha256 of source}}``.
BUILD_RECORD: Final = Path(__file__).with_name("_native_build.json")
_ROOT: Final = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class NativeState:
    """Which implementation of the compiled modules is imported, and why."""

    mode: Literal["compiled", "pure"]
    #: ``not-built`` (no record), ``requested`` (:data:`PURE_ENV`), ``stale`` (a source
    #: changed since the build) or ``built`` (the compiled modules are used).
    reason: Literal["not-built", "requested", "stale", "built"]
    #: The modules the build compiled (empty when nothing was).
    modules: tuple[str, ...]
    #: The modules whose source differs from the one compiled.
    stale: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for people (``claudecode-bridge doctor``): which, and what to do."""
        if self.mode == "compiled":
            return f"compiled ({len(self.modules)} modules)"
        if self.reason == "requested":
            return f"pure Python ({PURE_ENV}=1)"
        if self.reason == "stale":
            changed = ", ".join(self.stale)
            return (
                f"pure Python: changed since the build: {changed}; "
                "install again (pip install -e .) to compile them"
            )
        return (
            "pure Python: this install compiled nothing (no C compiler, or the build "
            "failed); the adapter runs, slower; install again with a compiler to compile it"
        )


def source_of(module: str, root: Path = _ROOT) -> Path:
    """The ``.py`` file of ``module`` (a dotted name) under ``root``."""
    return root.joinpath(*module.split(".")).with_suffix(".py")


def digest(path: Path) -> str:
    """The SHA-256 of a file, as the build record holds it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def decide(record: Mapping[str, str] | None, root: Path, env: Mapping[str, str]) -> NativeState:
    """The choice described in the module documentation, for a build record under ``root``."""
    if not record:
        return NativeState("pure", "not-built", ())
    modules = tuple(sorted(record))
    if env.get(PURE_ENV) == "1":
        return NativeState("pure", "requested", modules)
    stale: list[str] = []
    for module, expected in record.items():
        try:
            actual = digest(source_of(module, root))
        except OSError:
            actual = ""
        if actual != expected:
            stale.append(module)
    if stale:
        return NativeState("pure", "stale", modules, tuple(sorted(stale)))
    return NativeState("compiled", "built", modules)


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the listed modules as their ``.py`` sources, ahead of the compiled files."""

    def __init__(self, modules: Sequence[str], root: Path) -> None:
        self._sources = {m: source_of(m, root) for m in modules}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = self._sources.get(fullname)
        if source is None or not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def _read_record(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    modules = data.get("modules") if isinstance(data, dict) else None
    if not isinstance(modules, dict):
        return None
    return {str(k): str(v) for k, v in modules.items()}


def _choose() -> NativeState:
    state = decide(_read_record(BUILD_RECORD), _ROOT, os.environ)
    if state.mode == "pure" and state.modules:
        sys.meta_path.insert(0, _SourceFinder(state.modules, _ROOT))
    return state


_STATE: Final = _choose()


def native_state() -> NativeState:
    """Which implementation of the compiled modules this process imports, and why."""
    return _STATE


def restore_class_doc(cls: type) -> None:
    """Give a compiled class the docstring its source has (mypyc keeps none); else nothing."""
    if cls.__doc__:
        return
    try:
        tree = ast.parse(source_of(cls.__module__).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                setattr(cls, "__doc__", ast.get_docstring(node, clean=False))  # noqa: B010
                return
    except (OSError, SyntaxError, ValueError):
        return  # no source next to it: the class stays without a docstring
