"""A session's plans as JSON-ready data, and back, checked as strictly as a model's calls."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .._errors import ConfigurationError
from .._limits import Limits
from .._models import ItemsPlan, Plan
from .apply import apply
from .builder import Rules
from .outcome import Applied, Rejected
from .plans import AnyPlan, Book, Json, Stored
from .results import count, path_of
from .tool import PlanTool

_PLAN: TypeAdapter[AnyPlan] = TypeAdapter(Plan)
VERSION = 2
"""2 adds `subagents`; a version 1 snapshot (no subagents) restores as it did."""
_READS = (1, 2)


def dump(book: Book) -> dict[str, Any]:
    """The book as JSON-ready data, the caller's to keep and change.

    Built from the stored wire values, not the typed models (a snapshot is taken on every
    commit by agents that persist in `on_commit`): the same keys in the same order as the
    models' `dump_python(mode="json", by_alias=True, exclude_none=True)`, which
    `tests/core/test_snapshot.py` checks. Every dict and list is new, `_meta` values deep-copied,
    so changing the snapshot changes nothing in the session.
    """
    out: dict[str, Any] = {"version": VERSION, "next_number": book.next_number}
    if book.last_task:  # only sessions with numbered tasks have one
        out["last_task"] = book.last_task
    out["plans"] = [_plan(p) for p in book.plans.values()]
    return out


def _plan(plan: Stored) -> dict[str, Any]:
    out: dict[str, Any] = {"type": plan.type, "id": plan.id}
    if plan.type == "items":
        # Without `_meta`, a stored entry is exactly content, priority, status (in that
        # order, as `builder` makes it): a copy at C speed is the dump. Three keys each
        # means no entry has `_meta`.
        entries = plan.entries
        if sum(map(len, entries)) == 3 * len(entries):
            out["entries"] = list(map(dict.copy, entries))
        else:
            out["entries"] = [dict(e) if "_meta" not in e else _entry_with_meta(e) for e in entries]
    elif plan.type == "markdown":
        out["content"] = plan.content
    else:
        out["uri"] = plan.uri
    if plan.meta is not None:
        out["_meta"] = copy.deepcopy(plan.meta)
    return out


def _entry_with_meta(entry: Json) -> dict[str, Any]:
    out = {"content": entry["content"], "priority": entry["priority"], "status": entry["status"]}
    if entry["_meta"] is not None:
        out["_meta"] = copy.deepcopy(entry["_meta"])
    return out


@dataclass(frozen=True)
class SkippedPlan:
    """A plan of a snapshot that `restore(snapshot, partial=True)` left out, and why.

    Args:
        index: Its position in `snapshot["plans"]`.
        id: Its id, when it had a readable one.
        reason: What is wrong with it, as the all-or-nothing `restore` error words it.
        session_id: The subagent session it belongs to; None for the restored session's own.
    """

    index: int
    """Its position in `snapshot["plans"]`."""
    id: str | None
    """Its id, when it had a readable one."""
    reason: str
    """What is wrong with it: the text the all-or-nothing `restore` error gives for it."""
    session_id: str | None = None
    """The subagent session it belongs to; None for the restored session's own plans."""


def load(
    snapshot: Mapping[str, Any], rules: Rules, create: PlanTool
) -> tuple[Book, list[SkippedPlan]]:
    """The book a `dump` describes, made of every plan that passes the checks, and the plans
    left out with the reason for each; ConfigurationError when it is not a snapshot at all.

    Each plan is re-created through the core as a call of `create` (`create_plan`) would
    be, so ids, limits and file locations (inside the workspace) hold for restored plans too.
    """
    version = snapshot.get("version") if isinstance(snapshot, Mapping) else snapshot
    if type(version) is not int or version not in _READS:  # True and 1.0 equal 1, but are not
        raise ConfigurationError(
            f"unsupported snapshot version {version!r}; expected one of {_READS}"
        )
    number = snapshot.get("next_number")
    plans = snapshot.get("plans")
    if type(number) is not int or number < 1:
        raise ConfigurationError(f"snapshot next_number must be a positive integer; got {number!r}")
    if number > 10**rules.limits.max_id_length:
        # No generated id ("plan-N") this long can be held, so no session wrote this counter;
        # a huge one would also fail every later create (and str() past 4,300 digits).
        raise ConfigurationError(
            f"snapshot next_number has {number.bit_length()} bits; no generated id of at most "
            f"{rules.limits.max_id_length} characters has that number"
        )
    if not isinstance(plans, list):
        raise ConfigurationError("snapshot plans must be a list")
    last_task = snapshot.get("last_task", 0)
    if type(last_task) is not int or not 0 <= last_task < 10**rules.limits.max_id_length:
        raise ConfigurationError(
            f"snapshot last_task must be a task number (a whole number, 0 or more); "
            f"got {_readable(last_task) or type(last_task).__name__}"
        )
    # A restored plan is held to every rule a plan is, but not to the size of one call: the
    # snapshot writes each step in full (its priority and status too), and `changes` may have
    # grown a plan past what one call can send.
    # Its entries keep what the session kept under `_meta["llm_plans"]`, each key held to its
    # field's rules (task numbers at most the highest issued, which the book starts with).
    rules = dataclasses.replace(
        rules,
        limits=dataclasses.replace(rules.limits, max_arguments_bytes=sys.maxsize),
        restoring=True,
    )
    book = Book(last_task=last_task)
    skipped = []
    for index, raw in enumerate(plans):
        oversized = _oversized(raw, rules.limits)
        if oversized is not None:
            skipped.append(SkippedPlan(index, _readable(_raw_id(raw)), oversized))
            continue
        try:
            plan = _PLAN.validate_python(raw)
        except ValidationError as exc:
            skipped.append(SkippedPlan(index, _readable(_raw_id(raw)), _validation_reason(exc)))
            continue
        outcome = apply(book, create, _as_call(plan), _rules_for(plan, rules))
        if isinstance(outcome, Rejected):
            skipped.append(SkippedPlan(index, _readable(plan.id), _reason(outcome)))
            continue
        assert isinstance(outcome, Applied)  # a create never only reads
        if plan.meta is not None:
            try:
                text = json.dumps(plan.meta, allow_nan=False, ensure_ascii=False)
                text.encode("utf-8")
            except (ValueError, TypeError, RecursionError) as exc:  # UnicodeError is a ValueError
                reason = f"_meta is not strict JSON ({exc})"
                skipped.append(SkippedPlan(index, _readable(plan.id), reason))
                continue
            # Kept as the JSON it is (a tuple as a list, keys as strings): what the session
            # sends and snapshots is what that JSON text reads back as.
            with_meta = dataclasses.replace(outcome.book.plans[plan.id], meta=json.loads(text))
            plans_now = {**outcome.book.plans, plan.id: with_meta}
            book = outcome.book.with_plans(plans_now)
        else:
            book = outcome.book
    return Book(book.plans, max(number, book.next_number), last_task), skipped


# The all-or-nothing error names this many plans and counts the rest: a hostile snapshot of
# many bad plans must not make an error message of megabytes.
_MAX_LISTED = 10


def error(skipped: list[SkippedPlan]) -> ConfigurationError:
    """The all-or-nothing `restore` error: the first plans left out and why, and how many more."""
    lines = [
        ("" if s.session_id is None else f"subagent {s.session_id!r} ")
        + (
            f"plans[{s.index}]: {s.reason}"
            if s.id is None
            else f"plans[{s.index}] ({s.id!r}): {s.reason}"
        )
        for s in skipped[:_MAX_LISTED]
    ]
    if len(skipped) > _MAX_LISTED:
        lines.append(f"... and {count(len(skipped) - _MAX_LISTED, 'more plan')} left out")
    return ConfigurationError("invalid snapshot:\n" + "\n".join(lines))


def _oversized(raw: object, limits: Limits) -> str | None:
    # Counted before validating, so a snapshot of a million steps is refused at once.
    entries = raw.get("entries") if isinstance(raw, Mapping) else None
    if isinstance(entries, list) and len(entries) > limits.max_entries:
        return f"entries: {len(entries)} steps; at most {limits.max_entries} are accepted."
    return None


def _rules_for(plan: AnyPlan, rules: Rules) -> Rules:
    # A session with list dialects holds empty lists: its own, and those written apart from
    # it (`call(list_id=...)`, a subagent's); each restores as the list it was.
    if rules.list_id is None or not isinstance(plan, ItemsPlan) or plan.entries:
        return rules
    return dataclasses.replace(rules, list_id=plan.id)


def _raw_id(raw: object) -> object:
    return raw.get("id") if isinstance(raw, Mapping) else None


def _validation_reason(exc: ValidationError) -> str:
    # The first problem with its field path: "items.entries[3].content: Field required".
    first = exc.errors(include_url=False)[0]
    where = path_of(first["loc"])
    more = exc.error_count() - 1
    reason = f"{where}: {first['msg']}" if where else first["msg"]
    if more:
        reason += f" (and {count(more, 'more problem')})"
    return reason


def _reason(rejected: Rejected) -> str:
    # The problems alone, on one line: the call's header and "call create_plan again" speak
    # to a model, and this reads as a person's (or a log's) explanation of a skipped plan.
    return " ".join(p.render().removeprefix("- ") for p in rejected.problems)


def _readable(plan_id: object) -> str | None:
    # An id that JSON text can carry, so a caller can show it (a lone surrogate cannot).
    if not isinstance(plan_id, str):
        return None
    try:
        plan_id.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return plan_id


def _as_call(plan: AnyPlan) -> dict[str, Any]:
    # Python mode keeps a NaN a NaN, so the call's strict checks see it (JSON mode would
    # quietly turn it into null).
    call: dict[str, Any] = _PLAN.dump_python(plan, by_alias=True, exclude_none=True)
    call.pop("_meta", None)
    return call
