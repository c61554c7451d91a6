"""What a person sees of a user message: the CLI wraps some prompts in tags.

The CLI records slash commands as ``<command-name>/x</command-name>`` (with
``<command-message>`` and ``<command-args>``), their output as
``<local-command-stdout>`` / ``<local-command-stderr>``, an interruption as
``[Request interrupted by user]``, and prepends IDE context (``<ide_selection>``,
``<ide_opened_file>``) and ``<system-reminder>`` blocks to prompts. :func:`parse_user_text`
turns such a text into one :class:`UserText`. Pure; never raises.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

__all__ = ("UserText", "parse_user_text")

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_IDE = re.compile(r"<(ide_selection|ide_opened_file)>(.*?)</\1>", re.S)
_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_STDOUT = re.compile(
    r"<local-command-(?:stdout|stderr)>(.*?)</local-command-(?:stdout|stderr)>", re.S
)
_TYPED = re.compile(r"/([A-Za-z][\w:.-]*)(?:[ \t]+(.*))?", re.S)
_INTERRUPTS = (
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
)


class UserText(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A user message as a UI shows it.

    ``kind``: ``text`` (a prompt), ``command`` (``name`` and ``args`` of a slash command),
    ``command_output`` (``text`` is the output), ``interrupt``, or ``hidden`` (nothing to show:
    only system reminders).
    """

    kind: Literal["text", "command", "command_output", "interrupt", "hidden"]
    text: str = ""
    name: str = ""
    args: str = ""
    selections: tuple[str, ...] = ()


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def parse_user_text(text: str) -> UserText:
    """Classify ``text`` (a user message's text) and strip the CLI's tags from it."""
    body = _REMINDER.sub("", text)
    selections = tuple(m.group(2).strip() for m in _IDE.finditer(body))
    body = _IDE.sub("", body).strip()
    if body in _INTERRUPTS:
        return UserText(kind="interrupt", text=body)
    outputs = _STDOUT.findall(body)
    name = _NAME.search(body)
    if name is not None:
        args = _ARGS.search(body)
        return UserText(
            kind="command",
            name=name.group(1).strip().lstrip("/"),
            args=args.group(1).strip() if args else "",
        )
    if outputs:
        return UserText(kind="command_output", text=_strip_ansi("\n".join(outputs)).strip())
    if not body:
        return UserText(kind="hidden", selections=selections)
    typed = _TYPED.fullmatch(body)
    if typed is not None and "\n" not in typed.group(1):
        return UserText(kind="command", name=typed.group(1), args=(typed.group(2) or "").strip())
    return UserText(kind="text", text=body, selections=selections)
