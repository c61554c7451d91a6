"""The AG-UI thread store's append-only message logs: what a reload gives back, whatever
the runs did, the saves and reloads in between, and a write torn by a crash."""

from __future__ import annotations

import copy
import os
import sqlite3
import stat
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from adapter.server.agui.events import (
    AguiEvent,
    ReasoningMessageContent,
    ReasoningMessageStart,
    TextMessageContent,
    TextMessageStart,
    ToolCallArgs,
    ToolCallResult,
    ToolCallStart,
)
from adapter.server.agui.snapshot import MessageLog
from adapter.server.agui.threadlog import encode_record, read_log, replay
from adapter.server.agui.threads import ThreadRecord, ThreadStore

KEY = "thread-1"
_ids = st.sampled_from("abcdefgh")
_calls = st.sampled_from(["t1", "t2", "t3"])
_text = st.text(max_size=12)

_events: st.SearchStrategy[AguiEvent] = st.one_of(
    st.builds(TextMessageStart, message_id=_ids),
    st.builds(TextMessageContent, message_id=_ids, delta=_text.filter(bool)),
    st.builds(ReasoningMessageStart, message_id=_ids, role=st.just("reasoning")),
    st.builds(ReasoningMessageContent, message_id=_ids, delta=_text.filter(bool)),
    st.builds(
        ToolCallStart,
        tool_call_id=_calls,
        tool_call_name=st.sampled_from(["Bash", "Write"]),
        parent_message_id=st.none() | _ids,
    ),
    st.builds(ToolCallArgs, tool_call_id=_calls, delta=_text.filter(bool)),
    st.builds(ToolCallResult, message_id=_ids, tool_call_id=_calls, content=_text),
)
_changes = st.lists(
    st.one_of(
        _events,
        st.fixed_dictionaries({"id": _ids, "role": st.just("user"), "content": _text}),
    ),
    max_size=8,
)
#: Rounds: changes to the log, a save, then what befalls the file. ``tear``: a crash in
#: the middle of that save's append (the file ends part way into it); ``junk``: bytes
#: after the last record that are no record (a torn write of unknown length).
_rounds = st.lists(
    st.tuples(
        _changes,
        st.sampled_from(["save", "save", "reload", "tear", "junk"]),
        st.floats(0, 1, exclude_max=True),
        st.binary(min_size=1, max_size=300),
    ),
    max_size=12,
)


async def _play(root: Path, rounds: list[tuple[list[Any], str, float, bytes]]) -> None:
    path = root / "threads.sqlite3"
    store = ThreadStore(path)
    record = ThreadRecord(KEY)
    assert await store.load(KEY) is None
    log = MessageLog(max_messages=3)
    saved: list[list[dict[str, Any]]] = []  # the messages as of each save

    def file() -> Path:
        assert store.logs is not None
        (log_file,) = store.logs.iterdir()
        return log_file

    async def reload() -> None:
        nonlocal store, log
        store.close()
        store = ThreadStore(path)
        loaded = await store.load(KEY)
        assert loaded is not None
        assert saved[-1] == loaded.messages
        log = MessageLog(loaded.messages, max_messages=3)  # as the service reloads a thread
        log.clear_dirty()

    for changes, fate, where, junk in rounds:
        for change in changes:
            if isinstance(change, dict):
                log.add(change)
            else:
                log.apply(change)
        before = file().stat().st_size if saved else 0
        base = store._bases.get(KEY, 0)
        end = store._ends.get(KEY)
        await store.save_threads([(record, log)])
        saved.append(copy.deepcopy(log.messages()))
        after = file().stat().st_size
        good = read_log(file().read_bytes())[1]
        assert good == store._ends[KEY]
        if end != good:  # it wrote: whole records, and nothing after them
            assert after == good
        if len(saved[-1]) == 3:
            event("full")
        if fate == "reload":
            await reload()
        elif fate == "tear" and after > before and before and store._bases[KEY] == base:
            # Only an append can be torn (a whole rewrite replaces the file in one rename).
            event("torn")
            os.truncate(file(), before + int(where * (after - before)))
            saved.pop()  # that save is lost whole
            await reload()
        elif fate == "junk":
            data = file().read_bytes()
            file().write_bytes(data + b"\n" + junk)
            await reload()
    await store.save_threads([(record, log)])
    saved.append(copy.deepcopy(log.messages()))
    await reload()
    store.close()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rounds)
def test_any_appends_reloads_and_torn_tail_load_back_the_saved_messages(
    rounds: list[tuple[list[Any], str, float, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as root:
        anyio.run(_play, Path(root), rounds)


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=5)), max_size=5))
def test_records_read_back_and_any_prefix_holds_only_whole_records(
    records: list[dict[str, str]],
) -> None:
    data = b"".join(encode_record(r) for r in records)
    assert (records, len(data)) == read_log(data)
    for cut in range(len(data)):
        got, end = read_log(data[:cut])
        assert records[: len(got)] == got and data[:end] == b"".join(encode_record(r) for r in got)


def test_unknown_fields_are_kept_out_of_the_way() -> None:
    """A later version's fields in a record are ignored, not an error."""
    data = encode_record({"reset": True, "put": [{"id": "a", "content": "x"}], "agent": "z"})
    data += encode_record({"more": {"a": "y"}, "v": 2})
    records, _ = read_log(data)
    assert [{"id": "a", "content": "xy"}] == replay(records)


@pytest.mark.anyio
async def test_logs_are_private_and_a_long_stream_stays_compact(tmp_path: Path) -> None:
    store = ThreadStore(tmp_path / "state" / "threads.sqlite3")
    record = ThreadRecord(KEY)
    await store.load(KEY)
    log = MessageLog()
    log.add({"id": "u", "role": "user", "content": "go"})
    log.apply(TextMessageStart(message_id="m"))
    sizes = []
    for _ in range(300):
        for _ in range(20):
            log.apply(TextMessageContent(message_id="m", delta="word "))
        await store.save_threads([(record, log)])
        assert store.logs is not None
        (file,) = store.logs.iterdir()
        sizes.append(file.stat().st_size)
    # Each save appended its own deltas: the file grew by about the same each round (a
    # rewrite of the whole thread would grow with the reply).
    assert sizes[-1] - sizes[-2] == sizes[1] - sizes[0]
    assert sizes[-1] < 3 * len("word ") * 20 * 300
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    store.close()
    reloaded = await ThreadStore(tmp_path / "state" / "threads.sqlite3").load(KEY)
    assert reloaded is not None and "word " * 6000 == reloaded.messages[1]["content"]


@pytest.mark.anyio
async def test_a_thread_saved_whole_by_an_older_version_loads_and_moves_to_its_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "threads.sqlite3"
    with sqlite3.connect(path) as db:  # the file as that version wrote it
        db.execute(
            "CREATE TABLE threads (thread_id TEXT PRIMARY KEY, cli_session_id TEXT, "
            "messages TEXT NOT NULL DEFAULT '[]', updated_at REAL NOT NULL)"
        )
        db.execute(
            "INSERT INTO threads VALUES (?, ?, ?, ?)",
            (KEY, "cli-1", '[{"id": "u", "role": "user", "content": "old"}]', 1.0),
        )
    db.close()
    store = ThreadStore(path)
    record = await store.load(KEY)
    assert record is not None and "cli-1" == record.cli_session_id
    log = MessageLog(record.messages)
    log.clear_dirty()
    log.add({"id": "v", "role": "user", "content": "new"})
    assert record.agent is None  # saved before agents had names: the default one's
    record.agent = "helper"
    await store.save_threads([(record, log)])  # its first save writes the log whole
    store.close()
    again = await ThreadStore(path).load(KEY)
    assert again is not None and ["old", "new"] == [m["content"] for m in again.messages]
    assert ("cli-1", "helper") == (again.cli_session_id, again.agent)


@pytest.mark.anyio
async def test_a_forgotten_thread_leaves_no_state_behind_and_loads_again(tmp_path: Path) -> None:
    """A server forgets the threads it evicts: the store keeps nothing per thread for them
    (its memory does not grow with every thread ever run), and they load as saved."""
    store = ThreadStore(tmp_path / "threads.sqlite3")
    for n in range(50):
        key = f"thread-{n}"
        record = await store.load(key) or ThreadRecord(key)
        log = MessageLog()
        log.add({"id": "u", "role": "user", "content": str(n)})
        await store.save_threads([(record, log)])
        log.apply(TextMessageStart(message_id="m"))
        await store.save_threads([(record, log)])  # an append
        store.forget(key)
    await store.load("thread-0")  # the worker drops its part on its next call
    assert {"thread-0"} == set(store._ends) == set(store._files)
    for n in range(50):
        again = await store.load(f"thread-{n}")
        assert again is not None and [str(n), ""] == [m["content"] for m in again.messages]
    store.close()
