"""TodoWrite and TaskUpdate / TaskList / TaskGet."""

from __future__ import annotations

from normalize import (
    ManageTodos,
    TodoItem,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)


def _todos(payload: object) -> ManageTodos:
    assert isinstance(payload, ManageTodos)
    return payload


TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "", "status": "pending"},
    {"status": "pending"},  # no text: dropped
]


def test_todo_write_items() -> None:
    """TodoWrite: every todo with text becomes an item, in order."""
    payload = _todos(normalize_tool_use("TodoWrite", {"todos": TODOS}))
    assert payload.operation == "write"
    assert payload.items == (
        TodoItem(description="Read the code", status="completed", active_form="Reading the code"),
        TodoItem(description="Fix the bug", status="in_progress", active_form="Fixing the bug"),
        TodoItem(description="", status="pending"),
    )
    assert title_for(payload) == "Update todos (3 items)"


def test_todo_write_prefers_new_todos_of_the_result() -> None:
    """``tool_use_result.newTodos`` is the list the CLI actually kept."""
    payload = normalize_tool_use("TodoWrite", {"todos": TODOS})
    new = [{"content": "Only this", "status": "pending", "activeForm": "Doing", "id": "1"}]
    after = _todos(
        normalize_tool_result(
            payload,
            content="Todos have been modified",
            tool_use_result={"oldTodos": [], "newTodos": new},
        )
    )
    assert after.items == (
        TodoItem(id="1", description="Only this", status="pending", active_form="Doing"),
    )


def test_task_update() -> None:
    """TaskUpdate: one item with the id and new status; statusChange confirms it."""
    payload = _todos(normalize_tool_use("TaskUpdate", {"taskId": "3", "status": "in_progress"}))
    assert (payload.operation, payload.items) == (
        "update",
        (TodoItem(id="3", status="in_progress"),),
    )
    assert title_for(payload) == "Update task #3"
    after = _todos(
        normalize_tool_result(
            payload,
            content="Updated task #3 status",
            tool_use_result={
                "success": True,
                "taskId": "3",
                "updatedFields": ["status"],
                "statusChange": {"from": "pending", "to": "completed"},
            },
        )
    )
    assert after.items[0].status == "completed"


def test_task_list() -> None:
    """TaskList: the items come from the result's ``tasks``."""
    payload = _todos(normalize_tool_use("TaskList", {}))
    assert (payload.operation, title_for(payload)) == ("list", "List tasks")
    tasks = [
        {"id": "1", "subject": "a", "status": "pending", "blockedBy": []},
        {"id": "2", "subject": "b", "status": "completed"},
    ]
    after = _todos(normalize_tool_result(payload, content="#1 a", tool_use_result={"tasks": tasks}))
    assert after.items == (
        TodoItem(id="1", description="a", status="pending"),
        TodoItem(id="2", description="b", status="completed"),
    )


def test_task_get() -> None:
    """TaskGet: the task from the result replaces the placeholder item."""
    payload = _todos(normalize_tool_use("TaskGet", {"taskId": "2"}))
    assert title_for(payload) == "Get task #2"
    result = {"task": {"id": "2", "subject": "b", "description": "more", "status": "pending"}}
    after = _todos(normalize_tool_result(payload, content="Task #2", tool_use_result=result))
    assert after.items == (TodoItem(id="2", description="b", status="pending"),)
