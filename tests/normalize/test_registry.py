"""Dispatch by tool name, MCP names, misc tools, and the never-raise guarantee."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normalize import (
    DEFAULT_MAX_OUTPUT_BYTES,
    Generic,
    Misc,
    NormalizedPayload,
    ShellExec,
    decode_payload,
    encode_payload,
    normalize_tool_result,
    normalize_tool_use,
    split_mcp_name,
    title_for,
)
from normalize.payloads import Payload
from normalize.registry import MISC, USE

TOOLS = sorted([*USE, *MISC, "mcp__srv__do_thing", "Unknown", ""])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=16,
)

# Inputs that look like real ones: known keys with values of any JSON type.
KEYS = [
    "command", "description", "timeout", "run_in_background", "file_path", "content",
    "old_string", "new_string", "replace_all", "edits", "offset", "limit", "pattern",
    "path", "glob", "output_mode", "-i", "url", "prompt", "query", "allowed_domains",
    "subagent_type", "todos", "subject", "taskId", "plan", "questions", "notebook_path",
    "new_source", "cell_id", "edit_mode", "bash_id", "shell_id", "task_id", "skill",
]  # fmt: skip
tool_inputs = json_values | st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
RESULT_KEYS = [
    "stdout", "stderr", "interrupted", "type", "file", "content", "numLines", "filePath",
    "structuredPatch", "originalFile", "filenames", "numFiles", "mode", "status", "agentId",
    "totalTokens", "newTodos", "tasks", "task", "answers", "results", "code", "exitCode",
    "durationSeconds", "edits", "cell_id", "plan",
]  # fmt: skip
tool_results = json_values | st.dictionaries(st.sampled_from(RESULT_KEYS), json_values, max_size=6)


def _check(payload: NormalizedPayload) -> None:
    assert isinstance(payload, Payload)
    assert decode_payload(encode_payload(payload)) == payload
    assert isinstance(title_for(payload), str)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(TOOLS) | json_values,
    tool_input=tool_inputs,
    content=json_values
    | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text()})),
    is_error=json_values,
    tool_use_result=tool_results,
    max_bytes=st.integers(-10, 200) | st.just(DEFAULT_MAX_OUTPUT_BYTES),
)
def test_never_raises(
    name: Any, tool_input: Any, content: Any, is_error: Any, tool_use_result: Any, max_bytes: int
) -> None:
    """Arbitrary JSON for name, input and result gives a payload that round-trips."""
    payload = normalize_tool_use(name, tool_input)
    _check(payload)
    after = normalize_tool_result(
        payload,
        content=content,
        is_error=is_error,
        tool_use_result=tool_use_result,
        max_output_bytes=max_bytes,
    )
    _check(after)
    assert type(after) is type(payload)


@pytest.mark.parametrize("name", sorted(USE))
def test_known_tool_with_wrong_input_falls_back_to_generic(name: str) -> None:
    """A known tool whose input is not an object gives generic with the raw input."""
    payload = normalize_tool_use(name, ["not", "an", "object"])
    assert payload == Generic(tool=name, name=name, input=["not", "an", "object"])


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Bash", {"command": 42}),
        ("Read", {}),
        ("Edit", {"file_path": "a", "old_string": "x"}),
        ("MultiEdit", {"file_path": "a", "edits": "nope"}),
        ("Grep", {"path": "src"}),
        ("WebFetch", {"prompt": "p"}),
        ("TodoWrite", {"todos": {}}),
        ("Agent", {}),
    ],
)
def test_missing_required_field_falls_back_to_generic(name: str, tool_input: Any) -> None:
    """Missing or mistyped required fields degrade to generic instead of raising."""
    payload = normalize_tool_use(name, tool_input)
    assert isinstance(payload, Generic)
    assert payload.input == tool_input


def test_unknown_tool_is_generic() -> None:
    """An unknown tool keeps its name and raw input; the result text becomes its output."""
    payload = normalize_tool_use("FancyNewTool", {"a": [1, 2]})
    assert payload == Generic(tool="FancyNewTool", name="FancyNewTool", input={"a": [1, 2]})
    after = normalize_tool_result(payload, content=[{"type": "text", "text": "done"}])
    assert isinstance(after, Generic)
    assert after.output == "done"
    assert title_for(after) == "FancyNewTool"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mcp__fe__echo", ("fe", "echo")),
        ("mcp__my_server__do__it", ("my_server", "do__it")),
        ("mcp__claude-in-chrome__navigate", ("claude-in-chrome", "navigate")),
        ("mcp__fe", None),
        ("mcp____x", None),
        ("Bash", None),
    ],
)
def test_split_mcp_name(name: str, expected: tuple[str, str] | None) -> None:
    """``mcp__<server>__<tool>`` splits at the first ``__`` after the prefix."""
    assert split_mcp_name(name) == expected


def test_mcp_result_with_image_keeps_blocks_when_small() -> None:
    """Non-text MCP content is kept as raw blocks when it fits, else replaced by its text."""
    payload = normalize_tool_use("mcp__shot__take", {})
    blocks = [
        {"type": "text", "text": "took it"},
        {"type": "image", "source": {"type": "base64", "data": "A" * 500}},
    ]
    kept = normalize_tool_result(payload, content=blocks)
    assert isinstance(kept, Generic)
    assert kept.output == blocks
    cut = normalize_tool_result(payload, content=blocks, max_output_bytes=100)
    assert isinstance(cut, Generic)
    assert (cut.output, cut.truncated) == ("took it", True)
    assert title_for(kept) == "take (shot)"


def test_mcp_error_result() -> None:
    """An MCP error result sets ``error``, not ``output``."""
    payload = normalize_tool_use("mcp__fe__echo", {"text": "x"})
    after = normalize_tool_result(payload, content="boom", is_error=True)
    assert isinstance(after, Generic)
    assert (after.error, after.output) == ("boom", None)


@pytest.mark.parametrize("name", sorted(MISC))
def test_misc_tools_get_a_label(name: str) -> None:
    """Known tools without a dedicated shape are misc with a label and the raw input."""
    payload = normalize_tool_use(name, {"skill": "pdf", "query": "q"})
    assert isinstance(payload, Misc)
    assert payload.label
    assert payload.input == {"skill": "pdf", "query": "q"}


def test_skill_title() -> None:
    """A misc title is the label plus the detail worth showing."""
    payload = normalize_tool_use("Skill", {"skill": "pdf"})
    assert title_for(payload) == "Use skill: pdf"


def test_raw_json_input_and_result_are_decoded() -> None:
    """``bytes`` / ``msgspec.Raw`` inputs and results are decoded before normalising."""
    payload = normalize_tool_use("Bash", msgspec.Raw(b'{"command": "ls"}'))
    assert isinstance(payload, ShellExec)
    assert payload.command == "ls"
    after = normalize_tool_result(
        payload,
        content="a\nb",
        tool_use_result=b'{"stdout": "a\\nb", "stderr": "", "interrupted": false}',
    )
    assert isinstance(after, ShellExec)
    assert after.output is not None
    assert after.output.stdout == "a\nb"


def test_result_for_a_non_payload_is_generic() -> None:
    """Passing something that is not a payload still gives a payload."""
    after: NormalizedPayload = normalize_tool_result(
        "garbage",  # type: ignore[arg-type]
        content="text",
        is_error=True,
    )
    assert isinstance(after, Generic)
    assert after.error == "text"
