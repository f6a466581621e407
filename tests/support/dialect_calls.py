"""Hypothesis strategies of each dialect's calls as the models trained on it send them.

Written from the peers' own argument shapes (/work/shared/reference/peer_plan_tools.md:
Claude Code's TodoWrite and Task* tools, Codex's update_plan, LangChain's and Gemini CLI's
write_todos, Cursor's todo_write; opencode 1.18.33's todowrite and Mistral Vibe 3.0.3's todo, as
their own packages define them), not from our definitions, so a test driven by them checks
that the session takes what the models really send. Each call is a `Sent`, tagged with what
the session may do with it:

- `valid` / `variant`: the peer's shape (or an older or sibling shape of it, or a common
  slip); the session may accept it, or reject it for the state it meets (an unknown id);
- `invalid`: a shape no model should send; it must be rejected, naming the dialect's own
  field paths in `paths`;
- `hostile`: not JSON, not UTF-8, NaN, duplicate keys, deep nesting, oversize: must be
  rejected when `must_reject`.

`calls(dialect, ids)` draws any of them for a registered dialect (`ids`: the ids the model
was told, Claude task numbers or Cursor and Vibe todo ids); dialects without strategies here are
skipped by `covered()`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from registry import DIALECTS
from strategies import DEEP, step_text

LONG = 1_001  # one past the default max_entry_chars
MANY = 201  # one past the default max_entries
HUGE = 600 * 1024  # past the default max_arguments_bytes

CLAUDE_STATUSES = ("pending", "in_progress", "completed")
TASK_STATUSES = (*CLAUDE_STATUSES, "deleted")
CURSOR_STATUSES = (*CLAUDE_STATUSES, "cancelled")
GEMINI_STATUSES = (*CURSOR_STATUSES, "blocked")
PRIORITIES = ("high", "medium", "low")
# Status spellings models slip into; a session may repair them or reject them.
SLIPS = ("In Progress", "DONE", "in-progress", "Completed", "todo")
PRIORITY_SLIPS = ("High", "LOW", "med", "Normal")


@dataclass(frozen=True)
class Lister:
    """A dialect that writes one list: its tool, the array, and the field of an item's text."""

    tool: str
    field: str
    text: str


LISTERS = {
    "claude_todos": Lister("TodoWrite", "todos", "content"),
    "codex": Lister("update_plan", "plan", "step"),
    "write_todos": Lister("write_todos", "todos", "content"),
    "cursor": Lister("todo_write", "todos", "content"),
    "opencode": Lister("todowrite", "todos", "content"),
    "vibe": Lister("todo", "todos", "content"),
}
TASKS = "claude_tasks"
ID_KEY = {TASKS: "taskId", "cursor": "id", "vibe": "id"}
"""Where a dialect's model-facing id is kept, under an entry's `_meta["llm_plans"]`."""


@dataclass(frozen=True)
class Sent:
    """One call as a model sends it, and what the session may do with it."""

    tool: str
    arguments: Any
    label: str
    must_reject: bool = False
    paths: tuple[str, ...] = ()
    """Field paths, in the dialect's own terms, a rejection of this call must name."""

    def __repr__(self) -> str:
        shown = repr(self.arguments)
        if len(shown) > 240:
            shown = f"{shown[:200]}...<{len(shown)} chars>...{shown[-30:]}"
        return f"Sent({self.tool}, {shown}, {self.label}, paths={self.paths})"


def covered() -> tuple[str, ...]:
    """The registered dialects this module has calls for (others land later)."""
    return tuple(name for name in DIALECTS if name in LISTERS or name == TASKS)


def tools_of(dialect: str) -> tuple[str, ...]:
    return tuple(tool.name for tool in DIALECTS[dialect].tools)


def ids_in(plans: Mapping[str, Any], dialect: str, list_id: str = "main") -> tuple[str, ...]:
    """The ids of `dialect` the session's list holds (`session.plans`), in order."""
    key = ID_KEY.get(dialect)
    plan = plans.get(list_id)
    if key is None or plan is None or plan.type != "items":
        return ()
    out = []
    for item in plan.entries:
        kept = (item.meta or {}).get("llm_plans")
        if isinstance(kept, Mapping) and isinstance(kept.get(key), str):
            out.append(kept[key])
    return tuple(out)


def calls(dialect: str, ids: tuple[str, ...] = ()) -> st.SearchStrategy[Sent]:
    """Any call of `dialect`: mostly valid, sometimes a variant, invalid or hostile."""
    return st.one_of(
        valid(dialect, ids),
        valid(dialect, ids),
        variant(dialect, ids),
        invalid(dialect, ids),
        hostile(dialect),
    )


# ---- valid: the peers' shapes ----------------------------------------------------------------


def _optional(draw: st.DrawFn, fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` with each value either kept or left out, in a random key order."""
    kept = [(k, v) for k, v in fields.items() if draw(st.booleans())]
    return dict(draw(st.permutations(kept)))


def _items(item: st.SearchStrategy[dict[str, Any]], most: int = 6) -> Any:
    return st.lists(item, max_size=most)


_claude_todo = st.fixed_dictionaries(
    {"content": step_text, "status": st.sampled_from(CLAUDE_STATUSES), "activeForm": step_text}
)
_codex_step = st.fixed_dictionaries({"step": step_text, "status": st.sampled_from(CLAUDE_STATUSES)})
_langchain_todo = st.fixed_dictionaries(
    {"content": step_text, "status": st.sampled_from(CURSOR_STATUSES)}
)
_gemini_todo = st.fixed_dictionaries(
    {"description": step_text, "status": st.sampled_from(GEMINI_STATUSES)}
)
_CURSOR_IDS = ("1", "2", "3", "setup", "tests", "docs-1")


def _cursor_todo(ids: tuple[str, ...], content: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """A Cursor todo: with content under any id, or without it under an id the list has."""
    pool = tuple(dict.fromkeys((*ids, *_CURSOR_IDS))) if content else ids
    fields: dict[str, Any] = {
        "id": st.sampled_from(pool),
        "status": st.sampled_from(CURSOR_STATUSES),
    }
    if content:
        fields["content"] = step_text
    return st.fixed_dictionaries(fields)


def _unique_ids(todos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for todo in todos:
        seen.setdefault(todo["id"], todo)
    return list(seen.values())


@st.composite
def _cursor(draw: st.DrawFn, ids: tuple[str, ...]) -> dict[str, Any]:
    merge = draw(st.booleans())
    if merge and ids:
        # A merge may leave out the content of a todo the list already has.
        todo = st.one_of(_cursor_todo(ids), _cursor_todo(ids, content=False))
    else:
        todo = _cursor_todo(ids)
    todos = _unique_ids(draw(_items(todo)))
    return dict(draw(st.permutations([("merge", merge), ("todos", todos)])))


_opencode_todo = st.fixed_dictionaries(
    {
        "content": step_text,
        "status": st.sampled_from(CURSOR_STATUSES),
        "priority": st.sampled_from(PRIORITIES),
    }
)


def _vibe_todo(ids: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """A Vibe todo: status and priority have defaults in Vibe's own model, so either may be
    left out."""
    return st.fixed_dictionaries(
        {"id": st.sampled_from(tuple(dict.fromkeys((*ids, *_CURSOR_IDS)))), "content": step_text},
        optional={
            "status": st.sampled_from(CURSOR_STATUSES),
            "priority": st.sampled_from(PRIORITIES),
        },
    )


@st.composite
def _vibe(draw: st.DrawFn, ids: tuple[str, ...]) -> dict[str, Any]:
    """A read now and then (its todos null or left out), mostly a write of the whole list."""
    if not draw(st.integers(0, 4)):
        return draw(st.sampled_from([{"action": "read"}, {"action": "read", "todos": None}]))
    todos = _unique_ids(draw(_items(_vibe_todo(ids))))
    return dict(draw(st.permutations([("action", "write"), ("todos", todos)])))


@st.composite
def _task_create(draw: st.DrawFn) -> dict[str, Any]:
    out = {"subject": draw(step_text), "description": draw(step_text)}
    out |= _optional(draw, {"activeForm": draw(step_text), "metadata": {"source": "model", "n": 1}})
    return out


@st.composite
def _task_update(draw: st.DrawFn, ids: tuple[str, ...]) -> dict[str, Any]:
    task = draw(st.sampled_from(ids) if ids else st.just("1"))
    others = list(ids) or ["1"]
    out = {"taskId": task}
    out |= _optional(
        draw,
        {
            "subject": draw(step_text),
            "description": draw(step_text),
            "activeForm": draw(step_text),
            "status": draw(st.sampled_from(TASK_STATUSES)),
            "addBlocks": draw(st.lists(st.sampled_from(others), max_size=2, unique=True)),
            "addBlockedBy": draw(st.lists(st.sampled_from(others), max_size=2, unique=True)),
            "owner": draw(st.sampled_from(["main", "agent-2"])),
            "metadata": {"checked": True},
        },
    )
    return out


def _tasks(ids: tuple[str, ...]) -> st.SearchStrategy[Sent]:
    def sent(tool: str) -> Callable[[dict[str, Any]], Sent]:
        return lambda args: Sent(tool, args, "valid")

    task_id = st.sampled_from(ids) if ids else st.just("1")
    return st.one_of(
        _task_create().map(sent("TaskCreate")),
        _task_create().map(sent("TaskCreate")),
        _task_update(ids).map(sent("TaskUpdate")),
        _task_update(ids).map(sent("TaskUpdate")),
        st.just(Sent("TaskList", {}, "valid")),
        task_id.map(lambda i: Sent("TaskGet", {"taskId": i}, "valid")),
    )


def valid(dialect: str, ids: tuple[str, ...] = ()) -> st.SearchStrategy[Sent]:
    """A call in the shape the peer defines."""
    if dialect == TASKS:
        return _tasks(ids)
    tool = LISTERS[dialect].tool
    if dialect == "claude_todos":
        args = st.fixed_dictionaries({"todos": _items(_claude_todo)})
    elif dialect == "codex":
        args = st.fixed_dictionaries(
            {"plan": _items(_codex_step)}, optional={"explanation": step_text}
        )
    elif dialect == "write_todos":
        args = st.fixed_dictionaries({"todos": _items(_langchain_todo)})
    elif dialect == "opencode":
        args = st.fixed_dictionaries({"todos": _items(_opencode_todo)})
    elif dialect == "vibe":
        args = _vibe(ids)
    else:
        args = _cursor(ids)
    return args.map(lambda a: Sent(tool, a, "valid"))


# ---- variants: sibling shapes and common slips -------------------------------------------------


@st.composite
def _slipped(draw: st.DrawFn, args: dict[str, Any], field: str) -> Any:
    """`args` with a status (or priority) spelled loosely, or the list sent as a JSON string."""
    out = dict(args)
    if field not in out:  # a Vibe read: nothing to slip on
        return out
    items = [dict(i) for i in out.get(field) or []]
    for item in items:
        if "status" in item and draw(st.integers(0, 2)) == 0:
            item["status"] = draw(st.sampled_from(SLIPS))
        if "priority" in item and draw(st.integers(0, 2)) == 0:
            item["priority"] = draw(st.sampled_from(PRIORITY_SLIPS))
    out[field] = items
    if draw(st.booleans()):
        out[field] = json.dumps(items)
    return out


def variant(dialect: str, ids: tuple[str, ...] = ()) -> st.SearchStrategy[Sent]:
    """A shape the dialect also takes (an older or sibling tool's), or a common slip."""
    if dialect == TASKS:
        # Task numbers sent as numbers; statuses spelled loosely.
        task_id = st.sampled_from(ids) if ids else st.just("1")
        return st.one_of(
            task_id.map(lambda i: Sent("TaskGet", {"taskId": int(i)}, "variant")),
            st.builds(
                lambda i, s: Sent("TaskUpdate", {"taskId": i, "status": s}, "variant"),
                task_id,
                st.sampled_from(SLIPS),
            ),
        )
    lister = LISTERS[dialect]
    if dialect == "claude_todos":
        # Claude Code 2.0 sent an id (and once a priority) per todo instead of activeForm.
        old = st.fixed_dictionaries(
            {
                "content": step_text,
                "status": st.sampled_from(CLAUDE_STATUSES),
                "id": st.sampled_from(["1", "2", "a"]),
            },
            optional={"priority": st.sampled_from(["high", "medium", "low"])},
        )
        shapes = st.fixed_dictionaries({"todos": _items(old)})
    elif dialect == "write_todos":
        shapes = st.fixed_dictionaries({"todos": _items(_gemini_todo)})  # Gemini CLI's
    elif dialect == "codex":
        shapes = st.fixed_dictionaries({"plan": _items(_codex_step)})
    elif dialect == "opencode":
        # Early opencode versions sent an id per todo; a todo may leave its priority out.
        old = st.fixed_dictionaries(
            {"content": step_text, "status": st.sampled_from(CURSOR_STATUSES)},
            optional={
                "priority": st.sampled_from(PRIORITIES),
                "id": st.sampled_from(["1", "2", "a"]),
            },
        )
        shapes = st.fixed_dictionaries({"todos": _items(old)})
    elif dialect == "vibe":
        # The action in another case, a number for an id.
        shapes = _vibe(ids).map(_vibe_slips)
    else:
        shapes = _cursor(ids)
    return shapes.flatmap(lambda a: _slipped(a, lister.field)).map(
        lambda a: Sent(lister.tool, a, "variant")
    )


def _vibe_slips(args: dict[str, Any]) -> dict[str, Any]:
    out = {**args, "action": args["action"].capitalize()}
    todos = out.get("todos")
    if todos:
        first = dict(todos[0])
        if first["id"].isdigit():
            first["id"] = int(first["id"])
        out["todos"] = [first, *todos[1:]]
    return out


# ---- invalid: shapes no model should send --------------------------------------------------------


def _item(dialect: str, text: str, number: int = 0) -> dict[str, Any]:
    """A valid item of `dialect`'s list (`number` tells Cursor's todos apart)."""
    lister = LISTERS[dialect]
    item: dict[str, Any] = {lister.text: text, "status": "pending"}
    if dialect == "claude_todos":
        item["activeForm"] = "Doing it"
    if dialect in ("cursor", "vibe"):
        item["id"] = f"t{number}"
    if dialect in ("opencode", "vibe"):
        item["priority"] = "medium"
    return item


def _list_call(dialect: str, items: Any) -> dict[str, Any]:
    lister = LISTERS[dialect]
    args: dict[str, Any] = {lister.field: items}
    if dialect == "cursor":
        args["merge"] = False
    if dialect == "vibe":
        args["action"] = "write"
    return args


@st.composite
def _invalid_list(draw: st.DrawFn, dialect: str) -> Sent:
    lister = LISTERS[dialect]
    field, text = lister.field, lister.text
    good = [_item(dialect, f"Step {n}", n) for n in range(draw(st.integers(0, 3)))]
    at = len(good)
    path = f"{field}[{at}]"

    def bad(item: Any, where: str) -> Sent:
        return Sent(lister.tool, _list_call(dialect, [*good, item]), "invalid", True, (where,))

    def with_(key: str, value: Any) -> dict[str, Any]:
        item = _item(dialect, "Bad one", at)
        item[key] = value
        return item

    cases: list[Callable[[], Sent]] = [
        lambda: bad(with_("status", "sideways"), f"{path}.status"),
        lambda: bad(with_("status", 7), f"{path}.status"),
        lambda: bad(with_(text, "z" * LONG), f"{path}.{text}"),
        lambda: bad(with_(text, "   "), f"{path}.{text}"),
        lambda: bad(with_(text, 12), f"{path}.{text}"),
        lambda: bad(with_("colour", "red"), f"{path}.colour"),
        lambda: bad(5, path),
        lambda: Sent(
            lister.tool,
            _list_call(dialect, [_item(dialect, f"s{n}", n) for n in range(MANY)]),
            "invalid",
            True,
            (field,),
        ),
        lambda: Sent(lister.tool, _list_call(dialect, 5), "invalid", True, (field,)),
        lambda: Sent(
            lister.tool,
            {"colour": "red", **_list_call(dialect, good)},
            "invalid",
            True,
            ("colour",),
        ),
        lambda: Sent(
            lister.tool,
            {k: v for k, v in _list_call(dialect, good).items() if k != field},
            "invalid",
            True,
            (field,),
        ),
    ]
    if dialect in ("opencode", "vibe"):
        cases.append(lambda: bad(with_("priority", "urgent"), f"{path}.priority"))
    if dialect == "vibe":
        twice = _item(dialect, "Twice", 0)
        cases += [
            lambda: bad(twice, f"{path}.id") if good else bad(with_("id", 5.5), f"{path}.id"),
            lambda: bad(with_("id", "i" * 65), f"{path}.id"),
            lambda: Sent(
                lister.tool,
                {**_list_call(dialect, good), "action": "update"},
                "invalid",
                True,
                ("action",),
            ),
        ]
    if dialect == "write_todos":
        # Gemini CLI's shape names its text `description`: so must a problem with it.
        long_description = {"description": "z" * LONG, "status": "blocked"}
        cases.append(
            lambda: Sent(
                lister.tool,
                {"todos": [long_description]},
                "invalid",
                True,
                ("todos[0].description",),
            )
        )
    return draw(st.sampled_from(cases))()


@st.composite
def _invalid_task(draw: st.DrawFn, ids: tuple[str, ...]) -> Sent:
    known = draw(st.sampled_from(ids)) if ids else "1"
    ghost = str(max((int(i) for i in ids if i.isdigit()), default=0) + 1000)
    cases: list[Sent] = [
        Sent("TaskUpdate", {"taskId": ghost, "status": "completed"}, "invalid", True, ("taskId",)),
        Sent("TaskGet", {"taskId": ghost}, "invalid", True, ("taskId",)),
        Sent("TaskUpdate", {"taskId": known, "status": "sideways"}, "invalid", True, ("status",)),
        Sent("TaskUpdate", {"taskId": ["1"]}, "invalid", True, ("taskId",)),
        Sent("TaskUpdate", {"status": "completed"}, "invalid", True, ("taskId",)),
        Sent("TaskCreate", {"description": "no subject"}, "invalid", True, ("subject",)),
        Sent("TaskCreate", {"subject": "   ", "description": "d"}, "invalid", True, ("subject",)),
        Sent(
            "TaskCreate", {"subject": "z" * LONG, "description": "d"}, "invalid", True, ("subject",)
        ),
        Sent("TaskCreate", {"subject": 5, "description": "d"}, "invalid", True, ("subject",)),
    ]
    return draw(st.sampled_from(cases))


def invalid(dialect: str, ids: tuple[str, ...] = ()) -> st.SearchStrategy[Sent]:
    """A call that must be rejected, naming the paths in `Sent.paths`."""
    return _invalid_task(ids) if dialect == TASKS else _invalid_list(dialect)


# ---- hostile: not even a call ----------------------------------------------------------------


def _sample(dialect: str) -> tuple[str, dict[str, Any]]:
    """A valid call of `dialect`, to garble."""
    if dialect == TASKS:
        return "TaskCreate", {"subject": "Write the parser", "description": "In full."}
    return LISTERS[dialect].tool, _list_call(dialect, [_item(dialect, "Write the parser")])


@st.composite
def _hostile(draw: st.DrawFn, dialect: str) -> Sent:
    tool, args = _sample(dialect)
    text = json.dumps(args)
    key = next(iter(args))
    first = json.dumps(key)
    cases: list[Callable[[], Sent]] = [
        lambda: Sent(tool, text[: draw(st.integers(1, len(text) - 1))], "hostile", True),
        lambda: Sent(tool, "{" + first + ": NaN}", "hostile", True),
        lambda: Sent(tool, text.replace("Write", "Wr\xffte").encode("latin-1"), "hostile", True),
        lambda: Sent(tool, "{" + first + ": 1, " + text[1:], "hostile", True),  # duplicate key
        lambda: Sent(tool, "[" * DEEP, "hostile", True),
        lambda: Sent(tool, "{" + first + ": " + "[" * 5000 + "]" * 5000 + "}", "hostile", True),
        lambda: Sent(tool, {**args, "pad": "x" * HUGE}, "hostile", True),
        lambda: Sent(tool, "[1, 2]", "hostile", True),
        lambda: Sent(tool, "null", "hostile", True),
        lambda: Sent(tool, "", "hostile", True),
        # A lone surrogate has no UTF-8: rejected, or (in a dict) never sent as is.
        lambda: Sent(tool, text.replace("Write", "Wr\\udfffte"), "hostile"),
        lambda: Sent(tool, json.loads(text.replace("Write", "Wr\\udfffte")), "hostile"),
    ]
    return draw(st.sampled_from(cases))()


def hostile(dialect: str) -> st.SearchStrategy[Sent]:
    return _hostile(dialect)
