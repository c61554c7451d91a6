"""Each package's public surface: __all__ complete, sorted, importable and documented."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = [
    "claudecode",
    "claudecode.sdk",
    "normalize",
    "adapter",
    "adapter.acp",
    "adapter.chat",
    "adapter.cluster",
    "adapter.commands",
    "adapter.history",
    "adapter.server",
    "adapter.server.agui",
    "adapter.server.webui",
    "adapter.server.ws",
    "adapter.terminals",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_a_sorted_tuple_of_existing_names(name: str) -> None:
    """__all__ is a tuple, sorted case-insensitively, and every name exists."""
    module = importlib.import_module(name)
    exported = module.__all__
    assert isinstance(exported, tuple)
    assert sorted(exported, key=str.casefold) == list(exported)
    missing = [n for n in exported if not hasattr(module, n)]
    assert [] == missing


@pytest.mark.parametrize("name", PACKAGES)
def test_public_classes_and_functions_have_docstrings(name: str) -> None:
    """Every exported class and function says what it is."""
    module = importlib.import_module(name)
    undocumented = [
        n
        for n in module.__all__
        if (inspect.isclass(obj := getattr(module, n)) or inspect.isfunction(obj))
        and not inspect.getdoc(obj)
    ]
    assert [] == undocumented
