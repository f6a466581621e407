"""`cursor`: Cursor's `todo_write`, a list the model patches by the ids it chose.

Each todo has the model's own `id`, `content` and `status`. With `merge: false` the list
becomes the todos sent; with `merge: true` each todo sent updates the one with its id in
place, and a todo with a new id is added at the end. The id is kept under the entry's
`_meta["llm_plans"]["id"]` (ACP has no field for it), so it survives snapshots and later
merges; entries written without one (by another dialect) are never matched and stay as
they are in a merge.

A todo may leave out `content` (or `status`) when its id is in the list: it keeps its text
(or status). A todo with a new id needs its `content` (its status defaults to pending); the
rejection names that todo's path and lists the ids the list has. An id sent twice in one call
is rejected: which of the two would stand is not clear. Cursor's definition asks for at
least two todos per call; one todo (a status change) is a fine merge, so that is not required.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, StringConstraints, TypeAdapter
from typing_extensions import NotRequired, Required, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.arguments import Rejection
from .._core.outcome import Applied
from .._core.plans import Json, extra_of, meta_with
from .._core.repair import repair_list
from .._core.results import Problem
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Status
from ._base import carried, entry, renamer

__all__ = ["CursorTodo", "TodoWriteArgs"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")
# Models sometimes number their todos (`"id": 3`): the id is the number's decimal text. A
# boolean is not a number here.
_Id = Annotated[_Text, BeforeValidator(lambda value: str(value) if type(value) is int else value)]


class CursorTodo(BaseModel):
    """One todo, as Cursor's models write it.

    Args:
        id: The model's own id for the todo; a merge matches todos by it. Kept under
            `_meta["llm_plans"]["id"]`.
        content: The todo's text; null (or left out) keeps an existing todo's text, and a
            todo with a new id needs one.
        status: Where the todo stands (`pending`, `in_progress`, `completed`, `cancelled`).
    """

    model_config = _FORBID

    id: str
    content: str | None  # null (or left out) keeps an existing todo's text
    status: Status


class TodoWriteArgs(BaseModel):
    """Arguments of Cursor's `todo_write`.

    Args:
        merge: False replaces the list with the todos sent; true updates the todos with
            those ids in place and adds todos with new ids at the end.
        todos: The todos sent.
    """

    model_config = _FORBID

    merge: bool
    todos: list[CursorTodo]


class _TodoIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    id: Required[_Id]
    content: NotRequired[_Text | None]
    # Ours, and blocked (pending to ACP, the word kept) as other dialects' models write it.
    status: NotRequired[
        Literal["pending", "in_progress", "completed", "cancelled", "blocked"] | None
    ]


class _TodoWriteIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    merge: Required[bool]
    todos: Required[list[_TodoIn]]


def _run(call: Call) -> Applied:
    todos: list[dict[str, Any]] = call.args["todos"]
    old: list[Json] = list(call.current.entries) if call.current is not None else []
    by_id = _ids_of(old)
    ids: list[str] = [todo["id"] for todo in todos]
    _check(call, todos, ids, by_id)
    if call.args["merge"]:
        entries, origin = _merged(old, by_id, todos, ids)
        rename = _merge_renamer(origin)
    else:
        entries = carried(call.current, _replacement(old, by_id, todos, ids))
        rename = renamer("todos")
    book, plan = write_list(call, entries, rename)
    return Applied(
        "todo_write",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "todo list", plan, discipline=discipline
        ),
    )


def _ids_of(entries: list[Json]) -> dict[str, int]:
    """Each id the list holds, to the position of the first entry that has it."""
    out: dict[str, int] = {}
    for index, item in enumerate(entries):
        todo_id = extra_of(item).get("id")
        if isinstance(todo_id, str):
            out.setdefault(todo_id, index)
    return out


def _check(
    call: Call, todos: list[dict[str, Any]], ids: list[str], by_id: Mapping[str, int]
) -> None:
    problems: list[Problem] = []
    first: dict[str, int] = {}
    limit = call.rules.limits.max_id_length
    unknown = False
    for index, (todo, todo_id) in enumerate(zip(todos, ids, strict=True)):
        if len(todo_id) > limit:
            problems.append(Problem(f"todos[{index}].id", f"at most {limit} characters.", todo_id))
        if todo_id in first:
            problems.append(
                Problem(
                    f"todos[{index}].id",
                    f"todos[{first[todo_id]}] has this id too; send each todo once.",
                    todo_id,
                )
            )
        first.setdefault(todo_id, index)
        if todo.get("content") is None and todo_id not in by_id:
            unknown = True
            problems.append(
                Problem(
                    f"todos[{index}].content",
                    f"required: the list has no todo with id {results.shown(todo_id)}, so "
                    "this one is new.",
                )
            )
    if problems:
        raise Rejection(problems, _ids_context(by_id) if unknown else "")


def _ids_context(by_id: Mapping[str, int]) -> str:
    if not by_id:
        return "The list has no todos with ids yet."
    return "Ids in the list: " + ", ".join(results.shown(todo_id) for todo_id in by_id) + "."


def _replacement(
    old: list[Json], by_id: Mapping[str, int], todos: list[dict[str, Any]], ids: list[str]
) -> list[Json]:
    entries = []
    for todo, todo_id in zip(todos, ids, strict=True):
        kept = old[by_id[todo_id]] if todo_id in by_id else None
        content = todo.get("content") or (kept["content"] if kept else "")
        status, own = _own(todo.get("status") or (kept["status"] if kept else "pending"))
        entries.append(entry(content, status, {"id": todo_id, "status": own}))
    return entries


def _merged(
    old: list[Json], by_id: Mapping[str, int], todos: list[dict[str, Any]], ids: list[str]
) -> tuple[list[Json], dict[int, int]]:
    """The list with each todo sent updated in place or added at the end, and, for each
    entry the call wrote, the index of the todo that wrote it."""
    entries = list(old)
    origin: dict[int, int] = {}
    for index, (todo, todo_id) in enumerate(zip(todos, ids, strict=True)):
        if todo_id in by_id:
            position = by_id[todo_id]
            entries[position] = _updated(old[position], todo, todo_id)
        else:
            position = len(entries)
            status, own = _own(todo.get("status") or "pending")
            entries.append(entry(todo["content"], status, {"id": todo_id, "status": own}))
        origin[position] = index
    return entries, origin


def _own(status: str) -> tuple[str, str | None]:
    # Blocked is still to do: pending to ACP, with its own word kept.
    return ("pending", "blocked") if status == "blocked" else (status, None)


def _updated(item: Json, todo: Mapping[str, Any], todo_id: str) -> Json:
    """`item` with what `todo` sent: its priority and other `_meta` stay. The wording shown
    while in progress (`activeForm`) goes with a new text; another dialect's own status
    (`blocked`) goes with a new status."""
    extra = extra_of(item)
    content, status = item["content"], item["status"]
    if todo.get("content") is not None and todo["content"] != content:
        content = todo["content"]
        extra.pop("activeForm", None)
    sent, own = _own(todo["status"]) if todo.get("status") is not None else (None, None)
    # Pending sent for a blocked todo restates it (Cursor's models have no word for blocked).
    if sent is not None and (sent != status or (own is not None and own != extra.get("status"))):
        status = sent
        extra.pop("status", None)
        if own is not None:
            extra["status"] = own
    extra["id"] = todo_id
    out: Json = {"content": content, "priority": item["priority"], "status": status}
    out["_meta"] = meta_with(item.get("_meta"), extra)  # never empty: it keeps the id
    return out


def _merge_renamer(origin: Mapping[int, int]) -> Callable[[str], str]:
    """The core's paths (`entries[7].content`, by position in the merged list) as the paths of
    the todos sent; a problem of an entry the call did not write is the list's."""

    def rename(path: str) -> str:
        if not path.startswith("entries["):
            return renamer("todos")(path)
        head, _, rest = path.partition("]")
        index = origin.get(int(head.removeprefix("entries[")))
        return "todos" if index is None else f"todos[{index}]{rest}"

    return rename


def _repair(value: Any) -> Any:
    return repair_list(value, "todos")


TODO_WRITE = PlanTool(
    dialect="cursor",
    name="todo_write",
    definition=TodoWriteArgs,
    adapter=TypeAdapter(_TodoWriteIn),
    run=_run,
    repair=_repair,
    previews=Previews.of_list("todos"),
    nested={"todos": "id, content, status"},
)

DIALECT = Dialect("cursor", (TODO_WRITE,), "merge: upsert by id; otherwise full replacement")
