"""The public surface of ``normalize``: names, docstrings, module, dependencies."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import normalize

MODULES = [
    importlib.import_module(f"normalize.{info.name}")
    for info in pkgutil.iter_modules(normalize.__path__)
    if not info.name.endswith("__mypyc")  # mypyc's shared runtime library of a compiled build
]


def test_all_is_a_sorted_tuple_of_defined_names() -> None:
    """``normalize.__all__`` is a tuple sorted case-insensitively, every name defined."""
    assert isinstance(normalize.__all__, tuple)
    assert list(normalize.__all__) == sorted(normalize.__all__, key=str.casefold)
    for name in normalize.__all__:
        assert hasattr(normalize, name), name


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_module_declares_a_sorted_all(module: object) -> None:
    """Each module lists its names in a case-insensitively sorted tuple ``__all__``."""
    names = getattr(module, "__all__", None)
    assert isinstance(names, tuple)
    assert list(names) == sorted(names, key=str.casefold)
    for name in names:
        assert hasattr(module, name), name


def test_public_classes_and_functions_have_docstrings_and_public_module() -> None:
    """Public classes and functions are documented and show ``normalize`` as their module."""
    for name in normalize.__all__:
        obj = getattr(normalize, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, name
            assert obj.__module__ == "normalize", name


def test_no_dependency_on_anyio_or_the_transport() -> None:
    """Importing normalize pulls in neither anyio nor the claudecode package."""
    code = (
        "import sys, normalize\n"
        "roots = {'anyio', 'claudecode', 'trio'}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in roots)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == ""
