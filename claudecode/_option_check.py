"""Construction-time checks of :class:`~claudecode.options.ClaudeCodeOptions` fields.

A wrong type is reported when the options are built, as a :class:`UsageError` naming the
field, instead of surfacing later as a puzzling CLI error (or a Python ``repr`` on argv).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import UsageError

__all__ = (
    "check_bool",
    "check_callable",
    "check_choice",
    "check_mapping",
    "check_number",
    "check_path",
    "check_str",
    "check_str_list",
)


def _fail(name: str, expected: str, value: object) -> UsageError:
    return UsageError(f"{name} must be {expected}, not {type(value).__name__} {value!r:.80}")


def check_str(name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise _fail(name, "a string" + (" or None" if optional else ""), value)


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise _fail(name, "True or False", value)


def check_number(
    name: str,
    value: object,
    *,
    integer: bool = False,
    minimum: float | None = None,
    optional: bool = True,
) -> None:
    if value is None and optional:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (integer and not isinstance(value, int))
    ):
        raise _fail(name, "an integer" if integer else "a number", value)
    if minimum is not None and value < minimum:
        raise UsageError(f"{name} must be at least {minimum:g}, not {value!r}")


def check_choice(name: str, value: object, choices: Iterable[str]) -> None:
    if value is None:
        return
    allowed = tuple(choices)
    if value not in allowed:
        raise UsageError(f"{name} must be one of {', '.join(map(repr, allowed))}, not {value!r}")


def check_str_list(name: str, value: object) -> None:
    """A list or tuple of strings (a bare string would iterate as characters)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise _fail(name, "a list of strings", value)
    for item in value:
        if not isinstance(item, str):
            raise _fail(f"each item of {name}", "a string", item)


def check_path(name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str | os.PathLike):
        raise _fail(name, "a path", value)


def check_mapping(
    name: str, value: object, *, required: Mapping[str, type | tuple[type, ...]] | None = None
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(name, "a mapping", value)
    for key, kind in (required or {}).items():
        if key not in value:
            raise UsageError(f"{name} needs the key {key!r}")
        if not isinstance(value[key], kind):
            raise _fail(f"{name}[{key!r}]", _kind_name(kind), value[key])
    return value


def check_callable(name: str, value: object) -> None:
    if value is not None and not callable(value):
        raise _fail(name, "a callable", value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)
