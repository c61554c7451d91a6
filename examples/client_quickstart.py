"""Drive the Claude Code CLI with the low-level client: prompt, stream, approve.

python examples/client_quickstart.py "list the files here"      # the real CLI
python examples/client_quickstart.py --demo                        # the scripted stand-in
"""

from __future__ import annotations

import sys
import tempfile

import anyio

from claudecode import (
    ClaudeCodeOptions,
    InboundControlRequest,
    OutboundControlResponse,
    ResultMessage,
    StreamEvent,
    open_session,
)
from claudecode.stream_events import ContentBlockDelta, TextDelta


async def approve(req: InboundControlRequest) -> OutboundControlResponse:
    """Allow everything but deleting files."""
    command = str(getattr(req.request, "input", {}).get("command", ""))
    if command.startswith("rm "):
        return req.deny("not on my machine")
    return req.allow()


async def main(prompt: str, cli_path: str | None) -> int:
    options = ClaudeCodeOptions(cli_path=cli_path)
    async with open_session(options, can_use_tool=approve) as session:
        await session.send(prompt)
        async for message in session.receive_response():
            if isinstance(message, StreamEvent) and isinstance(message.event, ContentBlockDelta):
                if isinstance(message.event.delta, TextDelta):
                    print(message.event.delta.text, end="", flush=True)
            elif isinstance(message, ResultMessage):
                print(f"\n-- {message.subtype}, ${message.total_cost_usd:.4f}")
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
