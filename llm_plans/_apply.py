"""The pure core: a tool call and the current plans in, the next plans or the problems out.

Every path asks this one function: plain calls, a streamed call's previews and its final
arguments, restored snapshots. It decides validity, limits, generated ids (honouring ids that
streams in flight hold) and the next state; it never raises for anything a model sends.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _feedback
from ._arguments import Rejection, parse
from ._book import Book, Json, Stored
from ._feedback import Problem
from ._limits import Limits
from ._models import PlanType, ToolName
from ._registry import TOOLS
from ._repair import finite
from ._uris import file_uri

_CONTENT = operator.itemgetter("content")
_NOT_FINITE = (
    "NaN and Infinity are not JSON numbers (1e999 is Infinity); send finite numbers or strings."
)
_FIELD_FOR: dict[PlanType, str] = {"items": "entries", "markdown": "content", "file": "uri"}


@dataclass(frozen=True)
class Rules:
    """What the core needs to know beyond the call itself."""

    limits: Limits = field(default_factory=Limits)
    workspace: Path | None = None


@dataclass(frozen=True)
class Applied:
    """A call that changed the book."""

    tool: ToolName
    book: Book
    plan_id: str
    plan: Stored | None
    """The plan after the call; None when it was removed."""
    changed: tuple[int, ...] = ()
    """The step numbers a `changes` update touched, in the order sent."""

    def text(self, *, discipline: bool = True) -> str:
        """The result the model reads."""
        return _feedback.applied(
            self.tool, self.plan_id, self.plan, self.changed, self.book.plans, discipline=discipline
        )


@dataclass(frozen=True)
class Rejected:
    """A call that changed nothing."""

    tool: str
    problems: list[Problem]
    context: str = ""

    @property
    def text(self) -> str:
        """The result the model reads: every problem, then what to do."""
        return _feedback.rejection(self.tool, self.problems, context=self.context)


def apply(
    book: Book,
    tool: str,
    arguments: Any,
    rules: Rules = Rules(),
    *,
    held: Collection[str] = (),
    own_id: str | None = None,
    size: int | None = None,
) -> Applied | Rejected:
    """Apply one plan tool call to `book`, never raising for anything the model sent.

    `held` are ids that streams in flight show and that a generated id must avoid; `own_id`
    is the id this call's own previews showed, which a generated id keeps when still free.
    """
    if tool not in TOOLS:
        names = ", ".join(TOOLS)
        return Rejected(tool, [Problem("", f"{tool!r} is not a plan tool; plan tools: {names}.")])
    name: ToolName = tool  # type: ignore[assignment]
    try:
        args = parse(name, arguments, rules.limits, size=size)
        if name == "create_plan":
            return _create(book, args, rules, held, own_id)
        if name == "update_plan":
            return _update(book, args, rules)
        return _remove(book, args)
    except Rejection as rejection:
        return Rejected(name, rejection.problems, rejection.context)


def generated_id(book: Book, held: Collection[str], own_id: str | None) -> tuple[str, int]:
    """The id a create without one gets, and the book's next number after it."""
    if own_id is not None and own_id not in book.plans:
        number = _number_of(own_id)
        return own_id, max(book.next_number, number + 1)
    number = book.next_number
    while f"plan-{number}" in book.plans or f"plan-{number}" in held:
        number += 1
    return f"plan-{number}", number + 1


def _number_of(plan_id: str) -> int:
    digits = plan_id.removeprefix("plan-")
    return int(digits) if digits.isdigit() else 0


# ---- create ---------------------------------------------------------------------------------


def _create(
    book: Book, args: Mapping[str, Any], rules: Rules, held: Collection[str], own_id: str | None
) -> Applied:
    problems: list[Problem] = []
    plan_id = args.get("id")
    context = ""
    if plan_id is not None:
        problems += check_id(plan_id, rules.limits)
        if plan_id in book.plans:
            problems.append(
                Problem(
                    "id",
                    "a plan with this id exists. Use update_plan to change it, or pick "
                    "another id (or null for a generated one).",
                    plan_id,
                )
            )
            context = _feedback.ids_list(book.plans)
    if len(book.plans) >= rules.limits.max_plans:
        problems.append(
            Problem(
                "",
                f"this session already has {len(book.plans)} plans, the most allowed. "
                "Remove a finished plan with remove_plan first.",
            )
        )
    kind: PlanType = args["type"]
    problems += _check_kind_fields(kind, args)
    if kind == "items" and args.get("entries") == []:
        problems.append(Problem("entries", "an items plan needs at least one step.", []))
    next_number = book.next_number
    if plan_id is None:
        plan_id, next_number = generated_id(book, held, own_id)
    plan = _build(kind, plan_id, args, rules, problems, None)
    if problems or plan is None:
        raise Rejection(problems, context)
    plans = dict(book.plans)
    plans[plan_id] = plan
    return Applied("create_plan", Book(plans, next_number), plan_id, plan)


# ---- update ---------------------------------------------------------------------------------


def _update(book: Book, args: Mapping[str, Any], rules: Rules) -> Applied:
    current = book.plans.get(args["id"])
    if current is None:
        raise Rejection(
            [Problem("id", "no plan has this id.", args["id"])], _feedback.ids_list(book.plans)
        )
    replacing = [f for f in ("entries", "content", "uri") if args.get(f) is not None]
    changes = args.get("changes")
    if changes is not None:
        if replacing:
            raise Rejection(
                [
                    Problem(
                        "changes",
                        f"send either changes or a replacement ({', '.join(replacing)}), not both.",
                    )
                ]
            )
        plan = _changed(current, args.get("type"), changes)
    else:
        kind = _kind_for_update(current, args.get("type"), replacing)
        problems = _check_kind_fields(kind, args)
        built = _build(kind, current.id, args, rules, problems, current.meta)
        if problems or built is None:
            raise Rejection(problems)
        plan = built
    plans = dict(book.plans)
    plans[plan.id] = plan
    steps = tuple(c["step"] for c in changes or ())
    return Applied("update_plan", Book(plans, book.next_number), plan.id, plan, steps)


def _kind_for_update(current: Stored, kind: PlanType | None, replacing: list[str]) -> PlanType:
    if kind is not None:
        return kind
    if len(replacing) == 1:
        return next(k for k, f in _FIELD_FOR.items() if f == replacing[0])
    if not replacing:
        wanted = _FIELD_FOR[current.type]
        hint = (
            f"changes (to edit steps by number) or {wanted}" if current.type == "items" else wanted
        )
        raise Rejection([Problem("", f"nothing to update: send {hint}.")])
    raise Rejection(
        [
            Problem(
                "",
                f"send one of entries, content or uri (or set type); got {', '.join(replacing)}.",
            )
        ]
    )


def _changed(current: Stored, kind: PlanType | None, changes: list[Json]) -> Stored:
    if current.type != "items":
        raise Rejection(
            [
                Problem(
                    "changes",
                    f'plan "{current.id}" is a {current.type} plan; changes only edit items '
                    f"plans. Send {_FIELD_FOR[current.type]} to replace it.",
                )
            ]
        )
    if kind not in (None, "items"):
        raise Rejection([Problem("type", "changes keep the plan an items plan; send null.", kind)])
    entries = list(current.entries)
    problems = []
    for index, change in enumerate(changes):
        path = f"changes[{index}]"
        step = change["step"]
        status, priority, content = (
            change.get("status"),
            change.get("priority"),
            change.get("content"),
        )
        if not 1 <= step <= len(entries):
            problems.append(
                Problem(f"{path}.step", f'plan "{current.id}" has steps 1 to {len(entries)}.', step)
            )
        elif status is None and priority is None and content is None:
            problems.append(
                Problem(path, "this change sets nothing; give status, priority or content.")
            )
        else:
            old = entries[step - 1]
            new: Json = {
                "content": old["content"] if content is None else content,
                "priority": priority or old["priority"],
                "status": status or old["status"],
            }
            if "_meta" in old:
                new["_meta"] = old["_meta"]
            entries[step - 1] = new
    if problems:
        raise Rejection(problems, _feedback.steps_list(current))
    return Stored("items", current.id, tuple(entries), meta=current.meta)


# ---- remove ---------------------------------------------------------------------------------


def _remove(book: Book, args: Mapping[str, Any]) -> Applied:
    plan_id = args["id"]
    if plan_id not in book.plans:
        raise Rejection(
            [Problem("id", "no plan has this id.", plan_id)], _feedback.ids_list(book.plans)
        )
    plans = {k: v for k, v in book.plans.items() if k != plan_id}
    return Applied("remove_plan", Book(plans, book.next_number), plan_id, None)


# ---- shared ---------------------------------------------------------------------------------


def check_id(plan_id: str, limits: Limits) -> list[Problem]:
    """What is wrong with an id the model chose, if anything."""
    if not plan_id.strip():
        return [Problem("id", "must not be empty; send null to get a generated id.", plan_id)]
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in plan_id):
        return [Problem("id", "control characters are not allowed in ids.", plan_id)]
    if plan_id != plan_id.strip():
        return [Problem("id", "no spaces at the start or end.", plan_id)]
    if len(plan_id) > limits.max_id_length:
        return [Problem("id", f"at most {limits.max_id_length} characters.", plan_id)]
    return []


def _check_kind_fields(kind: PlanType, args: Mapping[str, Any]) -> list[Problem]:
    problems = []
    wanted = _FIELD_FOR[kind]
    if args.get(wanted) is None:
        problems.append(
            Problem(wanted, f'type "{kind}" requires {wanted}; it was null or missing.')
        )
    for other_kind, other in _FIELD_FOR.items():
        if other != wanted and args.get(other) is not None:
            problems.append(
                Problem(
                    other,
                    f'only used with type "{other_kind}"; for a "{kind}" plan send null.',
                    args[other],
                )
            )
    return problems


def _build(
    kind: PlanType,
    plan_id: str,
    args: Mapping[str, Any],
    rules: Rules,
    problems: list[Problem],
    meta: Json | None,
) -> Stored | None:
    limits = rules.limits
    if kind == "items" and args.get("entries") is not None:
        raw: list[Json] = args["entries"]
        if len(raw) > limits.max_entries:
            problems.append(
                Problem(
                    "entries",
                    f"{len(raw)} steps; at most {limits.max_entries} are accepted. "
                    "Group small steps.",
                )
            )
        longest = max(map(len, map(_CONTENT, raw)), default=0)
        if longest > limits.max_entry_chars:  # a C-speed check first: this runs per step
            for index, e in enumerate(raw):
                if len(e["content"]) > limits.max_entry_chars:
                    problems.append(
                        Problem(
                            f"entries[{index}].content",
                            f"{len(e['content'])} characters; at most "
                            f"{limits.max_entry_chars}. Keep steps short, or use a markdown "
                            "plan for detail.",
                        )
                    )
        problems += [
            Problem(f"entries[{index}]._meta", _NOT_FINITE)
            for index, e in enumerate(raw)
            if "_meta" in e and not finite(e["_meta"])
        ]
        entries = [
            {
                "content": e["content"],
                "priority": e.get("priority") or "medium",
                "status": e.get("status") or "pending",
            }
            if "_meta" not in e
            else _entry(e)
            for e in raw
        ]
        return None if problems else Stored("items", plan_id, tuple(entries), meta=meta)
    if kind == "markdown" and args.get("content") is not None:
        content: str = args["content"]
        if len(content) > limits.max_markdown_chars:
            problems.append(
                Problem(
                    "content",
                    f"{len(content)} characters; at most {limits.max_markdown_chars}. "
                    "Write a shorter plan.",
                )
            )
            return None
        return None if problems else Stored("markdown", plan_id, content=content, meta=meta)
    if kind == "file" and args.get("uri") is not None:
        try:
            uri = file_uri(args["uri"], rules.workspace)
        except ValueError as exc:
            problems.append(Problem("uri", str(exc), args["uri"]))
            return None
        return None if problems else Stored("file", plan_id, uri=uri, meta=meta)
    return None


def _entry(e: Json) -> Json:
    # Validated arguments carry only the keys sent; ACP wants priority and status always.
    out: Json = {
        "content": e["content"],
        "priority": e.get("priority") or "medium",
        "status": e.get("status") or "pending",
    }
    if e.get("_meta") is not None:
        out["_meta"] = e["_meta"]
    return out
