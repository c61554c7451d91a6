"""How a turn of the fake CLI learns that the host interrupted it.

Its own module because the turn runners (``_fake_turns``, ``_fake_tooluse``) raise it and the
control plane (``_fake_cli``) catches it: both import it from here, neither the other.
"""

from __future__ import annotations

__all__ = ("Interrupted",)


class Interrupted(Exception):
    """Raised inside a turn when the host interrupted it (or stdin closed mid-prompt).

    ``open_request_id`` is the CLI's pending control request (permission prompt or hook),
    if any; ``tool_result_sent`` says the tool_result line was already written (a deny with
    ``interrupt: true``).
    """

    def __init__(self, open_request_id: str | None = None, *, tool_result_sent: bool = False):
        super().__init__("interrupted")
        self.open_request_id = open_request_id
        self.tool_result_sent = tool_result_sent
