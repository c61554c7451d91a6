"""Import paths that moved in 0.2.0 keep working for one minor version, with a warning."""

from __future__ import annotations

import importlib
import sys

import pytest

from adapter._moved import MOVED_MODULES


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_an_old_module_path_warns_and_is_the_module_where_it_lives_now(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    # The module keeps its own spec: relative imports in it still agree with its package.
    assert new == module.__spec__.name
    assert module.__package__ == module.__spec__.parent


def test_an_old_submodule_path_follows_its_package() -> None:
    sys.modules.pop("adapter.ws.protocol", None)
    with pytest.warns(DeprecationWarning, match="adapter.server.ws.protocol"):
        from adapter.ws.protocol import decode_client_frame  # type: ignore[import-not-found]
    from adapter.server.ws.protocol import decode_client_frame as now

    assert decode_client_frame is now


def test_history_names_once_in_adapter_chat_still_resolve_there() -> None:
    import adapter.chat
    import adapter.history

    with pytest.warns(DeprecationWarning, match="adapter.history.list_sessions"):
        assert adapter.chat.list_sessions is adapter.history.list_sessions
    with pytest.raises(AttributeError):
        _ = adapter.chat.no_such_name


def test_a_path_that_never_existed_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("adapter.no_such_module")
