"""Commands the CLI answers itself shown the same live and from history
(tests/fixtures/local_commands: one real run of ``/context``, ``/model`` and ``/cost``).

Live, the CLI answers such a command with a ``<synthetic>`` assistant message holding its
output; its transcript keeps the command (under the command's own name: ``/cost`` is stored
as ``/usage``), a meta caveat, and a ``system`` / ``local_command`` line with the output in
``<local-command-stdout>``. What the person saw live is the reference: the command as typed,
then its output as assistant text. A property test renders generated conversations (prompts,
answers, local commands typed under an alias or not, prompts queued ahead or withdrawn) from
the real lines both ways."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.events import Event, MessageChunk, UserMessage
from adapter.history import load_events
from tests.support.chat import live_events, shown
from tests.support.strategies import json_values

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "local_commands"
PROTOCOL = FIXTURES / "local_commands.protocol.jsonl"
TRANSCRIPT = FIXTURES / "local_commands.transcript.jsonl"


def test_the_recorded_commands_look_the_same_live_and_stored() -> None:
    live = shown(live_events(PROTOCOL))
    stored = shown(load_events(TRANSCRIPT))
    assert live == stored
    kinds = [e["kind"] for e in stored]
    assert ["user", "text", *["command", "text"] * 3, "user", "text"] == kinds
    assert ["context", "model", "cost"] == [e["name"] for e in stored if e["kind"] == "command"]
    context, model, cost = (stored[i]["text"] for i in (3, 5, 7))
    assert context.startswith("## Context Usage") and context == context.rstrip()
    assert model.startswith("Current model:")
    assert cost.startswith("Estimated cost:")


def test_an_alias_is_stored_under_the_commands_own_name() -> None:
    """What the fix is for: the transcript says /usage where the person typed /cost."""
    text = TRANSCRIPT.read_text()
    assert "<command-name>/usage</command-name>" in text
    assert "<command-name>/cost</command-name>" not in text


# -- generated conversations from the real lines --------------------------------------------


def _real_lines() -> dict[str, dict[str, Any]]:
    """One real line of each kind a conversation with local commands has."""
    found: dict[str, dict[str, Any]] = {}
    for raw in TRANSCRIPT.read_bytes().splitlines():
        line = json.loads(raw)
        kind = line.get("type")
        content = line.get("message", {}).get("content")
        if kind == "queue-operation":
            found.setdefault(line["operation"], line)
        elif kind == "system" and line.get("subtype") == "local_command":
            found.setdefault("output", line)
        elif kind == "assistant":
            found.setdefault("assistant", line)
        elif kind != "user":
            continue
        elif line.get("isMeta"):
            found.setdefault("caveat", line)
        elif isinstance(content, str) and content.startswith("<command-name>"):
            found.setdefault("command", line)
        elif isinstance(content, str):
            found.setdefault("prompt", line)
    assert {
        "enqueue",
        "dequeue",
        "output",
        "assistant",
        "caveat",
        "command",
        "prompt",
    } <= set(found)
    return found


REAL = _real_lines()

#: (as typed, as the CLI stores it)
_COMMANDS = [("context", "context"), ("model", "model"), ("cost", "usage"), ("usage", "usage")]
_words = st.text(alphabet="abcdefghij XYZ.,!?", min_size=1, max_size=20).filter(str.strip)
_output = st.text(alphabet="abc |#*-:\n", min_size=1, max_size=40).filter(str.strip)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("prompt"), _words, st.booleans()),
        st.tuples(st.just("answer"), _words, st.booleans()),
        st.tuples(st.sampled_from(_COMMANDS), _output, st.booleans()),
        st.tuples(st.just("withdrawn"), _words, st.booleans()),
    ),
    max_size=12,
)


def _line(kind: str, **changes: Any) -> dict[str, Any]:
    line = copy.deepcopy(REAL[kind])
    for key, value in changes.items():
        if key == "message_content":
            line["message"]["content"] = value
        else:
            line[key] = value
    return line


def _render(steps: list[tuple[Any, str, bool]]) -> tuple[list[dict[str, Any]], list[Event]]:
    """The transcript lines the CLI writes for ``steps``, and the events a live session
    gives for them. A prompt or command flagged ``ahead`` was sent while the step before it
    ran: its enqueue comes before that step's dequeue (the CLI's queue is first in, first
    out). A withdrawn prompt is enqueued and removed: never shown."""
    blocks: list[list[dict[str, Any]]] = []
    events: list[Event] = []
    for n, (kind, value, ahead) in enumerate(steps):
        if kind == "answer":
            line = _line("assistant", message_content=[{"type": "text", "text": value}])
            line["message"]["id"] = f"msg_{n}"
            blocks.append([line])
            events.append(MessageChunk(message_id=f"msg_{n}", text=value))
            continue
        typed = value if kind in ("prompt", "withdrawn") else f"/{kind[0]}"
        enqueue = _line("enqueue", content=typed)
        block: list[dict[str, Any]] = []
        if ahead and blocks:  # sent before the step before it was taken
            before = blocks[-1]
            at = next((i for i, x in enumerate(before) if x.get("operation") == "dequeue"), 0)
            before.insert(at, enqueue)
        else:
            block.append(enqueue)
        if kind == "withdrawn":
            blocks.append([*block, _line("enqueue", operation="remove", content=typed)])
            continue
        block.append(_line("dequeue"))
        if kind == "prompt":
            block.append(_line("prompt", message_content=value))
            events.append(UserMessage(text=value))
        else:
            typed_name, stored_name = kind
            command = (
                f"<command-name>/{stored_name}</command-name>\n"
                f"            <command-message>{stored_name}</command-message>\n"
                "            <command-args></command-args>"
            )
            stdout = f"<local-command-stdout>{value}\n\n</local-command-stdout>"
            block += [
                _line("caveat"),
                _line("command", message_content=command),
                _line("output", content=stdout, uuid=f"out-{n}"),
            ]
            events += [
                UserMessage(text=f"/{typed_name}"),
                MessageChunk(message_id=f"x{n}", text=value.rstrip()),
            ]
        blocks.append(block)
    return [line for block in blocks for line in block], events


@settings(max_examples=200, deadline=None)
@given(_steps)
def test_generated_local_commands_look_the_same_live_and_stored(
    tmp_path_factory: Any, steps: list[tuple[Any, str, bool]]
) -> None:
    lines, live = _render(steps)
    path = tmp_path_factory.mktemp("local") / "t.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    assert shown(live) == shown(load_events(path))


_json = json_values(floats=False)


@settings(max_examples=200, deadline=None)
@given(_json, _json, st.sampled_from(["enqueue", "dequeue", "remove", "other"]))
def test_mutated_queue_and_output_lines_lose_nothing(
    tmp_path_factory: Any, content: Any, output: Any, operation: str
) -> None:
    """Mutated real lines: whatever a queue operation or an output line holds, the prompt
    and the command are shown (an output only when it is a tagged string)."""
    lines = [
        _line("enqueue", operation=operation, content=content),
        _line("dequeue"),
        _line("prompt", message_content="hello"),
        _line("enqueue", content=content),
        _line("dequeue", operation=operation),
        _line("command"),
        _line("output", content=output),
    ]
    path = tmp_path_factory.mktemp("mutated") / "t.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    entries = shown(load_events(path))
    assert "user" == entries[0]["kind"] and "hello" == entries[0]["text"]
    assert "command" == entries[1]["kind"]
    assert len(entries) <= 3
