"""`claude_todos`: Claude Code's `TodoWrite`, the whole todo list in every call.

The model sends every todo each time (`content`, `status`, `activeForm`, the wording shown
while the todo is in progress); the session's list becomes that list. Older Claude Code
versions sent an `id` (and a `priority`) per todo instead of `activeForm`: both are taken.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter
from typing_extensions import Required, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.builder import check_step_text
from .._core.outcome import Applied
from .._core.repair import repair_list
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Priority
from ._base import carried, entry, renamer

__all__ = ["Todo", "TodoWriteArgs"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")


class Todo(BaseModel):
    """One todo, as Claude Code's models write it.

    Args:
        content: The todo's text, in the imperative ("Run the tests").
        status: Where the todo stands: `pending`, `in_progress` or `completed`.
        activeForm: The present-continuous wording shown while the todo runs ("Running the
            tests"); kept under `_meta["llm_plans"]`.
    """

    model_config = _FORBID

    content: str
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str


class TodoWriteArgs(BaseModel):
    """Arguments of `TodoWrite`.

    Args:
        todos: The whole todo list, in order: it replaces the session's list.
    """

    model_config = _FORBID

    todos: list[Todo] = Field(description="The whole todo list, in order.")


class _TodoIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    content: Required[_Text]
    status: Required[Literal["pending", "in_progress", "completed", "cancelled", "blocked"]]
    activeForm: _Text | None
    id: str | int | None
    priority: Priority | None


class _TodoWriteIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    todos: list[_TodoIn]


def _run(call: Call) -> Applied:
    todos: list[dict[str, Any]] = call.args["todos"]
    # What the client shows for a step in progress (activeForm), or keeps of it (an old id),
    # is held to a step's length, as the step's own text is.
    problems = [
        problem
        for index, todo in enumerate(todos)
        for key in ("activeForm", "id")
        if (text := _text(todo.get(key))) is not None
        and (
            problem := check_step_text(
                f"todos[{index}].{key}", text, call.rules.limits, markdown=False
            )
        )
    ]
    entries = []
    for todo in todos:
        blocked = todo["status"] == "blocked"  # still to do: pending, its own word kept
        item = entry(
            todo["content"],
            "pending" if blocked else todo["status"],
            {
                "activeForm": todo.get("activeForm"),
                "id": _text(todo.get("id")),
                "status": "blocked" if blocked else None,
            },
        )
        entries.append(item)
    entries = carried(call.current, entries)
    for item, todo in zip(entries, todos, strict=True):
        if todo.get("priority"):  # sent (older Claude Code did): it wins over the kept one
            item["priority"] = todo["priority"]
    book, plan = write_list(call, entries, renamer("todos"), found=problems)
    return Applied(
        "TodoWrite",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "todo list", plan, discipline=discipline
        ),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _repair(value: Any) -> Any:
    return repair_list(value, "todos")


TODO_WRITE = PlanTool(
    dialect="claude_todos",
    name="TodoWrite",
    definition=TodoWriteArgs,
    adapter=TypeAdapter(_TodoWriteIn),
    run=_run,
    repair=_repair,
    previews=Previews.of_list("todos"),
    nested={"todos": "content, status, activeForm"},
)

DIALECT = Dialect("claude_todos", (TODO_WRITE,), "full replacement")
