"""Input schemas of in-process MCP tools: the shorthands ``claude-agent-sdk`` accepts.

A tool's input schema may be given as

* a JSON Schema (a mapping with a string ``"type"`` and ``"properties"``): used as it is;
* a mapping of parameter names to Python types, ``{"a": float, "tags": list[str]}``: every
  parameter is required;
* a ``TypedDict`` class: its annotations, with ``NotRequired`` keys optional and
  ``Annotated[T, "text"]`` giving a description.

:func:`input_schema` turns any of them into the JSON Schema sent to the CLI, the same one
the official SDK sends; :func:`validation_error` checks a call's arguments against it.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import jsonschema

__all__ = ("input_schema", "validation_error")


def input_schema(shorthand: Mapping[str, Any] | type | None) -> dict[str, Any]:
    """The JSON Schema for a tool's declared input (see the module docstring)."""
    if shorthand is None:
        return {"type": "object", "properties": {}}
    if isinstance(shorthand, Mapping):
        if isinstance(shorthand.get("type"), str) and "properties" in shorthand:
            return dict(shorthand)
        properties = {name: _type_schema(kind) for name, kind in shorthand.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if is_typeddict(shorthand):
        return _typeddict_schema(shorthand)
    return {"type": "object", "properties": {}}


def validation_error(arguments: Any, schema: Mapping[str, Any]) -> str | None:
    """Why ``arguments`` do not match ``schema``, or ``None`` when they do.

    A schema that is itself invalid is reported the same way (a tool error the model can
    read), never raised.
    """
    try:
        jsonschema.validate(instance=arguments, schema=dict(schema))
    except jsonschema.ValidationError as exc:
        return exc.message
    except jsonschema.SchemaError as exc:
        return f"the tool's input schema is invalid: {exc.message}"
    return None


def _type_schema(kind: Any) -> dict[str, Any]:
    origin = get_origin(kind)
    # NotRequired / Required / ReadOnly survive include_extras=True: look through them.
    if getattr(origin, "_name", None) in ("NotRequired", "Required", "ReadOnly"):
        return _type_schema(get_args(kind)[0])
    if origin is Annotated:
        base, *metadata = get_args(kind)
        schema = _type_schema(base)
        for meta in metadata:
            if isinstance(meta, str):
                schema["description"] = meta
                break
        return schema
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if kind in simple:
        return {"type": simple[kind]}
    if origin is Union or isinstance(kind, types.UnionType):
        options = [arg for arg in get_args(kind) if arg is not type(None)]
        if len(options) == 1:
            return _type_schema(options[0])
        return {"anyOf": [_type_schema(arg) for arg in options]}
    if origin is list or kind is list:
        items = get_args(kind)
        return {"type": "array", "items": _type_schema(items[0])} if items else {"type": "array"}
    if origin is dict or kind is dict:
        return {"type": "object"}
    if is_typeddict(kind):
        return _typeddict_schema(kind)
    return {"type": "string"}


def _marker(kind: Any) -> str | None:
    name = getattr(get_origin(kind), "_name", None)
    return name if name in ("Required", "NotRequired") else None


def _typeddict_schema(cls: type) -> dict[str, Any]:
    hints = get_type_hints(cls, include_extras=True)
    properties = {name: _type_schema(kind) for name, kind in hints.items()}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    # __required_keys__ misses NotRequired[...] written as a string annotation (a module
    # with `from __future__ import annotations` on Python < 3.12), so look at the hints too.
    declared = getattr(cls, "__required_keys__", properties)
    required = sorted(
        name
        for name, kind in hints.items()
        if _marker(kind) == "Required" or (_marker(kind) != "NotRequired" and name in declared)
    )
    if required:
        schema["required"] = required
    return schema
