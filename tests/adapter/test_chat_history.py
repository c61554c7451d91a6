"""Session history from transcripts the real CLI wrote (tests/fixtures/history), plus
truncated, garbage-laden, growing and large copies."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.chat import (
    AssistantText,
    ChatView,
    ErrorEntry,
    ReadGroup,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
)
from adapter.events import SessionStatus
from adapter.history import (
    HistoryIndex,
    HistoryNotFoundError,
    config_dir,
    find_session_file,
    list_sessions,
    load_events,
    project_slug,
    resume_spec,
)
from normalize import ModifyFile, ShellExec
from tests.support.strategies import json_values

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "history"
SESSION = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"
PROJECT = "-work-demo"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    root = tmp_path / "claude"
    shutil.copytree(FIXTURES, root)
    return root


def transcript(config: Path) -> Path:
    return config / "projects" / PROJECT / f"{SESSION}.jsonl"


def real_lines(config: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in transcript(config).read_text().splitlines()]


def test_config_dir_and_slug() -> None:
    assert Path("/x/cfg") == config_dir({"CLAUDE_CONFIG_DIR": "/x/cfg", "HOME": "/h"})
    assert Path("/h/.claude") == config_dir({"HOME": "/h"})
    assert "-work-demo" == project_slug("/work/demo")
    assert "-tmp-a-b-c-d" == project_slug("/tmp/a_b.c d")


def test_lists_a_real_session(config: Path) -> None:
    lines = real_lines(config)
    [session] = list_sessions(config=config)
    assert SESSION == session.session_id
    assert PROJECT == session.project
    assert "say hello" == session.title
    assert sum(1 for x in lines if x["type"] in ("user", "assistant")) == session.message_count
    assert "claude-opus-5-5" == session.model
    assert "HEAD" == session.git_branch
    assert session.cwd and session.cwd.endswith("/cli/work")
    stamps = [x["timestamp"] for x in lines if "timestamp" in x]
    from datetime import datetime

    newest = max(datetime.fromisoformat(str(t).replace("Z", "+00:00")) for t in stamps)
    assert newest.timestamp() == pytest.approx(session.last_activity)
    # by working directory: the project directory of that cwd only
    assert [SESSION] == [s.session_id for s in list_sessions("/work/demo", config=config)]
    assert [] == list_sessions("/elsewhere", config=config)
    assert [] == list_sessions(config=config / "missing")


def test_respects_claude_config_dir(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert [SESSION] == [s.session_id for s in list_sessions()]


def test_loads_into_the_chat_view(config: Path) -> None:
    events = load_events(transcript(config))
    assert isinstance(events[0], SessionStatus) and SESSION == events[0].cli_session_id
    view = ChatView()
    view.apply(events)
    entries = view.entries
    users = [e.text for e in entries if isinstance(e, UserEntry)]
    assert ["say hello", "do the work"] == users
    assert ["Let me think about files."] == [
        e.text for e in entries if isinstance(e, ReasoningEntry)
    ]
    texts = [e.text for e in entries if isinstance(e, AssistantText)]
    assert ["Hello! I can help.", "All done."] == texts
    [bash] = [e for e in entries if isinstance(e, ToolEntry) and e.tool_name == "Bash"]
    assert isinstance(bash.normalized, ShellExec) and bash.normalized.output is not None
    assert "hi" == bash.normalized.output.stdout and "complete" == bash.status
    [reads] = [e for e in entries if isinstance(e, ReadGroup)]
    assert 2 == len(reads.reads)
    [edit] = [e for e in entries if isinstance(e, ToolEntry) and e.tool_name == "Edit"]
    assert isinstance(edit.normalized, ModifyFile)
    [todo] = [e for e in entries if isinstance(e, ToolEntry) and e.tool_name == "TodoWrite"]
    assert "error" == todo.status
    assert "claude-opus-5-5" == view.model


def test_truncated_copy(config: Path) -> None:
    path = transcript(config)
    data = path.read_bytes()
    full = load_events(path)
    # cut in the middle of the last assistant line
    cut = data.rfind(b'"All done."')
    path.write_bytes(data[:cut])
    [session] = list_sessions(config=config)
    assert "say hello" == session.title
    view = ChatView()
    view.apply(load_events(path))
    assert "All done." not in [e.text for e in view.entries if isinstance(e, AssistantText)]
    assert len(load_events(path)) == len(full) - 1


def test_garbage_laden_copy(config: Path) -> None:
    path = transcript(config)
    clean_events = load_events(path)
    clean = list_sessions(config=config)[0]
    garbage = [
        b"not json at all",
        b"\xff\xfe\x00binary",
        b"{}",
        b"[1, 2, 3]",
        b'{"type":"user","message":5}',
        b'{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}',
        b'{"type":"user","message":{"content":[{"type":"tool_result"}]}}',
        b'{"type":"wholly-new-kind","payload":{"x":1}}',
        b'{"type":"user","isSidechain":true,"message":{"content":"side"}}',
        b"",
        b'{"type":"assistant"',
    ]
    lines = path.read_bytes().split(b"\n")
    mixed: list[bytes] = []
    for i, line in enumerate(lines):
        mixed.append(garbage[i % len(garbage)])
        mixed.append(line)
    path.write_bytes(b"\n".join(mixed))
    [session] = list_sessions(config=config)
    assert (clean.title, clean.model, clean.git_branch) == (
        session.title,
        session.model,
        session.git_branch,
    )
    assert [type(e) for e in clean_events] == [type(e) for e in load_events(path)]


def test_index_reads_appends_incrementally(config: Path) -> None:
    path = transcript(config)
    index = HistoryIndex(config)
    [before] = index.list()
    prompt = {
        "type": "user",
        "message": {"role": "user", "content": "a later prompt"},
        "timestamp": "2030-01-01T00:00:00.000Z",
        "gitBranch": "feature",
    }
    line = json.dumps(prompt, separators=(",", ":")).encode()
    with path.open("ab") as f:
        f.write(line[:20])  # a line still being written
    [partial] = index.list()
    assert before.message_count == partial.message_count
    with path.open("ab") as f:
        f.write(line[20:] + b"\n")
    [after] = index.list()
    assert before.message_count + 1 == after.message_count
    assert "feature" == after.git_branch
    assert "say hello" == after.title
    assert 1893456000.0 == after.last_activity
    # a replaced (shorter) file is read again from the start
    path.write_bytes(line + b"\n")
    [fresh] = index.list()
    assert (1, "a later prompt") == (fresh.message_count, fresh.title)


def test_a_large_file_lists_correctly(config: Path) -> None:
    """Many MiB of bookkeeping lines around the real ones (speed is in the benchmarks)."""
    path = transcript(config)
    real = path.read_bytes()
    filler = (
        json.dumps({"type": "attachment", "attachment": {"content": "x" * 500_000}}).encode()
        + b"\n"
    )
    path.write_bytes(real + filler * 30 + real)
    [session] = list_sessions(config=config)
    count = sum(1 for x in real_lines(config) if x.get("type") in ("user", "assistant"))
    assert count == session.message_count
    assert "say hello" == session.title


def test_find_and_resume(config: Path) -> None:
    assert transcript(config) == find_session_file(SESSION, config=config)
    assert transcript(config) == find_session_file(SESSION, "/work/demo", config=config)
    spec = resume_spec(SESSION, config=config, at="u-1", fork=True, model="m")
    assert (SESSION, "u-1", True, "m") == (
        spec.resume,
        spec.resume_session_at,
        spec.fork,
        spec.model,
    )
    assert spec.cwd and spec.cwd.endswith("/cli/work")
    for bad in ("nope", "../../etc/passwd", ""):
        with pytest.raises(HistoryNotFoundError):
            find_session_file(bad, config=config)
        with pytest.raises(HistoryNotFoundError):
            resume_spec(bad, config=config)


def _api_error_line(text: str, flag: Any, status: Any, request: Any) -> dict[str, Any]:
    """The CLI's synthetic assistant line for a failed API call, as 2.1.332 stores it."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": "f976aad5-2b40-4a93-95e6-30093cd449cd",
        "timestamp": "2026-11-28T10:00:00.547Z",
        "message": {
            "id": "c1da67be-8f7b-4e91-b3bd-9ce0268c9a78",
            "model": "<synthetic>",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": text}],
        },
        "requestId": request,
        "error": "server_error",
        "isApiErrorMessage": flag,
        "apiErrorStatus": status,
        "apiErrorType": "api_error",
        "sessionId": SESSION,
    }


_JSON = json_values(text_size=5, key_size=3, max_leaves=5)


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40).filter(str.strip),
    flag=st.one_of(st.just(True), _JSON),
    status=st.one_of(st.integers(100, 599), _JSON),
    request=st.one_of(st.just("req_FYSXu0LzxFKb3begWUflwMo9"), _JSON),
)
def test_a_stored_api_error_is_one_error_entry(
    text: str, flag: Any, status: Any, request: Any
) -> None:
    """The synthetic "API Error" line of a stored session, whatever its flag, status and
    request id hold: never lost; when flagged, one error entry (the status kept when it is a
    number, the request id when it is text), otherwise the assistant text it always was;
    its text shown once either way."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        line = _api_error_line("API Error: " + text, flag, status, request)
        shutil.copy(transcript(FIXTURES), path)
        with path.open("a") as f:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")  # as the CLI writes
        view = ChatView()
        view.apply(load_events(path))
    last = view.entries[-1]
    said = "API Error: " + text
    shown = [
        e
        for e in view.entries
        if (isinstance(e, AssistantText) and e.text == said)
        or (isinstance(e, ErrorEntry) and e.message == said)
    ]
    assert [last] == shown
    if flag is True:
        number = isinstance(status, int) and not isinstance(status, bool)
        expected = ErrorEntry(
            id=last.id,
            message=said,
            error_kind="api_error",
            status=status if number else None,
            request_id=request if isinstance(request, str) and request else None,
        )
        assert expected == last
    else:
        assert isinstance(last, AssistantText)
