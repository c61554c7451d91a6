"""Build hook: compile the adapter's per-line hot path with mypyc (through hatch-mypyc).

The modules listed under ``[tool.hatch.build.targets.wheel.hooks.custom]`` in
``pyproject.toml`` are compiled from the same ``.py`` sources that stay in the wheel; which
of the two Python imports is decided at run time by ``normalize/_native.py`` (from the
record of sources this hook writes next to it). On top of hatch-mypyc this hook:

* builds a pure wheel, with a warning, when there is no C compiler or no Python headers,
  and when ``CLAUDECODE_BRIDGE_PURE=1`` is set;
* writes ``normalize/_native_build.json`` (module -> SHA-256 of the compiled source), so that
  an editable install whose ``.py`` was edited after the build imports the sources instead
  of a stale extension (hatch-mypyc compiles an editable install in place);
* never hides ``pyproject.toml``: hatch-mypyc renames it for the whole compile because old
  setuptools could not read a PEP 639 licence, so an install interrupted then left the
  checkout without it. The setuptools this build requires reads it;
* names the compiled group (``GROUP``) so that mypyc's shared runtime library lands inside
  ``normalize/`` instead of at the repository root (and at the top of site-packages).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hatch_mypyc.plugin import MypycBuildHook

PURE_ENV = "CLAUDECODE_BRIDGE_PURE"
RECORD = Path("normalize") / "_native_build.json"
#: mypyc's group: its shared library is ``normalize/_compiled__mypyc.<abi>.so``.
GROUP = "normalize._compiled"


def _missing_toolchain() -> str | None:
    """Why nothing can be compiled here, or None."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    include = sysconfig.get_paths().get("include", "")
    if not Path(include, "Python.h").is_file():
        return f"no Python headers (Python.h in {include})"
    return None


class NativeBuildHook(MypycBuildHook):
    """hatch-mypyc's hook, with a pure fallback and a record of the compiled sources."""

    def _record_path(self) -> Path:
        return Path(self.root) / RECORD

    @property
    def config_options(self) -> dict[str, Any]:
        return {"group_name": GROUP, **super().config_options}

    @contextlib.contextmanager
    def hide_project_file(self) -> Iterator[None]:
        """Leave ``pyproject.toml`` where it is (see the module docstring)."""
        yield

    def _shared_library(self) -> list[Path]:
        package, name = GROUP.rsplit(".", 1)
        return sorted(Path(self.root, package).glob(f"{name}__mypyc.*{self.compiled_extension}"))

    def get_forced_inclusion_map(self) -> dict[str, str]:
        mapping: dict[str, str] = super().get_forced_inclusion_map()
        for path in self._shared_library():
            mapping[str(path)] = path.relative_to(self.root).as_posix()
        return mapping

    def clean(self, versions: list[str]) -> None:
        super().clean(versions)
        self._record_path().unlink(missing_ok=True)

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        self._record_path().unlink(missing_ok=True)
        reason = f"{PURE_ENV}=1" if os.environ.get(PURE_ENV) == "1" else _missing_toolchain()
        if reason is not None:
            self.clean([version])  # no compiled module of an earlier build may stay
            self.app.display_warning(f"building a pure-Python wheel: {reason}")
            return
        # the sources as they are before compiling: an edit made meanwhile shows as stale
        record = {
            path[:-3].replace("/", "."): hashlib.sha256(
                (Path(self.root) / path).read_bytes()
            ).hexdigest()
            for path in self.normalized_included_files
        }
        try:
            super().initialize(version, build_data)
        except Exception as exc:  # any failure to compile: the pure wheel
            # mypyc type-checks what the compiled modules import, so a dependency's release
            # with other type hints, or a compiler that fails, must not fail the install: the
            # pure modules behave the same.
            self.clean([version])
            why = str(exc).strip()[-2000:]  # mypyc prints its whole build; the end says why
            self.app.display_warning(f"building a pure-Python wheel: compiling failed: {why}")
            return
        self._record_path().write_text(
            json.dumps({"modules": record}, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        build_data["artifacts"].append(f"/{RECORD.as_posix()}")


def get_build_hook() -> type[NativeBuildHook]:
    """The hook class (hatchling looks for this function)."""
    return NativeBuildHook
