"""A session's plans as the core keeps them: wire-ready values, typed models on demand."""

from __future__ import annotations

import copy
import operator
from collections.abc import Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import Any

from .._models import FilePlan, ItemsPlan, MarkdownPlan, PlanEntry, PlanType

AnyPlan = ItemsPlan | MarkdownPlan | FilePlan
Json = dict[str, Any]

# A stored entry's fields, read at C speed over many entries (`map(CONTENT, entries)`).
CONTENT = operator.itemgetter("content")
PRIORITY = operator.itemgetter("priority")
STATUS = operator.itemgetter("status")

META_KEY = "llm_plans"
"""The key under an entry's `_meta` that keeps what ACP cannot carry (a dialect's own status,
Claude's `activeForm`, a task's number, description and owner)."""


def extra_of(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What `entry` keeps under `_meta["llm_plans"]`, as a new dict (empty when nothing)."""
    meta = entry.get("_meta")
    kept = meta.get(META_KEY) if isinstance(meta, Mapping) else None
    return dict(kept) if isinstance(kept, Mapping) else {}


def meta_with(meta: Mapping[str, Any] | None, extra: Mapping[str, Any]) -> Json | None:
    """An entry's `_meta` with what it keeps under `_meta["llm_plans"]` replaced by `extra`
    (left out when empty), the rest as it was; None when nothing is left."""
    out = {k: v for k, v in (meta or {}).items() if k != META_KEY}
    if extra:
        out[META_KEY] = dict(extra)
    return out or None


# Stored and Book are values: nothing changes one after it is made (a change makes a new
# one). They are not `frozen=True` only because a frozen dataclass sets each field through
# object.__setattr__, which costs every call about a microsecond per record.


@dataclass(eq=False)
class Stored:
    """One plan. Item plans keep their entries as the dicts ACP's `PlanEntry` is on the wire
    (content, priority, status, and `_meta` when given): the hot path sends them as they are,
    and builds the typed model only when someone asks for it. Never changed once made."""

    type: PlanType
    id: str
    entries: tuple[Json, ...] = ()
    content: str = ""
    uri: str = ""
    meta: Json | None = None
    known_statuses: InitVar[tuple[str, ...] | None] = None
    """The entries' statuses, when the maker has them at hand (the builder read them)."""
    statuses: tuple[str, ...] = field(init=False, repr=False)
    """The status of each step, in order (for counting and finding at C speed)."""
    _doing: tuple[int, ...] | None = field(init=False, repr=False)
    _counts: Mapping[str, int] | None = field(init=False, repr=False)

    def __post_init__(self, known_statuses: tuple[str, ...] | None) -> None:
        # Worked out at once, not as a cached_property: every plan made is shown, which needs
        # them, and a cached_property takes a lock on first use (before Python 3.12). Not an
        # init field: `dataclasses.replace` with other entries works them out again.
        if known_statuses is None:
            known_statuses = tuple(map(STATUS, self.entries))
        self.statuses = known_statuses
        self._doing = self._counts = None

    def in_progress(self) -> tuple[int, ...]:
        """The numbers (1-based) of the steps in progress, in order: worked out on first use
        and kept, as the notification, the result text and its notes each ask."""
        doing = self._doing
        if doing is None:
            # As many as there are: the search ends at the last, not at the tuple's end.
            found = self.steps_with("in_progress", self.statuses.count("in_progress"))
            doing = self._doing = tuple(found)
        return doing

    def status_counts(self) -> Mapping[str, int]:
        """How many steps have each of ACP's four statuses (the only ones a step is stored
        with): worked out on first use and kept."""
        counts = self._counts
        if counts is None:
            statuses = self.statuses
            completed, pending = statuses.count("completed"), statuses.count("pending")
            doing = len(self.in_progress())
            # Cancelled is the rest, not counted: a status no step has costs a whole scan.
            counts = self._counts = MappingProxyType(
                {
                    "completed": completed,
                    "in_progress": doing,
                    "pending": pending,
                    "cancelled": len(statuses) - completed - doing - pending,
                }
            )
        return counts

    def same(self, other: Stored | None) -> bool:
        """True when `other` would look the same to a client."""
        # Entries first: a call that changed something usually changed them.
        return (
            other is not None
            and self.entries == other.entries
            and self.id == other.id
            and self.type == other.type
            and self.content == other.content
            and self.uri == other.uri
            and self.meta == other.meta
        )

    def steps_with(self, status: str, limit: int) -> list[int]:
        """The numbers (1-based) of the first `limit` steps with this status."""
        found: list[int] = []
        statuses, start = self.statuses, 0
        while len(found) < limit:
            try:
                start = statuses.index(status, start) + 1
            except ValueError:
                break
            found.append(start)
        return found

    def model(self) -> AnyPlan:
        """The plan as a new public typed model, its `_meta` values copies: the models are
        frozen, and what is inside their `_meta` is the caller's to change."""
        meta = _copied(self.meta)
        if self.type == "items":
            entries = tuple(
                PlanEntry.model_construct(
                    content=e["content"],
                    priority=e["priority"],
                    status=e["status"],
                    meta=_copied(e.get("_meta")),
                )
                for e in self.entries
            )
            return ItemsPlan.model_construct(id=self.id, entries=entries, meta=meta)
        if self.type == "markdown":
            return MarkdownPlan.model_construct(id=self.id, content=self.content, meta=meta)
        return FilePlan.model_construct(id=self.id, uri=self.uri, meta=meta)

    @classmethod
    def from_model(cls, plan: AnyPlan) -> Stored:
        """A typed plan (as restored from a snapshot) in the stored form."""
        if isinstance(plan, ItemsPlan):
            return cls("items", plan.id, tuple(wire_entry(e) for e in plan.entries), meta=plan.meta)
        if isinstance(plan, MarkdownPlan):
            return cls("markdown", plan.id, content=plan.content, meta=plan.meta)
        return cls("file", plan.id, uri=plan.uri, meta=plan.meta)


class PlanModels(Mapping[str, AnyPlan]):
    """The plans of one book as typed models, each built when first read: a read-only copy
    of the plans at the time (a book never changes), which nothing done to it reaches."""

    __slots__ = ("_models", "_plans")

    def __init__(self, plans: Mapping[str, Stored]) -> None:
        self._plans = plans
        self._models: dict[str, AnyPlan] = {}

    def __getitem__(self, plan_id: str) -> AnyPlan:
        model = self._models.get(plan_id)
        if model is None:
            model = self._models[plan_id] = self._plans[plan_id].model()
        return model

    def __contains__(self, plan_id: object) -> bool:
        return plan_id in self._plans

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)

    def __repr__(self) -> str:
        return repr(dict(self))


def _copied(meta: Json | None) -> Json | None:
    return None if meta is None else copy.deepcopy(meta)


def wire_entry(entry: PlanEntry) -> Json:
    """A typed entry as ACP's `PlanEntry` dict."""
    out: Json = {"content": entry.content, "priority": entry.priority, "status": entry.status}
    if entry.meta is not None:
        out["_meta"] = entry.meta
    return out


@dataclass
class Book:
    """Every active plan of a session, in creation order, and the next generated id number.
    Never changed once made."""

    plans: Mapping[str, Stored] = field(default_factory=dict)
    next_number: int = 1
    last_task: int = 0
    """The highest task number a dialect with numbered tasks (`claude_tasks`) issued: numbers
    are never reused within a session, removed tasks' included."""

    def with_plans(self, plans: Mapping[str, Stored], next_number: int | None = None) -> Book:
        """This book with other plans (and id counter); built directly, not through
        `dataclasses.replace`, whose introspection costs a call several microseconds."""
        number = self.next_number if next_number is None else next_number
        return Book(plans, number, self.last_task)
