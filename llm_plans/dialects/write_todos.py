"""`write_todos`: the whole todo list in every call, as LangChain, deepagents and Gemini CLI
define it.

The tool is defined with LangChain's shape (`todos: [{content, status}]`) plus `cancelled`,
and also takes what Gemini CLI's models send: the text as `description`, and a `blocked`
status. A blocked todo is pending to ACP (it is still to do), with `"status": "blocked"` kept
under the entry's `_meta["llm_plans"]` so a client that reads it, and our results, can say so.
A todo that sends both `content` and `description` reads as `content`, with the description
kept under `_meta["llm_plans"]` as a Claude task's is. The session's list becomes the list sent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter
from typing_extensions import NotRequired, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.arguments import Rejection
from .._core.builder import check_step_text
from .._core.outcome import Applied
from .._core.repair import repair_list
from .._core.results import Problem
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Status
from ._base import carried, entry, renamer

__all__ = ["Todo", "WriteTodosArgs"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")
BLOCKED = "blocked"


class Todo(BaseModel):
    """One todo, as LangChain's models write it (with `cancelled` added).

    Args:
        content: The todo's text.
        status: Where the todo stands (`pending`, `in_progress`, `completed`, `cancelled`).
    """

    model_config = _FORBID

    content: str
    status: Status


class WriteTodosArgs(BaseModel):
    """Arguments of `write_todos`.

    Args:
        todos: The whole todo list, in order: it replaces the session's list.
    """

    model_config = _FORBID

    todos: list[Todo] = Field(description="The whole todo list, in order.")


class _TodoIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    content: NotRequired[_Text]
    description: NotRequired[_Text]
    status: Literal["pending", "in_progress", "completed", "cancelled", "blocked"]


class _WriteTodosIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    todos: list[_TodoIn]


def _run(call: Call) -> Applied:
    todos: list[dict[str, Any]] = call.args["todos"]
    missing = [
        Problem(f"todos[{index}].content", "this field is required (the todo's text).")
        for index, todo in enumerate(todos)
        if "content" not in todo and "description" not in todo
    ]
    if missing:
        raise Rejection(missing)
    entries = []
    for todo in todos:
        content: str = todo["content"] if "content" in todo else todo["description"]
        described = todo.get("description") if "content" in todo else None
        status = todo["status"]
        if status == BLOCKED:
            entries.append(entry(content, "pending", {"status": BLOCKED, "description": described}))
        else:
            entries.append(entry(content, status, {"description": described}))

    def rename(path: str) -> str:
        # The core names a todo's text `content`; a Gemini model wrote it as `description`.
        path = renamer("todos")(path)
        head, dot, rest = path.partition("].")
        if dot and rest == "content" and head.startswith("todos["):
            index = int(head.removeprefix("todos["))
            if "content" not in todos[index]:
                return f"{head}].description"
        return path

    # A description kept beside the text is held to a step's length, as the text is.
    long = [
        problem
        for index, todo in enumerate(todos)
        if "content" in todo
        and isinstance(todo.get("description"), str)
        and (
            problem := check_step_text(
                f"todos[{index}].description",
                todo["description"],
                call.rules.limits,
                markdown=False,
            )
        )
    ]
    book, plan = write_list(call, carried(call.current, entries), rename, found=long)
    return Applied(
        "write_todos",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "todo list", plan, discipline=discipline
        ),
    )


def _repair(value: Any) -> Any:
    value = repair_list(value, "todos")
    todos = value.get("todos") if isinstance(value, dict) else None
    if not isinstance(todos, list):
        return value
    # "Blocked", " BLOCKED ": the shared repair knows only our statuses and their synonyms.
    return {
        **value,
        "todos": [
            {**todo, "status": BLOCKED}
            if isinstance(todo, dict)
            and isinstance(todo.get("status"), str)
            and todo["status"].strip().lower() == BLOCKED
            else todo
            for todo in todos
        ],
    }


WRITE_TODOS = PlanTool(
    dialect="write_todos",
    name="write_todos",
    definition=WriteTodosArgs,
    adapter=TypeAdapter(_WriteTodosIn),
    run=_run,
    repair=_repair,
    previews=Previews.of_list("todos"),
    nested={"todos": "content (or description), status"},
)

DIALECT = Dialect("write_todos", (WRITE_TODOS,), "full replacement")
