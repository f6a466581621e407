"""`opencode`: opencode's `todowrite`, the whole todo list, with priorities, in every call.

What opencode 1.18.33 defines (read in its npm binary `opencode-linux-x64@1.18.33`,
`bin/opencode`, whose JavaScript is embedded as text: the `SessionTodo` struct and the
`todowrite` tool; the same shape as `packages/opencode/src/tool/todo.ts` of
anomalyco/opencode): `{"todos": [{"content", "status", "priority"}]}`, all three required
strings, the list sent replacing the session's; opencode answers with the todos as JSON.
`status` is described as pending, in_progress, completed or cancelled and `priority` as
high, medium or low, but both are typed as plain strings. There are no ids (early opencode
versions required an `id` per todo, as forks of it still show in that same file).

Each todo's priority becomes its ACP entry's priority, the one the call sent: the model
restates it every call, so it wins over the priority the entry had. A todo that leaves the
priority out (or sends null) gets medium. `blocked` is taken as other dialects take it
(pending, the word kept under `_meta["llm_plans"]`), since opencode's plain string lets a
model write it; the usual status and priority spellings ("done", "High", "med") are
repaired; any other word is rejected with the accepted values. An `id`, as early opencode
versions sent, is kept under `_meta["llm_plans"]["id"]`. Other fields are rejected, as in
every dialect, although opencode itself ignores them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, TypeAdapter
from typing_extensions import Required, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.builder import check_step_text
from .._core.outcome import Applied
from .._core.repair import repair_list
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Priority, Status
from ._base import carried, entry, renamer

__all__ = ["OpencodeTodo", "TodowriteArgs"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")
# An early opencode's id, as the model wrote it: a number is its decimal text. A boolean is
# not a number here.
_Id = Annotated[_Text, BeforeValidator(lambda value: str(value) if type(value) is int else value)]


class OpencodeTodo(BaseModel):
    """One todo, as opencode's models write it.

    Args:
        content: The todo's text.
        status: Where the todo stands (`pending`, `in_progress`, `completed`, `cancelled`).
        priority: How much it matters (`high`, `medium`, `low`): the ACP entry's priority.
    """

    model_config = _FORBID

    content: str
    status: Status
    priority: Priority


class TodowriteArgs(BaseModel):
    """Arguments of opencode's `todowrite`.

    Args:
        todos: The whole todo list, in order: it replaces the session's list.
    """

    model_config = _FORBID

    todos: list[OpencodeTodo] = Field(description="The whole todo list, in order.")


class _TodoIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    content: Required[_Text]
    # Ours, and blocked (pending to ACP, the word kept), which opencode's plain string allows.
    status: Required[Literal["pending", "in_progress", "completed", "cancelled", "blocked"]]
    priority: Priority | None  # left out or null: medium
    id: _Id | None  # early opencode versions


class _TodowriteIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    todos: list[_TodoIn]


def _run(call: Call) -> Applied:
    todos: list[dict[str, Any]] = call.args["todos"]
    # An old id is kept with the todo: held to a step's length, as the todo's text is.
    long = [
        problem
        for index, todo in enumerate(todos)
        if todo.get("id") is not None
        and (
            problem := check_step_text(
                f"todos[{index}].id", todo["id"], call.rules.limits, markdown=False
            )
        )
    ]
    entries = []
    for todo in todos:
        blocked = todo["status"] == "blocked"  # still to do: pending, its own word kept
        entries.append(
            entry(
                todo["content"],
                "pending" if blocked else todo["status"],
                {"id": todo.get("id"), "status": "blocked" if blocked else None},
                priority=todo.get("priority") or "medium",
            )
        )
    entries = carried(call.current, entries, priority_sent=True)
    book, plan = write_list(call, entries, renamer("todos"), found=long)
    return Applied(
        "todowrite",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "todo list", plan, discipline=discipline
        ),
    )


def _repair(value: Any) -> Any:
    return repair_list(value, "todos", priorities=True)


TODOWRITE = PlanTool(
    dialect="opencode",
    name="todowrite",
    definition=TodowriteArgs,
    adapter=TypeAdapter(_TodowriteIn),
    run=_run,
    repair=_repair,
    previews=Previews.of_list("todos"),
    nested={"todos": "content, status, priority"},
)

DIALECT = Dialect("opencode", (TODOWRITE,), "full replacement")
