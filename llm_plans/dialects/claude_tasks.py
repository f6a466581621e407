"""`claude_tasks`: Claude Code's task tools, `TaskCreate`, `TaskUpdate`, `TaskList`, `TaskGet`.

Each task is an entry of the session's one list, patched one call at a time by its number.
We issue the numbers, in decimal ("1", "2", ...), and never reuse one within a session: the
next is one past both the highest number issued (`Book.last_task`, kept by snapshots) and the
highest in the list, so a deleted task's number stays spent, across `restore()` too. What ACP
cannot carry is kept under `_meta["llm_plans"]`: `taskId`, `description`, `activeForm`,
`owner`, `blocks`, `blockedBy` and small `metadata`. `TaskList` and `TaskGet` only read.

`TaskCreate` also takes a `taskId` its definition does not show, from mirrors only
(`PlanSession.mirror`, which the Claude Agent SDK hooks use to copy Claude Code's own task
calls into a session): the number Claude Code issued, so that both name the task alike. The
task gets it when it is a task number (decimal digits, at most 9) that no task in the list
has; numbers issued afterwards are higher. A model's call naming one is refused (numbers are
ours to issue, never reused), as is a `create_plan` or `update_plan` entry that sets
`_meta["llm_plans"]`; a restored snapshot's numbers are unique in their list and at most its
`last_task` (`_core.kept`).

Entries another tool wrote (a `TodoWrite` list, `create_plan` steps) carry no number. Reads
show them without one; the next Task* write numbers them, in list order, and records those
numbers as issued. So a number the model was told always names the task it was told for,
even after another tool rewrote the list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    StrictInt,
    StrictStr,
    StringConstraints,
    TypeAdapter,
)
from pydantic.json_schema import SkipJsonSchema
from typing_extensions import Required, TypedDict

from .._core.apply import write_list
from .._core.arguments import Rejection
from .._core.builder import NOT_FINITE
from .._core.outcome import Applied, Read
from .._core.plans import Json, extra_of, meta_with
from .._core.repair import Undecodable, decode_bytes, finite, repair_entry
from .._core.results import MAX_CHANGES_LISTED, Problem, brief, count, cut
from .._core.tool import Call, Dialect, PlanTool
from ._base import entry

__all__ = ["TaskCreateArgs", "TaskGetArgs", "TaskListArgs", "TaskUpdateArgs"]

_FORBID = ConfigDict(extra="forbid")
_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
# A task number as models send it: "3", 3 or "#3" (as results show it) all name task 3.
_TaskId = Annotated[StrictStr | StrictInt, AfterValidator(lambda v: str(v).strip().lstrip("#"))]
_NUMBER = re.compile(r"[1-9][0-9]*")
_STATUS_WORDS = {
    "delete": "deleted",
    "deleted": "deleted",
    "remove": "deleted",
    "blocked": "blocked",
}
_FIELDS = ("subject", "description", "activeForm", "owner")
# What `addBlocks` / `addBlockedBy` add to: this task's list, and the other task's.
_LINKS = {"addBlocks": ("blocks", "blockedBy"), "addBlockedBy": ("blockedBy", "blocks")}


# ---- the arguments as Claude Code's models are told them -------------------------------------
# `metadata` is an open object, which strict tool formats refuse: it is accepted, not shown.


class TaskCreateArgs(BaseModel):
    """Arguments of `TaskCreate`.

    Args:
        subject: The task's short imperative title ("Run the tests"): the plan entry's text.
        description: What the task involves and what done means; kept under
            `_meta["llm_plans"]`.
        activeForm: The present-continuous wording shown while the task runs ("Running the
            tests"); kept under `_meta["llm_plans"]`.
        metadata: Free-form data to keep with the task (accepted, not shown in the
            definition); kept under `_meta["llm_plans"]`.
    """

    model_config = _FORBID

    subject: str
    description: str
    activeForm: str | None = None
    metadata: SkipJsonSchema[dict[str, Any] | None] = None


class TaskUpdateArgs(BaseModel):
    """Arguments of `TaskUpdate`: only the fields sent change.

    Args:
        taskId: The number of the task to change, as issued ("3").
        subject: A new title for the task.
        description: A new description (what the task involves and what done means).
        activeForm: New present-continuous wording shown while the task runs.
        status: The task's new status; `deleted` removes it from the list.
        addBlocks: Numbers of tasks that cannot start until this one finishes.
        addBlockedBy: Numbers of tasks that must finish before this one.
        owner: Who works on the task.
        metadata: Free-form data merged into what the task keeps (accepted, not shown in the
            definition).
    """

    model_config = _FORBID

    taskId: str
    subject: str | None = None
    description: str | None = None
    activeForm: str | None = None
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = None
    addBlocks: list[str] | None = None
    addBlockedBy: list[str] | None = None
    owner: str | None = None
    metadata: SkipJsonSchema[dict[str, Any] | None] = None


class TaskListArgs(BaseModel):
    """Arguments of `TaskList`: none."""

    model_config = _FORBID


class TaskGetArgs(BaseModel):
    """Arguments of `TaskGet`.

    Args:
        taskId: The number of the task to read in full, as issued ("3").
    """

    model_config = _FORBID

    taskId: str


# ---- what models send: the above, and the variants they write ----------------------------


class _CreateIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    subject: Required[_Text]
    description: str | None
    activeForm: str | None
    metadata: dict[str, Any] | None
    taskId: _TaskId | None  # a mirror's number (see the module's docstring)


class _UpdateIn(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    taskId: Required[_TaskId]
    subject: _Text | None
    description: str | None
    activeForm: str | None
    # `cancelled` is ours: a task that keeps its place, neither done nor to do.
    status: Literal["pending", "in_progress", "completed", "cancelled", "blocked", "deleted"] | None
    addBlocks: list[_TaskId] | None
    addBlockedBy: list[_TaskId] | None
    owner: str | None
    metadata: dict[str, Any] | None


class _ListIn(TypedDict, total=False):
    # A read takes no arguments; stray ones (a filter it does not have) change nothing.
    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]


class _GetIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    taskId: _TaskId


def _repair(value: Any) -> Any:
    """The call sent as a JSON string, status words ("done", "delete") and a lone id where
    a list of ids belongs, undone."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = decode_bytes(value.encode("utf-8"))
        except (Undecodable, UnicodeEncodeError):
            return value
    if not isinstance(value, dict):
        return value
    fixed = dict(value)
    status = fixed.get("status")
    if isinstance(status, str):
        word = status.strip().lower()
        fixed["status"] = _STATUS_WORDS.get(word) or repair_entry({"status": status})["status"]
    for key in ("addBlocks", "addBlockedBy"):
        if isinstance(fixed.get(key), (str, int)) and not isinstance(fixed[key], bool):
            fixed[key] = [fixed[key]]
    return fixed


# ---- the list as tasks ----------------------------------------------------------------------


@dataclass
class _Tasks:
    """The list as tasks: each entry's number ("" while it has none), the numbers issued
    (those the model may have been told), and the highest number issued."""

    entries: list[Json]
    numbers: list[str]
    issued: set[str]
    last: int

    def find(self, sent: str, path: str) -> int:
        """The index of the task `sent` names; a rejection naming the tasks otherwise."""
        if sent in self.issued:
            return self.numbers.index(sent)
        raise Rejection([Problem(path, "no task has this number.", sent)], self.context())

    def context(self) -> str:
        numbered = [n for n in self.numbers if n in self.issued]
        return task_numbers(numbered, unnumbered=len(self.entries) - len(numbered))

    def issue(self, digits: int, above: int = 0) -> None:
        """Number the entries that have no number (above `above` too): a write records them."""
        self.last = max(self.last, above)
        for index, number in enumerate(self.numbers):
            if not number:
                self.last = _next(self.last, digits)
                self.numbers[index] = str(self.last)
                self.entries[index] = _changed(self.entries[index], {"taskId": str(self.last)})

    def rows(self) -> list[TaskRow]:
        """Each task as result texts show it, blockers that are done or gone left out."""
        status = {n: e["status"] for n, e in zip(self.numbers, self.entries, strict=True) if n}
        rows = []
        for number, e in zip(self.numbers, self.entries, strict=True):
            extra = extra_of(e)
            rows.append(
                TaskRow(
                    number,
                    e["status"],
                    e["content"],
                    owner=_str(extra.get("owner")),
                    description=_str(extra.get("description")),
                    blocks=tuple(n for n in _ids(extra, "blocks") if n in status),
                    blocked_by=tuple(
                        n
                        for n in _ids(extra, "blockedBy")
                        if status.get(n) in ("pending", "in_progress")
                    ),
                )
            )
        return rows


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _ids(extra: dict[str, Any], key: str) -> list[str]:
    """The task numbers a task keeps under `key` (a restored snapshot may hold anything)."""
    value = extra.get(key)
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _tasks(call: Call) -> _Tasks:
    current = call.current
    entries = list(current.entries) if current is not None else []
    digits = call.rules.limits.max_id_length
    numbers: list[str] = []
    issued: set[str] = set()
    last = call.book.last_task
    for e in entries:
        number = _number(extra_of(e).get("taskId"), digits)
        if number is None or number in issued:  # another tool's entry, or a copy
            numbers.append("")
            continue
        issued.add(number)
        numbers.append(number)
        last = max(last, int(number))
    return _Tasks(entries, numbers, issued, last)


def _number(value: object, digits: int) -> str | None:
    """`value` when it is a task number we could have issued, else None."""
    if isinstance(value, str) and len(value) <= digits and _NUMBER.fullmatch(value):
        return value
    return None


def _next(last: int, digits: int) -> int:
    # Snapshots hold the highest number issued below 10**max_id_length: it must restore.
    if last + 1 >= 10**digits:
        raise Rejection(
            [Problem("", f"every task number below 10**{digits} has been issued in this session.")]
        )
    return last + 1


def _changed(task: Json, extra: dict[str, Any]) -> Json:
    """`task` with `extra` merged into what it keeps under `_meta["llm_plans"]` (None
    removes a key)."""
    merged = {**extra_of(task), **extra}
    merged = {k: v for k, v in merged.items() if v is not None}
    out: Json = {"content": task["content"], "priority": task["priority"], "status": task["status"]}
    meta = meta_with(task.get("_meta"), merged)
    if meta:
        out["_meta"] = meta
    return out


def _checked(call: Call, args: dict[str, Any], problems: list[Problem]) -> None:
    """Add the problems of texts too long to keep in a task."""
    limit = call.rules.limits.max_entry_chars
    for name in _FIELDS:
        text = args.get(name)
        if isinstance(text, str) and len(text) > limit:
            problems.append(Problem(name, task_text_too_long(name, len(text), limit)))


def _metadata(call: Call, metadata: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    """`metadata` as kept (keys set to null removed), adding the problems when it cannot be:
    a task keeps small metadata, as long as a step's text at most."""
    kept = {k: v for k, v in metadata.items() if v is not None}
    if not finite(kept):
        problems.append(Problem("metadata", NOT_FINITE))
        return kept
    size = len(json.dumps(kept, ensure_ascii=False, separators=(",", ":")))
    if size > call.rules.limits.max_entry_chars:
        problems.append(
            Problem("metadata", metadata_too_large(size, call.rules.limits.max_entry_chars))
        )
    return kept


def _text(value: str | None) -> str | None:
    """A text field as kept: stripped, and None (not kept) when empty."""
    if value is None:
        return None
    return value.strip() or None


def _written(call: Call, tool: str, entries: list[Json], last: int, say: Any) -> Applied:
    # Problems the core finds are about the one task sent (its texts are checked first).
    book, plan = write_list(call, entries, lambda path: "", last_task=last)
    return Applied(tool, book, plan.id, plan, say=say)


# ---- TaskCreate ------------------------------------------------------------------------


_MIRROR_DIGITS = 9
"""A mirrored task number is below 10**9: far above any session's tasks, far below the
numbers a session can issue."""


def _create(call: Call) -> Applied:
    args = call.args
    tasks = _tasks(call)
    digits = call.rules.limits.max_id_length
    problems: list[Problem] = []
    context = ""
    _checked(call, args, problems)
    metadata = _metadata(call, args.get("metadata") or {}, problems)
    if len(tasks.entries) >= call.rules.limits.max_entries:
        problems.append(Problem("", tasks_full(len(tasks.entries))))
    sent = args.get("taskId")
    if sent is not None and not call.rules.mirror:
        # Numbers are ours to issue: only a mirror of Claude Code's own call brings one.
        accepted = ", ".join(f for f in call.tool.fields)
        problems.append(Problem("taskId", f"not a known field. Accepted fields: {accepted}.", sent))
    elif sent is not None and _number(sent, digits) is None:
        problems.append(Problem("taskId", not_a_task_number(digits), sent))
    elif sent is not None and int(sent) >= 10**_MIRROR_DIGITS:
        # Claude Code numbers its tasks from 1; a number this high would spend what is left
        # of the session's numbers (every later TaskCreate refused) in one call.
        problems.append(
            Problem("taskId", f"a task number has at most {_MIRROR_DIGITS} digits.", sent)
        )
    elif sent is not None and sent in tasks.issued:
        problems.append(Problem("taskId", "a task has this number; leave taskId out.", sent))
        context = tasks.context()
    if problems:
        raise Rejection(problems, context)
    # Entries with no number get theirs first, above a mirror's number: it is Claude Code's.
    tasks.issue(digits, above=0 if sent is None else int(sent))
    number = _next(tasks.last, digits) if sent is None else int(sent)
    subject = args["subject"]
    extra = {
        "taskId": str(number),
        "description": _text(args.get("description")),
        "activeForm": _text(args.get("activeForm")),
        "metadata": metadata or None,
    }
    task = entry(subject, "pending", extra)
    return _written(
        call,
        "TaskCreate",
        [*tasks.entries, task],
        max(tasks.last, number),
        lambda _, discipline: task_created(str(number), subject),
    )


# ---- TaskUpdate ------------------------------------------------------------------------


def _update(call: Call) -> Applied | Read:
    args = call.args
    tasks = _tasks(call)
    index = tasks.find(args["taskId"], "taskId")
    number = tasks.numbers[index]
    sent = [k for k, v in args.items() if k != "taskId" and v is not None]
    if not sent:
        raise Rejection([Problem("", TASK_UPDATE_EMPTY)])
    problems: list[Problem] = []
    _checked(call, args, problems)
    if problems:
        raise Rejection(problems)
    tasks.issue(call.rules.limits.max_id_length)
    entries = list(tasks.entries)
    if args.get("status") == "deleted":
        # Its number stays spent; other tasks forget they waited for it or blocked it.
        del entries[index]
        del tasks.numbers[index]
        entries = [_unlinked(e, number) for e in entries]
        changed = ["deleted"]
    else:
        changed = _patch(call, tasks, entries, index)
    if not changed:
        return Read("TaskUpdate", task_unchanged(number))
    done = _Tasks(entries, tasks.numbers, tasks.issued, tasks.last)
    return _written(
        call,
        "TaskUpdate",
        entries,
        tasks.last,
        lambda _, discipline: task_updated(number, changed, done.rows(), discipline=discipline),
    )


def _patch(call: Call, tasks: _Tasks, entries: list[Json], index: int) -> list[str]:
    """Apply an update to `entries[index]` (and the tasks it links to); the fields changed."""
    args = call.args
    old = entries[index]
    number = tasks.numbers[index]
    extra = extra_of(old)
    changed: list[str] = []
    new = dict(old)
    updates: dict[str, Any] = {}
    if args.get("subject") is not None and args["subject"] != old["content"]:
        new["content"] = args["subject"]
        changed.append("subject")
        if args.get("activeForm") is None and "activeForm" in extra:
            updates["activeForm"] = None  # it worded the old subject
    status, own = args.get("status"), None
    if status == "blocked":  # still to do: pending to ACP, its own word kept
        status, own = "pending", "blocked"
    # Pending sent for a blocked task restates it: Claude's models have no word for blocked.
    if status is not None and (
        status != old["status"] or (own is not None and own != extra.get("status"))
    ):
        new["status"] = status
        updates["status"] = own  # None drops a blocked word the task had
        changed.append("status")
    for name in ("description", "activeForm", "owner"):
        if args.get(name) is not None and _text(args[name]) != extra.get(name):
            updates[name] = _text(args[name])
            changed.append(name)
    problems: list[Problem] = []
    if args.get("metadata") is not None:
        # Merged into what the task has: a key sent as null is removed.
        metadata = _metadata(call, {**_dict(extra.get("metadata")), **args["metadata"]}, problems)
        if metadata != extra.get("metadata", {}):
            updates["metadata"] = metadata or None
            changed.append("metadata")
    known = tasks.issued  # a number given by this very call was never told
    for field, (mine, theirs) in _LINKS.items():
        have = _ids(extra, mine)
        seen, targets = set(have), []
        for position, other in enumerate(args.get(field) or ()):
            path = f"{field}[{position}]"
            if other == number:
                problems.append(Problem(path, "a task cannot wait for itself.", other))
            elif other not in known:
                problems.append(Problem(path, "no task has this number.", other))
            elif other not in seen:
                seen.add(other)
                targets.append(other)
        if targets:
            updates[mine] = [*have, *targets]
            changed.append(mine)
            for other in targets:
                at = tasks.numbers.index(other)
                theirs_now = _ids(extra_of(entries[at]), theirs)
                if number not in theirs_now:
                    entries[at] = _changed(entries[at], {theirs: [*theirs_now, number]})
    if problems:
        raise Rejection(problems, tasks.context())
    entries[index] = _changed(new, updates) if updates else new
    return changed


def _unlinked(task: Json, number: str) -> Json:
    extra = extra_of(task)
    gone = {
        key: [n for n in _ids(extra, key) if n != number] or None
        for key in ("blocks", "blockedBy")
        if number in _ids(extra, key)
    }
    return _changed(task, gone) if gone else task


# ---- TaskList and TaskGet: reads ------------------------------------------------------------


def _list(call: Call) -> Read:
    return Read("TaskList", task_list(_tasks(call).rows()))


def _get(call: Call) -> Read:
    tasks = _tasks(call)
    index = tasks.find(call.args["taskId"], "taskId")
    return Read("TaskGet", task_details(tasks.rows()[index]))


TASK_CREATE = PlanTool(
    dialect="claude_tasks",
    name="TaskCreate",
    definition=TaskCreateArgs,
    adapter=TypeAdapter(_CreateIn),
    run=_create,
    repair=_repair,
)
TASK_UPDATE = PlanTool(
    dialect="claude_tasks",
    name="TaskUpdate",
    definition=TaskUpdateArgs,
    adapter=TypeAdapter(_UpdateIn),
    run=_update,
    repair=_repair,
)
TASK_LIST = PlanTool(
    dialect="claude_tasks",
    name="TaskList",
    definition=TaskListArgs,
    adapter=TypeAdapter(_ListIn),
    run=_list,
)
TASK_GET = PlanTool(
    dialect="claude_tasks",
    name="TaskGet",
    definition=TaskGetArgs,
    adapter=TypeAdapter(_GetIn),
    run=_get,
    repair=_repair,
)

DIALECT = Dialect(
    "claude_tasks",
    (TASK_CREATE, TASK_UPDATE, TASK_LIST, TASK_GET),
    "incremental (patched by task number)",
)


# ---- the results the model reads ------------------------------------------------------------

# A TaskList line shows this much of a subject (TaskGet shows it whole): 200 tasks stay a
# readable list whatever their subjects.
_MAX_TASK_SUBJECT = 200
# Tasks named in a list of numbers (unknown-number rejections, blockers): the rest counted.
_MAX_TASK_NUMBERS = 20
TASK_UPDATE_EMPTY = (
    "this call changes nothing; send status, subject, description, activeForm, owner, "
    "addBlocks, addBlockedBy or metadata."
)


@dataclass(frozen=True)
class TaskRow:
    """One task as the task tools' results show it."""

    number: str
    """Empty for an item another tool wrote, not yet numbered."""
    status: str
    subject: str
    owner: str | None = None
    description: str | None = None
    blocks: tuple[str, ...] = ()
    """The tasks that wait for this one."""
    blocked_by: tuple[str, ...] = ()
    """The open tasks this one waits for."""


def _numbers(numbers: Iterable[str], limit: int = _MAX_TASK_NUMBERS) -> str:
    listed = list(numbers)
    shown = ", ".join(f"#{n}" for n in listed[:limit])
    return shown + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def task_numbers(numbers: list[str], unnumbered: int = 0) -> str:
    """The tasks that exist, for a call naming one that does not (`unnumbered`: items
    another tool wrote, which get numbers at the next task change)."""
    if unnumbered:
        told = f"Existing tasks: {_numbers(numbers)}; " if numbers else ""
        verb = "has" if unnumbered == 1 else "have"
        return (
            f"{told}{count(unnumbered, 'item')} written by another tool {verb} no task number "
            "yet; the next task change numbers them, and TaskList then shows their numbers."
        )
    if not numbers:
        return "There are no tasks yet; create one with TaskCreate."
    return f"Existing tasks: {_numbers(numbers)}."


def tasks_full(total: int) -> str:
    """Why a task cannot be added to a full list."""
    return (
        f"the task list has {count(total, 'task')}, the most allowed. Delete tasks that no "
        'longer matter (TaskUpdate with status "deleted") first.'
    )


def not_a_task_number(digits: int) -> str:
    """What a task number given to TaskCreate must be."""
    return (
        f'must be a task number: decimal digits such as "4" (at most {digits}, no leading '
        "zero). Or leave taskId out to get the next number."
    )


def metadata_too_large(size: int, limit: int) -> str:
    """Why a task's metadata is not kept."""
    return (
        f"{size} characters as JSON; at most {limit} are kept with a task. "
        "Keep metadata to a few short keys."
    )


def task_text_too_long(field: str, size: int, limit: int) -> str:
    """Why a task's subject, description, activeForm or owner is not kept."""
    advice = {
        "subject": "Keep the subject to a short title; detail goes in the description.",
        "description": "Keep to what the task involves and what done means.",
    }
    return f"{size} characters; at most {limit}. " + advice.get(field, "Shorten it.")


def task_created(number: str, subject: str) -> str:
    """The result of TaskCreate, in the words Claude Code's models know."""
    return f"Task #{number} created successfully: {cut(subject)}"


def task_unchanged(number: str) -> str:
    """The result of a TaskUpdate whose values the task already had."""
    return f"Task #{number} already has the values sent; nothing changed."


def task_updated(number: str, changed: list[str], tasks: list[TaskRow], *, discipline: bool) -> str:
    """The result of TaskUpdate: what changed (as Claude Code says it), what is in progress
    and what is next."""
    lines = [f"Updated task #{number} {', '.join(changed)}"]
    doing = [t for t in tasks if t.status == "in_progress"]
    pending = [t for t in tasks if t.status == "pending"]
    if doing:
        more = f" and {len(doing) - 1} more" if len(doing) > 1 else ""
        lines.append(f"In progress: #{doing[0].number} {brief(doing[0].subject)}{more}.")
    if pending:
        ready = next((t for t in pending if not t.blocked_by), None)
        if ready is not None:
            lines.append(f"Next: #{ready.number} {brief(ready.subject)}.")
        else:
            first = pending[0]
            waits = _numbers(first.blocked_by, MAX_CHANGES_LISTED)
            lines.append(f"Next: #{first.number} {brief(first.subject)}, blocked by {waits}.")
    elif not doing:
        done = sum(t.status == "completed" for t in tasks)
        if not tasks:
            lines.append("No tasks remain.")
        elif done == len(tasks):
            lines.append("All tasks are completed." if done > 1 else "The only task is completed.")
        else:
            lines.append(f"No tasks remain open: {done} completed, {len(tasks) - done} cancelled.")
    if discipline:
        if len(doing) > 1:
            several = _numbers((t.number for t in doing), MAX_CHANGES_LISTED)
            lines.append(
                f"Note: tasks {several} are all in_progress; keep exactly one in progress."
            )
        elif not doing and pending:
            lines.append(
                "Note: tasks remain but none is in_progress; set the one you work on now to "
                "in_progress."
            )
    return "\n".join(lines)


def task_list(tasks: list[TaskRow]) -> str:
    """The result of TaskList: a line per task, as Claude Code shows them (an item another
    tool wrote, which has no number until the next task change, without one)."""
    if not tasks:
        return "No tasks found"
    lines = []
    for t in tasks:
        subject = t.subject
        if len(subject) > _MAX_TASK_SUBJECT:
            subject = subject[: _MAX_TASK_SUBJECT - 3] + "..."
        owner = f" ({cut(t.owner)})" if t.owner else ""
        waits = (
            f" [blocked by {_numbers(t.blocked_by, MAX_CHANGES_LISTED)}]" if t.blocked_by else ""
        )
        if t.number:
            lines.append(f"#{t.number} [{t.status}] {subject}{owner}{waits}")
        else:  # another tool's item: numbered by the next task change
            lines.append(f"- [{t.status}] {subject} (no task number yet)")
    return "\n".join(lines)


def task_details(task: TaskRow) -> str:
    """The result of TaskGet: one task in full."""
    lines = [f"Task #{task.number}: {task.subject}", f"Status: {task.status}"]
    if task.description:
        lines.append(f"Description: {task.description}")
    if task.owner:
        lines.append(f"Owner: {task.owner}")
    if task.blocked_by:
        lines.append(f"Blocked by: {_numbers(task.blocked_by)}")
    if task.blocks:
        lines.append(f"Blocks: {_numbers(task.blocks)}")
    return "\n".join(lines)
