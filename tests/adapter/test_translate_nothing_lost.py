"""The README's promise for the event stream: ``raw`` for anything not modelled, so nothing
is lost. Any line of a type (or ``system`` subtype) the client does not know comes out as one
Raw event carrying the whole object, and the stream goes on."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from adapter.events import MessageChunk, Raw
from adapter.translate import Translator
from claudecode._codec import decode_line
from tests.support.transcripts import assistant, feed, init, result, text

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
unknown_types = st.text(min_size=1, max_size=20).map(lambda s: f"zz_{s}")


@given(
    st.one_of(
        unknown_types.map(lambda t: {"type": t}),
        unknown_types.map(lambda s: {"type": "system", "subtype": s}),
    ),
    st.dictionaries(st.text(max_size=10).filter(lambda k: k not in ("type", "subtype")),
                    json_values, max_size=5),
)  # fmt: skip
def test_an_unknown_line_is_one_raw_event_with_the_whole_object(
    head: dict[str, Any], fields: dict[str, Any]
) -> None:
    obj = {**head, **fields}
    t = Translator()
    feed(t, init(), assistant("m1", text("before")))
    (raw,) = t.feed(decode_line(json.dumps(obj).encode()))
    assert isinstance(raw, Raw)
    assert obj == raw.data
    assert (obj["type"], obj.get("subtype")) == (raw.message_type, raw.subtype)
    # The stream goes on: the turn still ends with its text and Complete.
    after = feed(t, assistant("m2", text("after")), result(result="after"))
    assert "after" in [e.text for e in after if isinstance(e, MessageChunk)]
