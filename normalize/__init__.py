"""normalize: Claude Code tool calls and results as one tagged union of payloads."""
