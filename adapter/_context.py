"""How full the model's context window is: per-message usage against the model's window size.

The numbers come from two places:

* **used** — the usage of the latest main-chain API message: ``message_start`` carries the
  full usage (``output_tokens`` 1), each ``message_delta`` overrides the counts it carries
  (usually only ``output_tokens``; after an interrupt all of them). ``used`` is
  ``input + output + cache_creation + cache_read``: the whole prompt plus the answer so far,
  which is what the next request will have to fit.
* **size** — ``result.modelUsage[<model>].contextWindow``. The keys may carry a suffix such as
  ``[1m]`` (``claude-opus-4-8[1m]``) while the API reports ``claude-opus-4-8``, so the model
  is matched with the suffix stripped, and by prefix. A size once learned is kept for later
  turns (per model: every key of ``modelUsage`` is remembered). Before a result names the
  model the size is guessed: 1 000 000 for a model named ``...[1m]``, otherwise the default
  (200 000).

:meth:`ContextTracker.snapshot` returns a :class:`~adapter.events.ContextWindow` only when the
numbers changed since the last one, so callers can ask after every ``message_delta`` and every
``result`` without flooding subscribers. (The real CLI never sends Kandev's ``model_usage`` /
``context_window`` / ``total_input_tokens`` keys; nothing here reads them.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from claudecode.messages import ModelUsage
from claudecode.stream_events import Usage

from .events import ContextWindow

__all__ = ("DEFAULT_CONTEXT_WINDOW", "ContextTracker", "model_base")

#: The window assumed until the CLI reports one.
DEFAULT_CONTEXT_WINDOW: Final = 200_000
_ONE_MILLION: Final = 1_000_000


def model_base(name: str | None) -> str:
    """``"claude-opus-4-8[1m]"`` -> ``"claude-opus-4-8"`` (lower case, suffix stripped)."""
    if not name:
        return ""
    base = name.strip().lower()
    if base.endswith("]") and "[" in base:
        base = base[: base.rindex("[")]
    return base.strip()


def _matches(key: str, model: str) -> bool:
    a, b = model_base(key), model_base(model)
    return bool(a and b) and (a == b or a.startswith(b) or b.startswith(a))


def _count(value: int | None) -> int:
    return value if isinstance(value, int) and value > 0 else 0


class ContextTracker:
    """Tracks the usage of the latest API message and the window sizes; pure, never raises."""

    def __init__(self, default_size: int = DEFAULT_CONTEXT_WINDOW) -> None:
        self._default = default_size if default_size > 0 else DEFAULT_CONTEXT_WINDOW
        self._learned: dict[str, int] = {}
        self._hinted: dict[str, int] = {}
        self._model: str | None = None
        self._message_id: str | None = None
        self._counts: dict[str, int] | None = None
        # The last snapshot's size and used counts (-1: none yet); two ints, no tuple per call.
        self._last_size = -1
        self._last_used = -1
        self._size: int | None = None  # ``size`` until the model or a table changes

    @property
    def size(self) -> int:
        """The window of the current model: learned, else guessed from its name, else default."""
        size = self._size
        if size is None:
            size = self._size = self._find_size()
        return size

    def _find_size(self) -> int:
        for table in (self._learned, self._hinted):
            if self._model:
                for key, window in table.items():
                    if _matches(key, self._model):
                        return window
        if not self._model and len(self._learned) == 1:
            return next(iter(self._learned.values()))
        return self._default

    def use_model(self, model: str | None) -> None:
        """The model in use now; a name like ``...[1m]`` hints at a one-million-token window."""
        if not model or model == self._model:
            return
        self._model = model
        self._size = None
        if model.strip().lower().endswith("[1m]"):
            self._hinted[model_base(model)] = _ONE_MILLION

    def start(self, message_id: str, usage: Usage | None) -> None:
        """A new API message started (``message_start``) with this usage."""
        self._message_id = message_id
        self._counts = {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0}
        self.update(usage)

    def observe(self, message_id: str, usage: Usage | None) -> None:
        """An ``assistant`` line: use its usage for a message no ``message_start`` announced."""
        if usage is not None and message_id != self._message_id:
            self.start(message_id, usage)

    def update(self, usage: Usage | None) -> None:
        """Override the counts a ``message_delta`` usage carries (absent counts are kept)."""
        if usage is None:
            return
        counts = self._counts
        if counts is None:
            counts = self._counts = {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0}
        # Spelled out, no loop over (key, value) pairs: once per message_start / message_delta.
        value = usage.input_tokens
        if value is not None:
            counts["input"] = _count(value)
        value = usage.output_tokens
        if value is not None:
            counts["output"] = _count(value)
        value = usage.cache_creation_input_tokens
        if value is not None:
            counts["cache_creation"] = _count(value)
        value = usage.cache_read_input_tokens
        if value is not None:
            counts["cache_read"] = _count(value)

    def learn_sizes(self, model_usage: Mapping[str, ModelUsage]) -> None:
        """Remember every model's ``contextWindow`` from a result's ``modelUsage``."""
        for key, usage in model_usage.items():
            window = usage.context_window
            if isinstance(window, int) and window > 0 and model_base(key):
                self._learned[model_base(key)] = window
                self._size = None

    def snapshot(self) -> ContextWindow | None:
        """The current :class:`ContextWindow`; ``None`` if unknown or unchanged since the last."""
        if self._counts is None:
            return None
        counts = self._counts
        used = counts["input"] + counts["output"] + counts["cache_creation"] + counts["cache_read"]
        size = self.size
        if size == self._last_size and used == self._last_used:
            return None
        self._last_size = size
        self._last_used = used
        return ContextWindow(
            size=size,
            used=used,
            remaining=max(size - used, 0),
            percent=round(used * 100.0 / size, 2),
        )
