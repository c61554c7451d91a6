"""What the fake Messages API answers for each vendored e2e test: the model's side of the
conversation the test asks for ("Run: echo ...", "Use the Agent tool ...").

A test not listed gets a plain text answer to every request, which is all a test needs
when it checks what the CLI and the library do (init data, control requests, hooks that
fire without a tool). Everything else the tests check — hooks, permissions, tool
execution, files, transcripts — is done for real by the CLI and the library.
"""

from __future__ import annotations

import re

from tests.realcli.script import (
    Rule,
    Script,
    Text,
    Thinking,
    Turn,
    error_turn,
    text_turn,
    tool_turn,
)

__all__ = ("script_for",)


def _bash(command: str) -> Turn:
    return tool_turn("Bash", {"command": command, "description": "Run the command"})


def _structured(output: dict[str, object]) -> list[Turn]:
    return [tool_turn("StructuredOutput", output), text_turn("Done.")]


_GREETER = tool_turn(
    "Agent",
    {
        "description": "Greet",
        "prompt": "say hi",
        "subagent_type": "greeter",
        "run_in_background": False,
    },
)


def _write_requested(prompt: str) -> Turn:
    # The file name carries a random suffix: the tool call takes it from the prompt.
    match = re.search(r"create the file (\S+) containing", prompt)
    path = match.group(1) if match else "missing.txt"
    return tool_turn("Write", {"file_path": path, "content": "hello"})


_MAIN: dict[str, list[Turn]] = {
    # hooks
    "test_hook_with_permission_decision_and_reason": [_bash("echo 'hello'"), text_turn("Done.")],
    "test_hook_with_continue_and_stop_reason": [_bash("echo 'test message'"), text_turn("Done.")],
    "test_hook_with_additional_context": [_bash("echo 'testing hooks'"), text_turn("Done.")],
    "test_pre_tool_use_hook_with_additional_context": [
        _bash("echo 'test additional context'"),
        text_turn("Done."),
    ],
    "test_post_tool_use_hook_with_tool_use_id": [
        _bash("echo 'test tool_use_id'"),
        text_turn("Done."),
    ],
    "test_multiple_hooks_together": [_bash("echo 'multi-hook test'"), text_turn("Done.")],
    # permissions
    "test_permission_callback_gets_called": [_bash("touch probe.txt"), text_turn("Done.")],
    # in-process MCP tools
    "test_sdk_mcp_tool_execution": [
        tool_turn("mcp__test__echo", {"text": "hi"}),
        text_turn("Echoed."),
    ],
    "test_sdk_mcp_permission_enforcement": [
        tool_turn("mcp__test__greet", {"name": "Alice"}),
        tool_turn("mcp__test__echo", {"text": "test"}),
        text_turn("Done."),
    ],
    "test_sdk_mcp_multiple_tools": [
        tool_turn("mcp__multi__echo", {"text": "test"}),
        tool_turn("mcp__multi__greet", {"name": "Bob"}),
        text_turn("Done."),
    ],
    "test_sdk_mcp_without_permissions": [
        tool_turn("mcp__noperm__echo", {"text": "x"}),
        text_turn("Not allowed."),
    ],
    # structured output: the model answers through the StructuredOutput tool
    "test_simple_structured_output": _structured(
        {"file_count": 12, "has_tests": True, "test_file_count": 3}
    ),
    "test_nested_structured_output": _structured(
        {"analysis": {"word_count": 2, "character_count": 11}, "words": ["Hello", "world"]}
    ),
    "test_structured_output_with_enum": _structured(
        {"has_tests": True, "test_framework": "pytest", "test_count": 17}
    ),
    "test_structured_output_with_tools": _structured({"file_count": 4, "has_readme": False}),
    # partial messages: thinking, then text
    "test_include_partial_messages_stream_events": [
        Turn(blocks=(Thinking("Three jokes: cats, dogs, 2 ducks."), Text("Why did the duck...")))
    ],
    "test_include_partial_messages_thinking_deltas": [
        Turn(blocks=(Thinking("2 + 2: two and two make 4."), Text("4")), chunk=4)
    ],
    # sub-agents
    "test_forward_subagent_text_delivers_attributed_text": [_GREETER, text_turn("DONE")],
    "test_subagent_text_not_forwarded_by_default": [_GREETER, text_turn("DONE")],
    "test_subagent_messages_carry_parent_tool_use_id": [_GREETER, text_turn("DONE")],
}

_SUBAGENT: dict[str, list[Turn]] = {
    name: [text_turn("Hi there, nice to meet you!")]
    for name in (
        "test_forward_subagent_text_delivers_attributed_text",
        "test_subagent_text_not_forwarded_by_default",
        "test_subagent_messages_carry_parent_tool_use_id",
    )
}

_RULES: dict[str, list[Rule]] = {
    # A model the API does not know: its 404, as the real API answers it.
    "test_query_api_error_raises_result_error_with_payload": [
        Rule(
            "Reply with: pong",
            error_turn(404, "model: claude-nonexistent-model-for-sdk-e2e"),
        )
    ],
    "test_query_async_iterable_prompt_with_only_can_use_tool": [
        Rule("Use the Write tool", _write_requested, times=1)
    ],
    "test_query_string_prompt_with_can_use_tool": [
        Rule("Use the Write tool", _write_requested, times=1)
    ],
}


def script_for(test_name: str) -> Script:
    """The fake API's script for one e2e test (by its function name)."""
    return Script(
        main=list(_MAIN.get(test_name, [])),
        subagent=list(_SUBAGENT.get(test_name, [])),
        rules=list(_RULES.get(test_name, [])),
        exhausted=text_turn("one"),
    )
