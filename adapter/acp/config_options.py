"""The session configuration options the agent offers (ACP ``configOptions``): the model and
the effort (``thought_level``), each a select whose values come from the CLI's
``initialize`` answer once it has given one.

Effort changes mid-session through the CLI's ``apply_flag_settings`` control request
(:meth:`claudecode.Session.set_effort`), from the next model request on; ``default`` removes
the level, so the model's own default applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from claudecode.options import EFFORT_LEVELS

from ..events import ModelChoice

__all__ = (
    "config_options",
    "effort_levels",
    "effort_option",
    "MODEL_ALIASES",
    "model_options",
)

#: Model choices when the CLI lists none: the CLI's own aliases.
MODEL_ALIASES: tuple[tuple[str, str], ...] = (
    ("default", "Default"),
    ("sonnet", "Sonnet"),
    ("opus", "Opus"),
    ("haiku", "Haiku"),
)

_EFFORT_NAMES = {
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "xhigh": "Extra high",
    "max": "Max",
}


def model_options(
    current: str | None, configured: str | None, models: Sequence[ModelChoice]
) -> list[dict[str, Any]]:
    """The ``model`` config option: the models the CLI's ``initialize`` answer lists (its
    aliases until it did), the agent's configured model and the current one among them."""
    choices = [("default", "Default")]
    choices += [(m.value, m.name or m.value) for m in models if m.value != "default"]
    if not models:
        choices = list(MODEL_ALIASES)
    for extra in (configured, current):
        if extra and all(v != extra for v, _ in choices):
            choices.append((extra, extra))
    return [
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": current or "default",
            "options": [{"value": v, "name": n} for v, n in choices],
        }
    ]


def effort_levels(model: str | None, models: Sequence[ModelChoice]) -> list[str]:
    """The effort levels of ``model`` (``None``: the default model): those its entry in the
    CLI's list names (none: the model has no effort setting); every level the CLI takes
    while it has listed no models, or for a model its list does not name (a full model id)."""
    wanted = model or "default"
    for choice in models:
        if choice.value == wanted:
            return [level for level in EFFORT_LEVELS if level in choice.effort_levels]
    return list(EFFORT_LEVELS)


def effort_option(
    current: str | None, model: str | None, models: Sequence[ModelChoice]
) -> list[dict[str, Any]]:
    """The ``effort`` config option (category ``thought_level``), or none for a model
    without an effort setting. ``default`` is the model's own level."""
    levels = effort_levels(model, models)
    if not levels:
        return []
    if current is not None and current not in levels:
        levels.append(current)  # chosen before the model changed: still shown as current
    return [
        {
            "id": "effort",
            "name": "Effort",
            "description": "How much the model thinks before it answers",
            "category": "thought_level",
            "type": "select",
            "currentValue": current or "default",
            "options": [{"value": "default", "name": "Default"}]
            + [{"value": v, "name": _EFFORT_NAMES.get(v, v)} for v in levels],
        }
    ]


def config_options(
    *,
    model: str | None,
    configured_model: str | None,
    models: Sequence[ModelChoice],
    effort: str | None,
) -> list[dict[str, Any]]:
    """Every config option of a session: the model, then the effort."""
    return [
        *model_options(model, configured_model, models),
        *effort_option(effort, model, models),
    ]
