"""What a plan dialect is: the tools one family of models is trained on, and how each of its
calls becomes a change the core makes.

A dialect module owns its tools' argument shapes (the definition the model reads and the
validator, which also takes the variants models send), and turns a validated call into the
session's plans through the core's own writers (`_apply.write_list`), so every dialect is held
to the rules, limits and guarantees `create_plan` is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter

from .._core.builder import Rules
from .._core.plans import META_KEY, Book, Json, Stored, extra_of, meta_with

if TYPE_CHECKING:
    from .._core.apply import Applied

DEFAULT_LIST_ID = "main"
"""The id of the one items plan single-list dialects write (ACP v2's name for a v1 plan)."""


@dataclass(frozen=True)
class Read:
    """A call that only reads (`TaskList`, `TaskGet`): it sends nothing and changes nothing."""

    tool: str
    text: str


@dataclass(frozen=True)
class Call:
    """One validated call of a dialect tool, with the state it applies to."""

    tool: DialectTool
    args: dict[str, Any]
    book: Book
    rules: Rules

    @property
    def list_id(self) -> str:
        return self.rules.list_id or DEFAULT_LIST_ID

    @property
    def current(self) -> Stored | None:
        """The dialect's list as the session holds it, when it exists and is an items plan."""
        plan = self.book.plans.get(self.list_id)
        return plan if plan is not None and plan.type == "items" else None


@dataclass(frozen=True, eq=False)
class DialectTool:
    """One tool of a dialect."""

    dialect: str
    name: str
    """The name the model calls."""
    definition: type[BaseModel]
    """The arguments as the model is told them (the shape it was trained on)."""
    adapter: TypeAdapter[Any]
    """Validates the arguments models send (the definition, and variants of it), to a dict."""
    run: Callable[[Call], Applied | Read]
    """The call's effect, through the core's writers; raises `Rejection` for bad input."""
    repair: Callable[[Any], Any] = lambda value: value
    """Common mistakes undone, for arguments that failed validation."""
    list_field: str | None = None
    """The array whose complete items a streamed call's previews show; None: no previews."""
    nested: Mapping[str, str] = field(default_factory=dict)
    """Accepted fields of the objects in each array, for "not a known field" problems."""

    @property
    def needs_arguments(self) -> bool:
        """False for a tool whose every argument is optional (`TaskList`): a call with no
        arguments at all (empty text, None) is `{}` to it."""
        return any(f.is_required() for f in self.definition.model_fields.values())

    @property
    def fields(self) -> tuple[str, ...]:
        """The top-level fields the tool accepts, for "not a known field" problems."""
        return tuple(self.definition.model_fields)

    @property
    def description(self) -> str:
        """The description the model reads, from `prompts/<dialect>/<name>.md`."""
        from .._core.prompts import prompt

        return prompt(f"{self.dialect}/{self.name}")


def name_of(tool: str | DialectTool) -> str:
    """The name a model calls a plan tool by: ours are their names, a dialect's carry theirs."""
    return tool if isinstance(tool, str) else tool.name


@dataclass(frozen=True)
class Dialect:
    """A family of plan tools, by the name `PlanSession(dialects=...)` takes."""

    name: str
    tools: tuple[DialectTool, ...]
    semantics: str
    """How a call changes the list, for the docs' table: "full replacement", ...."""


def entry(content: str, status: str, extra: Mapping[str, Any] | None = None) -> Json:
    """An ACP entry (priority medium: no dialect has priorities) keeping `extra` under
    `_meta["llm_plans"]`, values that are None left out."""
    out: Json = {"content": content, "priority": "medium", "status": status}
    kept = {k: v for k, v in (extra or {}).items() if v is not None}
    if kept:
        out["_meta"] = {META_KEY: kept}
    return out


RESTATED = frozenset({"status", "activeForm", "id"})
"""What a list dialect's every call says of an item, present or not (`carried` drops the
old value when the new call leaves it out): its own status word, `activeForm`, the id a
todo list gives its items. A task's number, description and owner are only ever said by the
task tools."""


def carried(current: Stored | None, entries: list[Json]) -> list[Json]:
    """A full replacement's entries, keeping the priority and `_meta` of each current entry
    whose text is unchanged (the first one with that text, each used once).

    Under `_meta["llm_plans"]`, what every call restates (`RESTATED`) is the new entry's;
    what only the task tools say (a task's number, description and owner) is kept unless the
    new entry says otherwise, so a TodoWrite restating a task keeps the number TaskUpdate
    knows it by.
    """
    if current is None or not current.entries:
        return entries
    by_text: dict[str, list[Json]] = {}
    for old in current.entries:
        by_text.setdefault(old["content"], []).append(old)
    out = []
    for new in entries:
        olds = by_text.get(new["content"])
        if not olds:
            out.append(new)
            continue
        old = olds.pop(0)
        merged: Json = {"content": new["content"], "priority": old["priority"]}
        merged["status"] = new["status"]
        kept = {k: v for k, v in extra_of(old).items() if k not in RESTATED}
        kept.update(extra_of(new))
        meta = meta_with(old.get("_meta"), kept)
        if meta:
            merged["_meta"] = meta
        out.append(merged)
    return out


def renamer(field_name: str) -> Callable[[str], str]:
    """Maps the core's problem paths (`entries[2].content`) to a dialect's (`todos[2].content`)."""

    def rename(path: str) -> str:
        return field_name + path[len("entries") :] if path.startswith("entries") else path

    return rename
