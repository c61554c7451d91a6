"""TodoWrite and TaskUpdate / TaskList / TaskGet → ``manage_todos``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import Missing, as_int, as_list, as_map, as_str, first_str
from ._result import ToolResult
from .payloads import ManageTodos, TodoItem

__all__ = ("todos_result", "use_task_get", "use_task_list", "use_task_update", "use_todo_write")


def _id(data: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        text = as_str(value)
        if text is not None:
            return text
        number = as_int(value) if isinstance(value, int) else None
        if number is not None:
            return str(number)
    return None


def _item(raw: object) -> TodoItem | None:
    data = as_map(raw)
    description = first_str(data, "content", "subject", "description", "title")
    if description is None:
        return None
    return TodoItem(
        id=_id(data, "id", "taskId"),
        description=description,
        status=as_str(data.get("status")),
        active_form=as_str(data.get("activeForm")),
    )


def _items(raw: object) -> tuple[TodoItem, ...]:
    return tuple(item for item in map(_item, as_list(raw)) if item is not None)


def use_todo_write(name: str, data: Mapping[str, Any]) -> ManageTodos:
    """``TodoWrite {todos: [{content, status, activeForm}]}``: the whole new list."""
    todos = data.get("todos")
    if not isinstance(todos, list):
        raise Missing
    return ManageTodos(tool=name, operation="write", items=_items(todos))


def use_task_update(name: str, data: Mapping[str, Any]) -> ManageTodos:
    """``TaskUpdate {taskId, status, subject, description, activeForm, ...}``."""
    task_id = _id(data, "taskId", "task_id", "id")
    if task_id is None:
        raise Missing
    item = TodoItem(
        id=task_id,
        description=first_str(data, "subject", "description") or "",
        status=as_str(data.get("status")),
        active_form=as_str(data.get("activeForm")),
    )
    return ManageTodos(tool=name, operation="update", items=(item,))


def use_task_list(name: str, data: Mapping[str, Any]) -> ManageTodos:
    """``TaskList {}``: the items come with the result."""
    return ManageTodos(tool=name, operation="list")


def use_task_get(name: str, data: Mapping[str, Any]) -> ManageTodos:
    """``TaskGet {taskId}``."""
    task_id = _id(data, "taskId", "task_id", "id")
    if task_id is None:
        raise Missing
    return ManageTodos(tool=name, operation="get", items=(TodoItem(id=task_id),))


def todos_result(payload: ManageTodos, result: ToolResult) -> ManageTodos:
    """Items from ``newTodos`` (TodoWrite), ``tasks`` (TaskList) or ``task`` (TaskGet)."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    data = result.structured
    items: tuple[TodoItem, ...] | None = None
    if isinstance(data.get("newTodos"), list):
        items = _items(data.get("newTodos"))
    elif isinstance(data.get("tasks"), list):
        items = _items(data.get("tasks"))
    elif isinstance(data.get("task"), Mapping):
        task = _item(data.get("task"))
        items = None if task is None else (task,)
    elif payload.operation == "update" and payload.items:
        change = as_map(data.get("statusChange"))
        status = as_str(change.get("to"))
        if status is not None:
            items = (msgspec.structs.replace(payload.items[0], status=status),)
    if items is None:
        return payload
    return msgspec.structs.replace(payload, items=items)
