"""The pure core: a tool call and the current plans in, the next plans or the problems out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from . import _feedback
from ._feedback import Problem
from ._limits import Limits
from ._models import (
    ARGUMENT_MODELS,
    TOOL_NAMES,
    Change,
    CreatePlanArgs,
    FilePlan,
    ItemsPlan,
    MarkdownPlan,
    PlanEntry,
    PlanType,
    RemovePlanArgs,
    ToolName,
    UpdatePlanArgs,
)
from ._repair import Undecodable, decode, repair
from ._uris import file_uri

AnyPlan = ItemsPlan | MarkdownPlan | FilePlan
_DUPLICATE_ID = (
    "a plan with this id exists. Use update_plan to change it, or pick another id "
    "(or null for a generated one)."
)
_FIELD_FOR: dict[PlanType, str] = {"items": "entries", "markdown": "content", "file": "uri"}


@dataclass(frozen=True)
class Book:
    """Every active plan of a session, in creation order, and the next generated id number."""

    plans: Mapping[str, AnyPlan] = field(default_factory=dict)
    next_number: int = 1


@dataclass(frozen=True)
class Applied:
    """A call that changed the book."""

    tool: ToolName
    book: Book
    plan_id: str
    plan: AnyPlan | None
    """The plan after the call; None when it was removed."""
    changed: tuple[int, ...] = ()
    """The step numbers a `changes` update touched."""


@dataclass(frozen=True)
class Rejected:
    """A call that changed nothing."""

    tool: str
    problems: list[Problem]
    context: str = ""


@dataclass(frozen=True)
class Rules:
    """What the core needs to know beyond the call itself."""

    limits: Limits = field(default_factory=Limits)
    workspace: Path | None = None


class _Rejection(Exception):
    def __init__(self, problems: list[Problem], context: str = "") -> None:
        self.problems = problems
        self.context = context


def apply(book: Book, tool: str, arguments: Any, rules: Rules = Rules()) -> Applied | Rejected:
    """Apply one plan tool call to `book`, never raising for anything the model sent."""
    if tool not in TOOL_NAMES:
        names = ", ".join(TOOL_NAMES)
        return Rejected(tool, [Problem("", f"{tool!r} is not a plan tool; plan tools: {names}.")])
    name: ToolName = tool
    try:
        args = _parse(name, arguments, rules.limits)
        if isinstance(args, CreatePlanArgs):
            return _create(book, args, rules)
        if isinstance(args, UpdatePlanArgs):
            return _update(book, args, rules)
        assert isinstance(args, RemovePlanArgs)
        return _remove(book, args)
    except _Rejection as rejection:
        return Rejected(name, rejection.problems, rejection.context)


def _parse(tool: ToolName, arguments: Any, limits: Limits) -> BaseModel:
    model = ARGUMENT_MODELS[tool]
    if isinstance(arguments, model):
        return arguments  # validated already (a streamed call's preview)
    if isinstance(arguments, (str, bytes)):
        if len(arguments) > limits.max_arguments_bytes:
            message = (
                f"the arguments are {len(arguments)} bytes; at most "
                f"{limits.max_arguments_bytes} are accepted. Send a shorter plan."
            )
            raise _Rejection([Problem("", message)])
        # Fast path: well-formed arguments are validated straight from the JSON text, in one
        # pass; only arguments that fail it are decoded and repaired first.
        try:
            return model.model_validate_json(arguments)
        except ValidationError:
            pass
    try:
        value = repair(decode(arguments))
    except Undecodable as exc:
        if exc.truncated:
            raise _Rejection([Problem("", _feedback.CUT_OFF)]) from None
        message = f"the arguments are not valid JSON ({exc}). Send one JSON object."
        raise _Rejection([Problem("", message)]) from None
    if not isinstance(value, dict):
        raise _Rejection([Problem("", "the arguments must be a JSON object.", value)])
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise _Rejection(_feedback.from_validation_error(exc, model.model_fields)) from None


# ---- create ---------------------------------------------------------------------------------


def _create(book: Book, args: CreatePlanArgs, rules: Rules) -> Applied:
    problems: list[Problem] = []
    if args.id is not None:
        problems += _check_id(args.id, rules.limits)
        if args.id in book.plans:
            problems.append(
                Problem(
                    "id",
                    "a plan with this id exists. Use update_plan to change "
                    "it, or pick another id (or null for a generated one).",
                    args.id,
                )
            )
    if len(book.plans) >= rules.limits.max_plans:
        problems.append(
            Problem(
                "",
                f"this session already has {len(book.plans)} plans, the most "
                "allowed. Remove a finished plan with remove_plan first.",
            )
        )
    problems += _check_kind_fields(args.type, args, "create_plan")
    if args.type == "items" and args.entries == []:
        problems.append(Problem("entries", "an items plan needs at least one step.", []))
    number = book.next_number
    plan_id = args.id
    if plan_id is None:
        while f"plan-{number}" in book.plans:
            number += 1
        plan_id = f"plan-{number}"
        number += 1
    plan = _build(args.type, plan_id, args, rules, problems)
    if problems or plan is None:
        raise _Rejection(problems, _feedback.ids_list(book.plans) if args.id in book.plans else "")
    plans = dict(book.plans)
    plans[plan_id] = plan
    return Applied("create_plan", Book(plans, number), plan_id, plan)


# ---- update ---------------------------------------------------------------------------------


def _update(book: Book, args: UpdatePlanArgs, rules: Rules) -> Applied:
    current = book.plans.get(args.id)
    if current is None:
        raise _Rejection(
            [Problem("id", "no plan has this id.", args.id)], _feedback.ids_list(book.plans)
        )
    plan: AnyPlan | None
    replacing = [f for f in ("entries", "content", "uri") if getattr(args, f) is not None]
    if args.changes is not None:
        if replacing:
            raise _Rejection(
                [
                    Problem(
                        "changes",
                        "send either changes or a replacement ("
                        + ", ".join(replacing)
                        + "), not both.",
                    )
                ]
            )
        plan = _changed(current, args)
    else:
        kind = _kind_for_update(current, args, replacing)
        problems = _check_kind_fields(kind, args, "update_plan")
        plan = _build(kind, current.id, args, rules, problems, meta=current.meta)
        if problems or plan is None:
            raise _Rejection(problems)
    plans = dict(book.plans)
    plans[plan.id] = plan
    changed = tuple(c.step for c in args.changes or ())
    return Applied("update_plan", Book(plans, book.next_number), plan.id, plan, changed)


def _kind_for_update(current: AnyPlan, args: UpdatePlanArgs, replacing: list[str]) -> PlanType:
    if args.type is not None:
        return args.type
    if len(replacing) == 1:
        return next(k for k, f in _FIELD_FOR.items() if f == replacing[0])
    if not replacing:
        field_name = _FIELD_FOR[current.type]
        hint = (
            f"changes (to edit steps by number) or {field_name}"
            if current.type == "items"
            else field_name
        )
        raise _Rejection([Problem("", f"nothing to update: send {hint}.")])
    raise _Rejection(
        [
            Problem(
                "",
                "send one of entries, content or uri (or set type); got "
                + ", ".join(replacing)
                + ".",
            )
        ]
    )


def _changed(current: AnyPlan, args: UpdatePlanArgs) -> ItemsPlan:
    assert args.changes is not None
    if not isinstance(current, ItemsPlan):
        raise _Rejection(
            [
                Problem(
                    "changes",
                    f'plan "{current.id}" is a {current.type} plan; '
                    f"changes only edit items plans. Send "
                    f"{_FIELD_FOR[current.type]} to replace it.",
                )
            ]
        )
    if args.type not in (None, "items"):
        raise _Rejection(
            [Problem("type", "changes keep the plan an items plan; send null.", args.type)]
        )
    entries = list(current.entries)
    problems = []
    for index, change in enumerate(args.changes):
        path = f"changes[{index}]"
        if not 1 <= change.step <= len(entries):
            problems.append(
                Problem(
                    f"{path}.step",
                    f'plan "{current.id}" has steps 1 to {len(entries)}.',
                    change.step,
                )
            )
        elif change.status is None and change.priority is None and change.content is None:
            problems.append(
                Problem(path, "this change sets nothing; give status, priority or content.")
            )
        else:
            entries[change.step - 1] = _apply_change(entries[change.step - 1], change)
    if problems:
        raise _Rejection(problems, _feedback.describe(current))
    return ItemsPlan(id=current.id, entries=tuple(entries), meta=current.meta)


def _apply_change(entry: PlanEntry, change: Change) -> PlanEntry:
    return PlanEntry(
        content=change.content if change.content is not None else entry.content,
        priority=change.priority or entry.priority,
        status=change.status or entry.status,
        meta=entry.meta,
    )


# ---- remove ---------------------------------------------------------------------------------


def _remove(book: Book, args: RemovePlanArgs) -> Applied:
    if args.id not in book.plans:
        raise _Rejection(
            [Problem("id", "no plan has this id.", args.id)], _feedback.ids_list(book.plans)
        )
    plans = {k: v for k, v in book.plans.items() if k != args.id}
    return Applied("remove_plan", Book(plans, book.next_number), args.id, None)


# ---- shared ---------------------------------------------------------------------------------


def _check_id(plan_id: str, limits: Limits) -> list[Problem]:
    if not plan_id.strip():
        return [Problem("id", "must not be empty; send null to get a generated id.", plan_id)]
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in plan_id):
        return [Problem("id", "control characters are not allowed in ids.", plan_id)]
    if plan_id != plan_id.strip():
        return [Problem("id", "no spaces at the start or end.", plan_id)]
    if len(plan_id) > limits.max_id_length:
        return [Problem("id", f"at most {limits.max_id_length} characters.", plan_id)]
    return []


def _check_kind_fields(
    kind: PlanType, args: CreatePlanArgs | UpdatePlanArgs, tool: str
) -> list[Problem]:
    problems = []
    wanted = _FIELD_FOR[kind]
    if getattr(args, wanted) is None:
        problems.append(
            Problem(wanted, f'type "{kind}" requires {wanted}; it was null or missing.')
        )
    for other_kind, other in _FIELD_FOR.items():
        if other != wanted and getattr(args, other) is not None:
            problems.append(
                Problem(
                    other,
                    f'only used with type "{other_kind}"; for a "{kind}" plan send null.',
                    _short(getattr(args, other)),
                )
            )
    return problems


def _short(value: Any) -> Any:
    if isinstance(value, list):
        return [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
    return value


def _build(
    kind: PlanType,
    plan_id: str,
    args: CreatePlanArgs | UpdatePlanArgs,
    rules: Rules,
    problems: list[Problem],
    meta: dict[str, Any] | None = None,
) -> AnyPlan | None:
    limits = rules.limits
    if kind == "items" and args.entries is not None:
        if len(args.entries) > limits.max_entries:
            problems.append(
                Problem(
                    "entries",
                    f"{len(args.entries)} steps; at most "
                    f"{limits.max_entries} are accepted. Group small steps.",
                )
            )
        for index, e in enumerate(args.entries):
            if len(e.content) > limits.max_entry_chars:
                problems.append(
                    Problem(
                        f"entries[{index}].content",
                        f"{len(e.content)} "
                        f"characters; at most {limits.max_entry_chars}. Keep "
                        "steps short, or use a markdown plan for detail.",
                    )
                )
        if problems:
            return None
        # Entries and id are validated already: construct without validating them again.
        return ItemsPlan.model_construct(id=plan_id, entries=tuple(args.entries), meta=meta)
    if kind == "markdown" and args.content is not None:
        if len(args.content) > limits.max_markdown_chars:
            problems.append(
                Problem(
                    "content",
                    f"{len(args.content)} characters; at most "
                    f"{limits.max_markdown_chars}. Write a shorter plan.",
                )
            )
            return None
        return None if problems else MarkdownPlan(id=plan_id, content=args.content, meta=meta)
    if kind == "file" and args.uri is not None:
        try:
            uri = file_uri(args.uri, rules.workspace)
        except ValueError as exc:
            problems.append(Problem("uri", str(exc), args.uri))
            return None
        return None if problems else FilePlan(id=plan_id, uri=uri, meta=meta)
    return None
