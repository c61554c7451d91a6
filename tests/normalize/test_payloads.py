"""Every payload kind round-trips through JSON, and its JSON stays small."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import normalize
from normalize import NormalizedPayload, decode_payload, encode_payload
from normalize.payloads import Payload

KINDS: tuple[type[Payload], ...] = get_args(NormalizedPayload)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy for any annotation used in ``normalize.payloads``."""
    origin = get_origin(tp)
    if tp is Any:
        return json_values
    if tp is str:
        return st.text(max_size=30)
    if tp is int:
        return st.integers(-(2**63), 2**63 - 1)
    if tp is bool:
        return st.booleans()
    if tp is type(None):
        return st.none()
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if origin in (types.UnionType, typing.Union):
        return st.one_of(*(strategy_for(arg) for arg in get_args(tp)))
    if origin is tuple:
        item = get_args(tp)[0]
        return st.lists(strategy_for(item), max_size=3).map(tuple)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return struct_strategy(tp)
    raise AssertionError(f"no strategy for {tp!r}")


def struct_strategy(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    """Instances of ``cls`` with every field drawn (defaults included)."""
    hints = get_type_hints(cls)
    fields = {f.name: strategy_for(hints[f.name]) for f in msgspec.structs.fields(cls)}
    return st.fixed_dictionaries(fields).map(lambda kwargs: cls(**kwargs))


payloads = st.one_of(*(struct_strategy(kind) for kind in KINDS))


@given(payloads)
def test_every_payload_round_trips(payload: NormalizedPayload) -> None:
    """``decode_payload(encode_payload(p)) == p`` for every kind and any field values."""
    assert decode_payload(encode_payload(payload)) == payload


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_default_payload_json_is_just_the_kind(kind: type[Payload]) -> None:
    """Defaults are left out: an empty payload encodes to its ``kind`` tag only."""
    encoded = msgspec.json.decode(encode_payload(kind()))  # type: ignore[arg-type]
    assert encoded == {"kind": kind.__struct_config__.tag}


def test_kind_tags_are_unique_and_snake_case() -> None:
    """Each kind has its own ``kind`` tag, the names the issue gives."""
    tags = [kind.__struct_config__.tag for kind in KINDS]
    assert len(set(tags)) == len(tags)
    assert set(tags) >= {
        "read_file",
        "modify_file",
        "shell_exec",
        "code_search",
        "http_request",
        "subagent_task",
        "create_task",
        "manage_todos",
        "show_plan",
        "generic",
        "misc",
    }


def test_payloads_are_frozen() -> None:
    """Payloads are immutable values."""
    payload = normalize.ShellExec(command="ls")
    with pytest.raises(AttributeError):
        payload.command = "rm"  # type: ignore[misc]


def test_decode_rejects_unknown_kind() -> None:
    """An unknown ``kind`` is a validation error, not a silent payload."""
    with pytest.raises(msgspec.ValidationError):
        decode_payload(b'{"kind": "nope"}')
