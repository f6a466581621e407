"""`vibe`: Mistral Vibe's `todo`, one tool that reads the todo list or writes all of it.

What Mistral Vibe 3.0.3 defines (read in its wheel, `mistral_vibe-3.0.3-cp312-abi3`, file
`vibe/core/tools/builtins/todo.py`; its app server runs the same code,
`vibe/app_server/_provided_tools.py` `_run_todo`):

- `TodoArgs`: `action: Literal["read", "write"]`, required ("Required on every call: 'read'
  to view the current list, or 'write' to replace it"), and `todos: list[TodoItem] | None =
  None` ("Required when action='write': the full todo list, which replaces the previous
  one").
- `TodoItem`: `id: str` (required: "Stable unique identifier for the task, reused across
  updates"), `content: str` (required), `status` pending, in_progress, completed or
  cancelled (default pending), `priority` low, medium or high (default medium).
- `read` changes nothing and answers with the list; `write` replaces the list with
  `todos or []` (so a write without todos empties it), refusing more than `max_todos` (100)
  todos or two todos with one id ("Todo IDs must be unique"). Its result is the JSON of
  `{verb, todos, total_count, message}`, the message "Retrieved N todos" or "Updated N todos".
  Unknown fields are ignored (pydantic's default).

Here: `read` answers with the list (each todo with its id, content, status and priority, as
a write restates it) and changes and sends nothing; `write` replaces the list. Each todo's
`id` is kept under the entry's `_meta["llm_plans"]["id"]` (ACP has no field for it; a number
is its decimal text), and its priority becomes the ACP entry's priority, the one sent
winning over the one the entry had; status and priority default as Vibe's do. An id sent
twice or longer than `Limits.max_id_length` is rejected naming `todos[N].id`; the list's
length is held to `Limits.max_entries` rather than Vibe's 100. A write without todos is
rejected (`todos` names the whole list: `[]` empties it), except in a mirror of a call Vibe
already ran (`PlanSession.mirror`), which empties the list as Vibe did. `blocked` is taken
as other dialects take it (pending, the word kept under `_meta["llm_plans"]`); the usual
status, priority and action spellings ("done", "High", "Write") are repaired. Unknown
fields are rejected, as in every dialect.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, StringConstraints, TypeAdapter
from typing_extensions import Required, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.arguments import Rejection
from .._core.outcome import Applied, Read
from .._core.plans import Json, extra_of
from .._core.repair import repair_list
from .._core.results import Problem
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Priority, Status
from ._base import carried, entry, renamer

__all__ = ["TodoArgs", "VibeTodo"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")
# Models sometimes number their todos (`"id": 3`): the id is the number's decimal text. A
# boolean is not a number here.
_Id = Annotated[_Text, BeforeValidator(lambda value: str(value) if type(value) is int else value)]
_ACTIONS = ("read", "write")


class VibeTodo(BaseModel):
    """One todo, as Vibe's models write it.

    Args:
        id: The model's own id for the todo, kept across writes. Kept under
            `_meta["llm_plans"]["id"]`.
        content: The todo's text.
        status: Where the todo stands (`pending`, the default, `in_progress`, `completed`,
            `cancelled`).
        priority: How much it matters (`high`, `medium`, the default, `low`): the ACP
            entry's priority.
    """

    model_config = _FORBID

    id: str
    content: str
    status: Status = "pending"
    priority: Priority = "medium"


class TodoArgs(BaseModel):
    """Arguments of Vibe's `todo`.

    Args:
        action: `read` answers with the list and changes nothing; `write` replaces the list
            with `todos`.
        todos: With `write`, the whole todo list, in order (`[]` empties it); null with
            `read`.
    """

    model_config = _FORBID

    action: Literal["read", "write"]
    todos: list[VibeTodo] | None = None


class _TodoIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    id: Required[_Id]
    content: Required[_Text]
    # Ours, and blocked (pending to ACP, the word kept) as other dialects' models write it.
    status: Literal["pending", "in_progress", "completed", "cancelled", "blocked"] | None
    priority: Priority | None


class _TodoArgsIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    action: Required[Literal["read", "write"]]
    todos: list[_TodoIn] | None


def _run(call: Call) -> Applied | Read:
    todos: list[dict[str, Any]] | None = call.args.get("todos")
    if call.args["action"] == "read":
        entries = list(call.current.entries) if call.current is not None else []
        return Read("todo", todos_read(entries, todos_sent=bool(todos)))
    if todos is None:
        if not call.rules.mirror:
            raise Rejection([Problem("todos", WRITE_WITHOUT_TODOS)])
        todos = []  # Vibe ran it: `todos or []`, an empty list
    _check_ids(call, todos)
    entries = []
    for todo in todos:
        status = todo.get("status") or "pending"
        blocked = status == "blocked"  # still to do: pending, its own word kept
        entries.append(
            entry(
                todo["content"],
                "pending" if blocked else status,
                {"id": todo["id"], "status": "blocked" if blocked else None},
                priority=todo.get("priority") or "medium",
            )
        )
    entries = carried(call.current, entries, priority_sent=True)
    book, plan = write_list(call, entries, renamer("todos"))
    return Applied(
        "todo",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "todo list", plan, discipline=discipline
        ),
    )


def _check_ids(call: Call, todos: list[dict[str, Any]]) -> None:
    problems: list[Problem] = []
    first: dict[str, int] = {}
    limit = call.rules.limits.max_id_length
    for index, todo in enumerate(todos):
        todo_id: str = todo["id"]
        if len(todo_id) > limit:
            problems.append(Problem(f"todos[{index}].id", f"at most {limit} characters.", todo_id))
        if todo_id in first:
            problems.append(
                Problem(
                    f"todos[{index}].id",
                    f"todos[{first[todo_id]}] has this id too; give each todo its own id.",
                    todo_id,
                )
            )
        first.setdefault(todo_id, index)
    if problems:
        raise Rejection(problems)


def _repair(value: Any) -> Any:
    value = repair_list(value, "todos", priorities=True)
    if not isinstance(value, dict):
        return value
    action = value.get("action")
    if isinstance(action, str) and action.strip().lower() in _ACTIONS:
        return {**value, "action": action.strip().lower()}  # "Write", " read "
    return value


def _writes(fields: Mapping[str, Any]) -> bool:
    # A streamed call shows its todos once it says it writes them (a read shows nothing).
    return fields.get("action") == "write" and bool(fields.get("todos"))


TODO = PlanTool(
    dialect="vibe",
    name="todo",
    definition=TodoArgs,
    adapter=TypeAdapter(_TodoArgsIn),
    run=_run,
    repair=_repair,
    previews=Previews(list_keys=("todos",), showable=_writes),
    nested={"todos": "id, content, status, priority"},
)

DIALECT = Dialect("vibe", (TODO,), "action write: full replacement; action read: reads")


# ---- the results the model reads ------------------------------------------------------------

WRITE_WITHOUT_TODOS = (
    'required when action is "write": the whole todo list, which replaces the list (send [] '
    'to empty it). To see the list, send action "read".'
)


def todos_read(entries: Sequence[Json], *, todos_sent: bool = False) -> str:
    """The result of a read: Vibe's own words ("Retrieved N todos"), then each todo as a
    write restates it, one JSON object a line, with its own status word (`blocked`) where it
    has one. Todos another tool wrote have no id; the model gives them one when it writes."""
    count = len(entries)
    if not count:
        lines = ["Retrieved 0 todos: the list is empty."]
    else:
        lines = [f"Retrieved {results.count(count, 'todo')}:"]
    missing = False
    for item in entries:
        extra = extra_of(item)
        todo: dict[str, Any] = {}
        if isinstance(extra.get("id"), str):
            todo["id"] = extra["id"]
        else:
            missing = True
        own = extra.get("status")
        status = own if own == "blocked" and item["status"] == "pending" else item["status"]
        todo.update(content=item["content"], status=status, priority=item["priority"])
        lines.append(json.dumps(todo, ensure_ascii=False))
    if missing:
        lines.append(
            "Todos without an id were written by another tool: give each one an id when you "
            "write the list."
        )
    if todos_sent:
        lines.append(
            'The todos sent were not written: action "read" only reads. Send action "write" '
            "to replace the list."
        )
    return "\n".join(lines)
