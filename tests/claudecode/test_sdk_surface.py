"""The drop-in's public surface against the installed claude-agent-sdk, by introspection.

Every name of the official ``__all__`` resolves in ``claudecode.sdk`` and every public name
of ``claude_agent_sdk.types`` in ``claudecode.sdk.types``, with the same kind (class,
dataclass, TypedDict, Protocol, exception, alias, function) and the same signature:
fields and their defaults, TypedDict keys and which are required, parameters, Literal
values, union members. A new SDK release that adds or changes a name fails here.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import importlib
import inspect
import pathlib
import types
import typing
from types import ModuleType
from typing import Any

import pytest
import typing_extensions

official = pytest.importorskip("claude_agent_sdk")
official_types = importlib.import_module("claude_agent_sdk.types")

# Helpers a module imports for its own use (``from typing import Any``) are not its API.
_HELPER_MODULES = (typing, typing_extensions, dataclasses, pathlib, collections.abc)


def _is_helper(name: str, value: Any) -> bool:
    if isinstance(value, ModuleType):
        return True
    return any(getattr(module, name, _MISSING) is value for module in _HELPER_MODULES)


_MISSING = object()


def _public(module: ModuleType) -> list[str]:
    return sorted(
        name
        for name in dir(module)
        if not name.startswith("_") and not _is_helper(name, getattr(module, name))
    )


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty or value is dataclasses.MISSING:
        return "<required>"
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return value.value
    return f"<{type(value).__name__}>"


def _signature(function: Any) -> list[tuple[str, str, Any]]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return []
    return [(p.name, p.kind.name, _default(p.default)) for p in signature.parameters.values()]


def _call_kind(function: Any) -> str:
    if inspect.isasyncgenfunction(function):
        return "async generator"
    if inspect.iscoroutinefunction(function):
        return "coroutine"
    return "function"


def _member_name(member: Any) -> str:
    if member is type(None):
        return "None"
    return getattr(member, "__name__", None) or repr(member)


def _methods(cls: type) -> dict[str, Any]:
    return {
        name: (_call_kind(value), _signature(value))
        for name, value in vars(cls).items()
        if (not name.startswith("_") or name in ("__init__", "__aenter__", "__aexit__"))
        and callable(value)
    }


def shape(value: Any) -> Any:
    """What is compared: the kind of ``value`` and its signature, free of identities."""
    if typing_extensions.is_typeddict(value):
        return (
            "TypedDict",
            sorted(value.__required_keys__),
            sorted(value.__optional_keys__),
        )
    if isinstance(value, type):
        if dataclasses.is_dataclass(value):
            fields = [
                (f.name, _default(f.default), f.default_factory is not dataclasses.MISSING)
                for f in dataclasses.fields(value)
                if f.init
            ]
            return ("dataclass", fields, [_member_name(b) for b in value.__bases__])
        if getattr(value, "_is_protocol", False):
            return ("Protocol", _methods(value))
        if issubclass(value, BaseException):
            return ("exception", _signature(value), [c.__name__ for c in value.__mro__[1:]])
        return ("class", _signature(value), _methods(value))
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return (_call_kind(value), _signature(value))
    origin = typing.get_origin(value)
    if origin is typing.Literal:
        return ("Literal", sorted(map(repr, typing.get_args(value))))
    if origin in (typing.Union, types.UnionType):
        return ("Union", sorted(_member_name(m) for m in typing.get_args(value)))
    if origin is not None:
        return ("alias", _member_name(origin), len(typing.get_args(value)))
    if isinstance(value, frozenset | set | tuple | list):
        return ("value", sorted(map(repr, value)))
    return ("value", type(value).__name__)


def _pairs(names: list[str], theirs: ModuleType, ours_name: str) -> list[Any]:
    return [pytest.param(name, theirs, ours_name, id=name) for name in names]


_ALL = [n for n in official.__all__ if n != "__version__"]


@pytest.mark.parametrize(
    ("name", "theirs", "ours_name"),
    _pairs(_ALL, official, "claudecode.sdk")
    + _pairs(_public(official_types), official_types, "claudecode.sdk.types"),
)
def test_same_name_same_kind_same_signature(name: str, theirs: ModuleType, ours_name: str) -> None:
    ours = importlib.import_module(ours_name)
    assert hasattr(ours, name), f"{ours_name}.{name} is missing"
    their_shape, our_shape = shape(getattr(theirs, name)), shape(getattr(ours, name))
    if their_shape[0] == "exception" == our_shape[0]:
        # The drop-in's errors also inherit from the client's own (``except
        # claudecode.CLIExitedError`` catches a ProcessError): the official bases must be
        # there, in order, among others.
        extra = iter(our_shape[2])
        assert all(base in extra for base in their_shape[2]), our_shape[2]
        their_shape, our_shape = their_shape[:2], our_shape[:2]
    assert their_shape == our_shape


def test_all_lists_the_same_names() -> None:
    import claudecode.sdk
    import claudecode.sdk.types

    assert sorted(official.__all__) == sorted(claudecode.sdk.__all__)
    assert _public(official_types) == _public(claudecode.sdk.types)


def test_version_is_the_mirrored_sdk_release() -> None:
    """``__version__`` names the SDK release whose API is mirrored (code gates on it);
    the project's own version is ``claudecode.__version__``."""
    import claudecode
    import claudecode.sdk

    assert official.__version__ == claudecode.sdk.__version__
    assert claudecode.__version__ == importlib.import_module("claudecode._version").__version__
