"""A claude-agent-sdk program moved to claudecode-bridge by changing one import.

python examples/sdk_dropin.py "list the files here"      # the real CLI
python examples/sdk_dropin.py --demo                        # the scripted stand-in
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

import anyio

# Was: from claude_agent_sdk import (...)
from claudecode.sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
)


async def can_use_tool(
    tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    """Allow everything but deleting files; answer the agent's questions (AskUserQuestion)
    with their first option, the answers in the tool's updated input as the SDK documents."""
    if tool_name == "AskUserQuestion":
        answers = {q["question"]: q["options"][0]["label"] for q in tool_input["questions"]}
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})
    if str(tool_input.get("command", "")).startswith("rm "):
        return PermissionResultDeny(message="not on my machine")
    return PermissionResultAllow()


async def main(prompt: str, cli_path: str | None) -> int:
    options = ClaudeAgentOptions(
        cli_path=cli_path,
        can_use_tool=can_use_tool,
        system_prompt={"type": "preset", "preset": "claude_code", "append": "Be brief."},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(block.text)
            elif isinstance(message, ResultMessage):
                print(f"-- {message.subtype}, ${message.total_cost_usd or 0:.4f}")
                return 1 if message.is_error else 0
    return 1


if __name__ == "__main__":
    demo = "--demo" in sys.argv
    words = [a for a in sys.argv[1:] if a != "--demo"]
    with tempfile.TemporaryDirectory() as scratch:
        cli = None
        if demo:
            from adapter.commands.demo import demo_cli

            cli = str(demo_cli(scratch))
        raise SystemExit(anyio.run(main, " ".join(words) or "Give me a tour.", cli))
