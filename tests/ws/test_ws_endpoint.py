"""The /ws endpoint: real WebSocket clients (``websockets``) against a real server on
127.0.0.1, sessions on the fake CLI."""

from __future__ import annotations

import base64
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets.exceptions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.server.ws import CLOSE_FRAME_TOO_LARGE, CLOSE_SLOW_CONSUMER
from claudecode.testing import (
    script,
    text_block,
    text_turn,
    tool_turn,
    tool_use_block,
    turn,
)
from tests.support.sockets import GatedSocket
from tests.support.waits import wait_until

from ._client import TOKEN, Client, connect, serve

pytestmark = pytest.mark.server


def drain(c: Client) -> tuple[list[dict[str, Any]], int | None]:
    """Every frame until the server closes; and its close code."""
    got: list[dict[str, Any]] = []
    try:
        while True:
            got.append(c.recv())
    except websockets.exceptions.ConnectionClosed as closed:
        return got, closed.rcvd.code if closed.rcvd is not None else None


def events_of(frames: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    return [f["event"] for f in frames if f["type"] == "event" and f["session_id"] == session_id]


def until_complete(c: Client, session_id: str) -> list[dict[str, Any]]:
    return c.until(
        lambda f: (
            f["type"] == "event"
            and f["session_id"] == session_id
            and f["event"]["type"] == "complete"
        )
    )


def create(c: Client) -> str:
    ack = c.request({"type": "create_session"})
    assert "ack" == ack["type"], ack
    assert ack["session"]["id"] == ack["session_id"]
    return str(ack["session_id"])


# ------------------------------------------------------------------ basics


def test_hello_ping_and_lists(tmp_path: Path) -> None:
    with serve(tmp_path, script(text_turn("Hi!"))) as url:
        c = connect(url)
        try:
            # Without an agents file the one agent, "default", is the server's settings.
            default = {"name": "default", "description": "Claude Code, through claudecode-bridge"}
            assert {"type": "ack", "request_id": "h", "version": 1, "agents": [default]} == (
                c.send({"type": "hello", "version": 1, "request_id": "h"}) or c.recv()
            )
            assert {"type": "pong", "request_id": 5} == (
                c.send({"type": "ping", "request_id": 5}) or c.recv()
            )
            sid = create(c)
            listed = c.request({"type": "list_sessions"})
            assert [sid] == [s["id"] for s in listed["sessions"]]
            history = c.request({"type": "list_history", "cwd": str(tmp_path / "nowhere")})
            assert {"type": "history", "sessions": []} == {
                k: v for k, v in history.items() if k != "request_id"
            }
        finally:
            c.close()


def test_create_refuses_what_it_cannot_run_before_starting(tmp_path: Path) -> None:
    """A working directory that is not one, or an unknown effort, is a bad_request in words
    (no ``[Errno 2]``, no server path) and no session starts; a known effort starts one."""
    with serve(tmp_path, script(text_turn("Hi!"))) as url:
        c = connect(url)
        try:
            a_file = tmp_path / "work" / "a-file"
            a_file.write_text("x")
            for cwd, why in (("give me the tour", "does not exist"), (str(a_file), "not a dir")):
                reply = c.request({"type": "create_session", "cwd": cwd})
                assert ("error", "bad_request") == (reply["type"], reply["code"]), reply
                assert why in reply["message"] and repr(cwd) in reply["message"]
                assert "Errno" not in reply["message"]
            reply = c.request({"type": "create_session", "effort": "extreme"})
            assert ("error", "invalid_frame") == (reply["type"], reply["code"]), reply
            assert "effort" in reply["message"]
            assert [] == c.request({"type": "list_sessions"})["sessions"]
            ack = c.request({"type": "create_session", "effort": "high", "cwd": str(tmp_path)})
            assert "ack" == ack["type"], ack
            assert str(tmp_path) == ack["session"]["cwd"]
        finally:
            c.close()


def test_sessions_people_can_tell_apart(tmp_path: Path) -> None:
    """A session says where it came from, what it cost, its title (the first prompt, then
    renamed) and whether it is archived; a rename or an archive reaches the list's watchers
    and works on a closed session too."""
    with serve(tmp_path, script(text_turn("Hi!"))) as url:
        c, watcher = connect(url), connect(url)
        try:
            watcher.request({"type": "list_sessions"})
            sid = create(c)
            ui = c.request({"type": "create_session", "origin": "webui"})["session"]
            assert "webui" == ui["origin"]
            c.request({"type": "subscribe", "session_id": sid})
            c.request({"type": "prompt", "session_id": sid, "text": "\n  fix the tests\nnow"})
            c.saw(lambda f: f["type"] == "event" and f["event"]["type"] == "complete")
            # the backend follows the session's events on its own: the cost comes with a
            # session_changed once it has seen the turn's end
            watcher.saw(
                lambda f: (
                    f["type"] == "session_changed"
                    and f["session"]["id"] == sid
                    and f["session"].get("cost_usd", 0) > 0
                )
            )
            info = c.request({"type": "list_sessions"})["sessions"]
            mine = next(s for s in info if s["id"] == sid)
            assert ("websocket", "fix the tests") == (mine["origin"], mine["title"])
            assert mine["cost_usd"] > 0 and "archived" not in mine
            renamed = c.request(
                {"type": "update_session", "session_id": sid, "title": "  The   tests  "}
            )
            assert ("ack", "The tests") == (renamed["type"], renamed["session"]["title"])
            watcher.saw(
                lambda f: (
                    f["type"] == "session_changed"
                    and f["session"]["id"] == sid
                    and f["session"].get("title") == "The tests"
                )
            )
            c.request({"type": "close_session", "session_id": sid})
            archived = c.request({"type": "update_session", "session_id": sid, "archived": True})
            assert archived["session"]["archived"] and "The tests" == archived["session"]["title"]
            for bad, code in (
                ({"session_id": sid, "title": "   "}, "bad_request"),
                ({"session_id": "nope", "archived": True}, "unknown_session"),
                ({"session_id": sid, "archived": "yes"}, "invalid_frame"),
            ):
                reply = c.request({"type": "update_session", **bad})
                assert ("error", code) == (reply["type"], reply["code"]), reply
            # delete: an open session is refused, a closed one leaves the list for good
            reply = c.request({"type": "delete_session", "session_id": ui["id"]})
            assert ("error", "bad_request") == (reply["type"], reply["code"]), reply
            assert "ack" == c.request({"type": "delete_session", "session_id": sid})["type"]
            watcher.saw(
                lambda f: (
                    f["type"] == "session_changed"
                    and f["session"]["id"] == sid
                    and f["session"].get("removed") is True
                )
            )
            listed = c.request({"type": "list_sessions"})["sessions"]
            assert [ui["id"]] == [s["id"] for s in listed]
            reply = c.request({"type": "delete_session", "session_id": sid})
            assert ("error", "unknown_session") == (reply["type"], reply["code"]), reply
        finally:
            c.close()
            watcher.close()


def test_create_and_prompt_at_once_misses_nothing(tmp_path: Path) -> None:
    """Subscribing right after create: a snapshot, then every event after it, in order;
    since_seq=0 gives every event from seq 1 instead."""
    with serve(tmp_path, script(text_turn("Hi there!"), text_turn("Again!"))) as url:
        c = connect(url)
        other = connect(url)
        try:
            sid = create(c)
            c.send({"type": "subscribe", "session_id": sid, "request_id": "s"})
            c.send({"type": "prompt", "session_id": sid, "text": "hello", "request_id": "p"})
            other.send({"type": "subscribe", "session_id": sid, "since_seq": 0})
            frames = until_complete(c, sid)
            [snapshot] = [f for f in frames if f["type"] == "snapshot"]
            base = snapshot["chat"]["last_seq"]
            seqs = [f["seq"] for f in frames if f["type"] == "event"]
            assert list(range(base + 1, base + 1 + len(seqs))) == seqs
            seen = [*snapshot["chat"]["entries"], *events_of(frames, sid)]
            assert any(e.get("type") == "user_message" or e.get("kind") == "user" for e in seen)
            assert any(f["type"] == "ack" and f.get("request_id") == "p" for f in frames)

            all_frames = until_complete(other, sid)
            events = events_of(all_frames, sid)
            assert list(range(1, len(events) + 1)) == [e["seq"] for e in events]
            assert "hello" == next(e["text"] for e in events if e["type"] == "user_message")
            text = "".join(e["text"] for e in events if e["type"] == "message_chunk")
            assert "Hi there!" == text
            # a late joiner's snapshot shows the same chat, once the server's view folded the
            # last events (it folds in batches; before that the events after the snapshot's
            # last_seq follow it)
            late = connect(url)

            def caught_up() -> dict[str, Any] | None:
                late.send({"type": "subscribe", "session_id": sid})
                snap: dict[str, Any] = late.until(lambda f: f["type"] == "snapshot")[-1]
                return snap if snap["chat"]["last_seq"] == len(events) else None

            snap = wait_until(caught_up, poll=0.05, what="a snapshot of every event")
            entries = snap["chat"]["entries"]
            assert ["user", "text"] == [e["kind"] for e in entries]
            assert "Hi there!" == entries[1]["text"]
            assert len(events) == snap["chat"]["last_seq"]
            late.close()
        finally:
            c.close()
            other.close()


def test_a_late_joiner_sees_the_whole_chat_beyond_the_history(tmp_path: Path) -> None:
    """The session keeps only 400 events; a client joining after a thousand still gets the
    whole conversation in its snapshot (the server's view followed the session from seq 1, in
    batches well within its subscriber buffer), and a since_seq older than the history gets a
    snapshot instead of a gap."""
    text = "".join(f"<{i}>" for i in range(1000))
    body = script(text_turn(text, chunk=5, delay=0.002), text_turn("second"))
    with serve(tmp_path, body, subscriber_buffer=200, history_size=400) as url:
        c = connect(url)
        try:
            sid = create(c)
            c.request({"type": "subscribe", "session_id": sid})
            c.request({"type": "prompt", "session_id": sid, "text": "long one"})
            frames = until_complete(c, sid)
            events = events_of(frames, sid)
            assert len(events) > 600
            late = connect(url)

            # the view folds the last events in a batch
            def caught_up() -> dict[str, Any] | None:
                late.send({"type": "subscribe", "session_id": sid})
                snap: dict[str, Any] = late.until(lambda f: f["type"] == "snapshot")[-1]
                return snap if snap["chat"]["last_seq"] >= events[-1]["seq"] else None

            snap = wait_until(caught_up, poll=0.05, what="a snapshot of every event")
            entries = snap["chat"]["entries"]
            assert ["long one", text] == [e["text"] for e in entries if "text" in e]
            old = connect(url)
            old.send({"type": "subscribe", "session_id": sid, "since_seq": 1})
            snap = old.until(lambda f: f["type"] == "snapshot")[-1]
            assert text in [e.get("text") for e in snap["chat"]["entries"]]
            late.close()
            old.close()
        finally:
            c.close()


def test_two_clients_one_approval(tmp_path: Path) -> None:
    """Both see the request; the first answer wins, the second is told it is gone; both see
    the tool finish and the session no longer waiting."""
    body = script(tool_turn("Bash", {"command": "echo hi"}, permission=True, result="hi"))
    with serve(tmp_path, body) as url:
        a, b = connect(url), connect(url)
        try:
            sid = create(a)
            for c in (a, b):
                assert "ack" == c.request({"type": "subscribe", "session_id": sid})["type"]
            a.send({"type": "prompt", "session_id": sid, "text": "run it"})
            asks = [
                c.until(
                    lambda f: f["type"] == "event" and f["event"]["type"] == "permission_request"
                )
                for c in (a, b)
            ]
            pending = asks[0][-1]["event"]["pending_id"]
            assert pending == asks[1][-1]["event"]["pending_id"]
            b.saw(lambda f: f["type"] == "session_changed" and f["session"]["state"] == "waiting")
            answer = {"type": "permission_response", "session_id": sid, "pending_id": pending}
            mark = len(b.seen)
            assert "ack" == a.request({**answer, "decision": "allow"})["type"]
            late = b.request({**answer, "decision": "deny", "message": "no"})
            assert ("error", "unknown_permission") == (late["type"], late["code"])
            for c in (a, b):
                c.saw(
                    lambda f: f["type"] == "event" and f["event"]["type"] == "complete",
                    since=mark if c is b else 0,
                )
                [update] = [e for e in events_of(c.seen, sid) if e["type"] == "tool_update"]
                assert "complete" == update["status"]
            b.saw(
                lambda f: (
                    f["type"] == "session_changed"
                    and f["session"]["id"] == sid
                    and not f["session"].get("pending_permissions")
                    and f["session"]["state"] != "waiting"
                ),
                since=mark,
            )
        finally:
            a.close()
            b.close()


def test_a_question_answered_by_one_client_is_seen_by_both(tmp_path: Path) -> None:
    """The agent's question reaches both clients as a question_request; a bad answer is
    bad_request (the question stays open), one client answers, both see permission_resolved
    with the answers, a late answer is unknown_permission, and the stand-in CLI's next
    sentence names the answer it read from the permission answer."""
    question = "Which greeting style should I use?"
    ask = {
        "questions": [
            {
                "question": question,
                "header": "Style",
                "options": [{"label": "Formal"}, {"label": "Casual", "description": "Hey!"}],
                "multiSelect": False,
            }
        ]
    }
    body = script(
        turn(
            [tool_use_block("AskUserQuestion", ask, permission=True)],
            [text_block("none", by_answer=(question, {"Casual": "You chose Casual."}))],
        )
    )
    with serve(tmp_path, body) as url:
        a, b = connect(url), connect(url)
        try:
            sid = create(a)
            for c in (a, b):
                assert "ack" == c.request({"type": "subscribe", "session_id": sid})["type"]
            a.send({"type": "prompt", "session_id": sid, "text": "greet"})
            asks = [
                c.until(lambda f: f["type"] == "event" and f["event"]["type"] == "question_request")
                for c in (a, b)
            ]
            event = asks[0][-1]["event"]
            assert "Hey!" == event["questions"][0]["options"][1]["description"]
            answer = {
                "type": "question_response",
                "session_id": sid,
                "pending_id": event["pending_id"],
            }
            bad = a.request({**answer, "answers": {question: ["Formal", "Casual"]}})
            assert ("error", "bad_request") == (bad["type"], bad["code"])
            assert "ack" == b.request({**answer, "answers": {question: ["Casual"]}})["type"]
            late = a.request({**answer, "decline": True})
            assert ("error", "unknown_permission") == (late["type"], late["code"])
            for c in (a, b):
                # The turn may have completed while a request above waited for its answer:
                # look at every frame the client has seen, not only the ones still coming.
                c.saw(lambda f: f["type"] == "event" and f["event"]["type"] == "complete")
                frames = c.seen
                [resolved] = [
                    e for e in events_of(c.seen, sid) if e["type"] == "permission_resolved"
                ]
                assert ("answered", {question: ["Casual"]}) == (
                    resolved["decision"],
                    resolved["answers"],
                )
                text = "".join(
                    e["text"] for e in events_of(c.seen, sid) if e["type"] == "message_chunk"
                )
                assert "You chose Casual." == text, frames
        finally:
            a.close()
            b.close()


def test_events_go_only_to_the_subscribers_of_their_session(tmp_path: Path) -> None:
    """Two sessions, a client on each: each gets its own session's events and none of the
    other's, and its own session's state changes; the other's too once it asked for the
    session list. A session whose only client left runs its turn to the end."""
    with serve(tmp_path, script(text_turn("reply"), text_turn("again"))) as url:
        a, b = connect(url), connect(url)
        try:
            one, two = create(a), create(a)
            a.request({"type": "subscribe", "session_id": one, "since_seq": 0})
            b.request({"type": "subscribe", "session_id": two, "since_seq": 0})
            b.request({"type": "prompt", "session_id": two, "text": "two"})
            until_complete(b, two)
            a.request({"type": "prompt", "session_id": one, "text": "one"})
            until_complete(a, one)
            assert {one} == {f["session_id"] for f in a.seen if f["type"] == "event"}
            assert {two} == {f["session_id"] for f in b.seen if f["type"] == "event"}
            changed = {f["session"]["id"] for f in a.seen if f["type"] == "session_changed"}
            assert one in changed, "a subscriber gets its session's state changes"
            assert two not in changed, "and not the others' until it asks for the list"
            listed = a.request({"type": "list_sessions"})
            assert {one, two} <= {s["id"] for s in listed["sessions"]}
            b.request({"type": "unsubscribe", "session_id": two})
            last = max(f["seq"] for f in b.seen if f["type"] == "event")
            since = len(a.seen)
            a.request({"type": "prompt", "session_id": two, "text": "nobody watching"})
            a.saw(
                lambda f: (
                    f["type"] == "session_changed"
                    and f["session"]["id"] == two
                    and f["session"]["state"] == "idle"
                    and f["session"]["last_seq"] > last
                ),
                since,
            )
            assert {one} == {f["session_id"] for f in a.seen if f["type"] == "event"}
            late = connect(url)
            rest = late.request({"type": "subscribe", "session_id": two, "since_seq": 0})
            assert "ack" == rest["type"]
            events = events_of(until_complete(late, two), two)
            events += events_of(until_complete(late, two), two)
            assert 2 == [e["type"] for e in events].count("complete")
            text = "".join(e["text"] for e in events if e["type"] == "message_chunk")
            assert "replyagain" == text
            late.close()
        finally:
            a.close()
            b.close()


def test_reconnect_with_since_seq_loses_and_repeats_nothing(tmp_path: Path) -> None:
    body = script(text_turn("one two three four five six", chunk=2), text_turn("more"))
    with serve(tmp_path, body) as url:
        c = connect(url)
        sid = create(c)
        c.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
        c.send({"type": "prompt", "session_id": sid, "text": "go"})
        first = c.until(lambda f: f["type"] == "event" and f["event"]["type"] == "message_chunk")
        c.close()  # gone mid-turn
        got = [e["seq"] for e in events_of(first, sid)]
        c = connect(url)
        c.request({"type": "subscribe", "session_id": sid, "since_seq": got[-1]})
        rest = until_complete(c, sid)
        got += [e["seq"] for e in events_of(rest, sid)]
        assert list(range(1, len(got) + 1)) == got
        c.close()


def test_a_slow_client_is_disconnected_and_catches_up(tmp_path: Path) -> None:
    """A client that stops reading is closed with 4001 (its queue in the session overflowed)
    while another keeps streaming; it reconnects with since_seq and gets the rest, nothing
    lost or repeated, though the rest is many times the queue."""
    # incompressible (the server may deflate frames)
    big = base64.b64encode(os.urandom(9 * 1024 * 1024)).decode()
    body = script(text_turn(big, chunk=64 * 1024))
    with serve(tmp_path, body, max_queue=8, subscriber_buffer=16) as url:
        fast = connect(url)
        # a small receive window and incoming queue, so an unread client backs up quickly
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect
        sock.connect(("127.0.0.1", int(url.split(":")[2].split("/")[0])))
        slow = connect(url, sock=sock)
        try:
            sid = create(fast)
            for c in (fast, slow):
                c.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
            sock.gate.clear()  # the slow client stops reading its socket
            fast.send({"type": "prompt", "session_id": sid, "text": "go"})
            frames = until_complete(fast, sid)  # the fast one is never held up
            total = len(events_of(frames, sid))
            assert total > 50
            # now the slow one reads what reached it, then the close
            sock.gate.set()
            frames, code = drain(slow)
            print("SLOWGOT", len(frames), code, flush=True)
            assert CLOSE_SLOW_CONSUMER == code
            got = [f["seq"] for f in frames if f["type"] == "event"]
            assert len(got) < total
            slow = connect(url)
            slow.request(
                {"type": "subscribe", "session_id": sid, "since_seq": got[-1] if got else 0}
            )
            rest = until_complete(slow, sid)
            got += [e["seq"] for e in events_of(rest, sid)]
            assert list(range(1, total + 1)) == got
        finally:
            fast.close()
            slow.close()


def test_bad_input_gets_errors_and_the_connection_goes_on(tmp_path: Path) -> None:
    with serve(tmp_path, script(text_turn("Hi!"))) as url:
        c = connect(url)
        try:
            for raw, code in [
                ("{nope", "invalid_json"),
                ("[]", "invalid_frame"),
                (json.dumps({"type": "warp"}), "unknown_type"),
                (json.dumps({"type": "prompt", "session_id": 1, "text": "x"}), "invalid_frame"),
                (
                    json.dumps({"type": "prompt", "session_id": "nope", "text": "x"}),
                    "unknown_session",
                ),
                (json.dumps({"type": "subscribe", "session_id": "nope"}), "unknown_session"),
                (json.dumps({"type": "interrupt", "session_id": "nope"}), "unknown_session"),
                (json.dumps({"type": "close_session", "session_id": "nope"}), "unknown_session"),
                (b"\x00\xff binary", "invalid_json"),
            ]:
                c.send(raw)
                reply = c.recv()
                assert ("error", code) == (reply["type"], reply["code"]), raw
            sid = create(c)
            bad_image = {
                "type": "prompt",
                "session_id": sid,
                "text": "look",
                "images": [{"media_type": "image/png", "data": "not base64!"}],
            }
            assert "bad_request" == c.request(bad_image)["code"]
            perm = {
                "type": "permission_response",
                "session_id": sid,
                "pending_id": "nope",
                "decision": "allow",
            }
            assert "unknown_permission" == c.request(perm)["code"]
            mode = {"type": "set_permission_mode", "session_id": sid, "mode": "bogus"}
            assert "error" == c.request(mode)["type"]
            assert "pong" == c.request({"type": "ping"})["type"]
            # a frame over the limit closes the connection with 1009
            c.send("x" * (65 * 1024))
            assert CLOSE_FRAME_TOO_LARGE == drain(c)[1]
            # the server keeps serving
            again = connect(url)
            assert "pong" == again.request({"type": "ping"})["type"]
            again.close()
        finally:
            c.close()


def test_unsupported_version_is_refused(tmp_path: Path) -> None:
    with serve(tmp_path, script()) as url:
        c = connect(url)
        c.send({"type": "hello", "version": 99})
        assert "unsupported_version" == c.recv()["code"]
        assert 4003 == drain(c)[1]


def test_origin_and_token(tmp_path: Path) -> None:
    with serve(tmp_path, script(), token=TOKEN, cors_origins=("http://app.example",)) as url:
        for kwargs in (
            {},
            {"additional_headers": {"Authorization": "Bearer wrong"}},
            {
                "origin": "http://evil.example",
                "additional_headers": {"Authorization": f"Bearer {TOKEN}"},
            },
        ):
            with pytest.raises(websockets.exceptions.InvalidStatus):
                Client(url, **kwargs)
        for u, kwargs in (
            (url, {"additional_headers": {"Authorization": f"Bearer {TOKEN}"}}),
            (f"{url}?token={TOKEN}", {"origin": "http://app.example"}),
        ):
            c = connect(u, **kwargs)
            assert "pong" == c.request({"type": "ping"})["type"]
            c.close()


# ------------------------------------------------------------------ hypothesis

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_frames = st.one_of(
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    _json.map(json.dumps),
    st.builds(
        lambda t, fields: json.dumps({"type": t, **fields}),
        st.sampled_from(
            [
                "hello",
                "list_sessions",
                "subscribe",
                "unsubscribe",
                "prompt",
                "permission_response",
                "question_response",
                "interrupt",
                "set_model",
                "set_permission_mode",
                "close_session",
                "update_session",
                "list_history",
                "ping",
                "pong",
                "event",
            ]
        ),
        st.dictionaries(
            st.sampled_from(
                [
                    "session_id",
                    "text",
                    "since_seq",
                    "pending_id",
                    "decision",
                    "answers",
                    "decline",
                    "version",
                    "mode",
                    "cwd",
                    "limit",
                    "title",
                    "archived",
                    "named_agent",
                ]
            ),
            _json,
            max_size=4,
        ),
    ),
)

_REPLIES = ("ack", "error", "pong", "session_list", "history")


def drain_until_probe(c: Client) -> tuple[list[dict[str, Any]], int | None]:
    got: list[dict[str, Any]] = []
    try:
        while True:
            got.append(c.recv())
            if got[-1]["type"] == "pong" and got[-1].get("request_id") == "probe":
                return got, None
    except websockets.exceptions.ConnectionClosed as closed:
        return got, closed.rcvd.code if closed.rcvd is not None else None


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("ws-hyp"), script()) as url:
        yield url


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(frame=_frames)
def test_arbitrary_client_messages_get_a_reply(shared_server: str, frame: str) -> None:
    """Every message gets exactly one reply (or, for a wrong ``hello``, an error and close
    4003); the server keeps serving."""
    c = connect(shared_server)
    try:
        c.send(frame)
        c.send({"type": "ping", "request_id": "probe"})
        got, code = drain_until_probe(c)
        if code is not None:
            assert (4003, "unsupported_version") == (code, got[-1]["code"])
        else:
            replies = [f for f in got[:-1] if f["type"] in _REPLIES]
            assert 1 == len(replies), (frame, got)
    finally:
        c.close()
    again = connect(shared_server)
    assert "pong" == again.request({"type": "ping"})["type"]
    again.close()
