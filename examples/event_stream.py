"""Consume one session as normalized events, the way a UI would.

python examples/event_stream.py "explain this repository"      # the real CLI
python examples/event_stream.py --demo                           # the scripted stand-in
"""

from __future__ import annotations

import sys
import tempfile

import anyio

from adapter import (
    AgentSession,
    Complete,
    MessageChunk,
    PermissionDecision,
    PermissionRequest,
    QuestionRequest,
    SessionConfig,
    ToolCall,
    ToolUpdate,
)


async def main(prompt: str, cli_path: str | None) -> int:
    config = SessionConfig(cli_path=cli_path)  # the "supervised" policy asks for every write
    async with AgentSession(config) as session:
        with session.subscribe(after_seq=0) as events:
            await session.prompt(prompt)
            async for event in events:
                match event:
                    case MessageChunk(text=text):
                        print(text, end="", flush=True)
                    case ToolCall(title=title):
                        print(f"\n[tool] {title}")
                    case ToolUpdate(title=title, status=status):
                        print(f"[{status}] {title}")
                    case PermissionRequest(pending_id=pending_id, title=title):
                        print(f"[approve] {title}")
                        await session.answer_permission(pending_id, PermissionDecision("allow"))
                    case QuestionRequest(pending_id=pending_id, questions=questions):
                        # A UI shows a form; here every question takes its first option.
                        answers = {q.question: [q.options[0].label] for q in questions}
                        print(f"[answer] {answers}")
                        await session.answer_question(pending_id, answers)
                    case Complete(is_error=failed, cost_usd=cost):
                        print(f"\n-- {'failed' if failed else 'done'}, ${cost:.4f}")
                        return 1 if failed else 0
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
