"""The core's writers: a tool call and the current plans in, the next plans or the problems out.

Every path asks `apply`: plain calls, a streamed call's final arguments, restored snapshots
(a streamed call's previews, whose arguments are parsed already, ask `run`). It parses the
arguments, then lets the tool run the call through the writers here (`create`, `update`,
`remove` for ours, `write_list` for every list dialect), which decide validity, limits,
generated ids (honouring ids that streams in flight hold) and the next state. It never
raises for anything a model sends.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any

from .._models import PlanType
from . import results
from .arguments import Rejection, parse_bounded
from .builder import (
    FIELD_FOR,
    Rules,
    build,
    check_id,
    check_kind_fields,
    check_step_text,
    usual_items,
)
from .outcome import Applied, Read, Rejected
from .plans import Book, Json, Stored, extra_of, meta_with
from .results import Problem
from .tool import Call, PlanTool

Say = Callable[[Applied, bool], str]

_DEFAULT_RULES = Rules()


def apply(
    book: Book,
    tool: PlanTool,
    arguments: Any,
    rules: Rules = _DEFAULT_RULES,
    *,
    reserved_ids: Collection[str] = (),
    own_id: str | None = None,
    size: int | None = None,
) -> Applied | Rejected | Read:
    """Apply one call of `tool` to `book`, never raising for anything the model sent.

    `reserved_ids` are ids that streams in flight show and that a generated id must avoid;
    `own_id` is the id this call's own previews showed, which a generated id keeps when
    still free. `size` is the arguments' byte count when a stream kept less of them.
    """
    try:
        args, texts_checked = parse_bounded(tool, arguments, rules.limits, size=size)
        return tool.run(Call(tool, args, book, rules, reserved_ids, own_id, texts_checked))
    except Rejection as rejection:
        return Rejected(tool.name, rejection.problems, rejection.context)


def run(call: Call) -> Applied | Rejected | Read:
    """`apply` for arguments parsed already: a streamed call's preview, which validates only
    what became final since the last one (`_streaming.preview`)."""
    try:
        return call.tool.run(call)
    except Rejection as rejection:
        return Rejected(call.tool.name, rejection.problems, rejection.context)


def generated_id(book: Book, reserved_ids: Collection[str], own_id: str | None) -> tuple[str, int]:
    """The id a create without one gets, and the book's next number after it."""
    if own_id is not None and own_id not in book.plans:
        number = _number_of(own_id)
        return own_id, max(book.next_number, number + 1)
    number = book.next_number
    while f"plan-{number}" in book.plans or f"plan-{number}" in reserved_ids:
        number += 1
    return f"plan-{number}", number + 1


def _number_of(plan_id: str) -> int:
    digits = plan_id.removeprefix("plan-")
    return int(digits) if digits.isdigit() else 0


# ---- create ---------------------------------------------------------------------------------


def create(call: Call, say: Say) -> Applied:
    """`create_plan`: a new plan, under the id sent or a generated one."""
    book, args, rules, own_id = call.book, call.args, call.rules, call.own_id
    problems: list[Problem] = []
    plan_id = args.get("id")
    context = ""
    if plan_id is not None:
        problems += check_id(plan_id, rules.limits)
        reserved = next((p for p in rules.reserved if plan_id.startswith(p)), None)
        if reserved is not None:
            problems.append(
                Problem(
                    "id",
                    f'ids starting with "{reserved}" name a subagent\'s plans in this session; '
                    "pick another id (or null for a generated one).",
                    plan_id,
                )
            )
        if plan_id in book.plans:
            problems.append(
                Problem(
                    "id",
                    "a plan with this id exists. Use update_plan to change it, or pick "
                    "another id (or null for a generated one).",
                    plan_id,
                )
            )
            context = results.ids_list(book.plans)
    if len(book.plans) >= rules.limits.max_plans:
        problems.append(
            Problem(
                "",
                f"this session already has {results.count(len(book.plans), 'plan')}, "
                "the most allowed. "
                "Remove a finished plan with remove_plan first.",
            )
        )
    kind: PlanType = args["type"]
    problems += check_kind_fields(kind, args)
    next_number = book.next_number
    if plan_id is None:
        avoid = call.reserved_ids
        if rules.list_id is not None:  # the dialects' list is not ours to number over
            avoid = {*avoid, rules.list_id}
        plan_id, next_number = generated_id(book, avoid, own_id)
        # A generated id meets the id rules too (a small max_id_length, a counter restored
        # high): a plan the session holds must be one its snapshot restores.
        if check_id(plan_id, rules.limits):
            problems.append(
                Problem(
                    "id",
                    f'the generated id "{plan_id}" is longer than '
                    f"{rules.limits.max_id_length} characters; send an id of your own.",
                )
            )
    plan = build(
        kind,
        plan_id,
        args,
        rules,
        problems,
        None,
        validated=True,
        bounded=call.texts_checked,
        kept_by="snapshot" if rules.restoring else "model",
        last_task=book.last_task,
    )
    if problems or plan is None:
        raise Rejection(problems, context)
    plans = dict(book.plans)
    plans[plan_id] = plan
    book = book.with_plans(plans, next_number)
    return Applied(call.tool.name, book, plan_id, plan, say)


# ---- update ---------------------------------------------------------------------------------


_REPLACING = ("entries", "content", "uri")
_STEP = operator.itemgetter("step")
_KIND_OF: dict[str, PlanType] = {field: kind for kind, field in FIELD_FOR.items()}


def update(call: Call, say: Say) -> Applied:
    """`update_plan`: the plan with this id, changed step by step or replaced."""
    book, args, rules, bounded = call.book, call.args, call.rules, call.texts_checked
    name = call.tool.name
    current = book.plans.get(args["id"])
    if current is None:
        raise Rejection(
            [Problem("id", "no plan has this id.", args["id"])], results.ids_list(book.plans)
        )
    changes = args.get("changes")
    if changes is not None:  # the usual update of a long plan: the steps it touches, by number
        if (
            args.get("entries") is not None
            or args.get("content") is not None
            or args.get("uri") is not None
        ):
            replacing = [f for f in _REPLACING if args.get(f) is not None]
            raise Rejection(
                [
                    Problem(
                        "changes",
                        f"send either changes or a replacement ({', '.join(replacing)}), not both.",
                    )
                ]
            )
        plan = _changed(current, args.get("type"), changes, rules)
        return _updated(name, book, plan, say, tuple(map(_STEP, changes)))
    entries = args.get("entries")
    asked = False  # whether `usual_items` turned these entries down already
    if (
        entries is not None
        and args.get("type") in (None, "items")
        and args.get("content") is None
        and args.get("uri") is None
    ):
        # The usual update, the whole list sent again: when `build` would keep it as sent,
        # nothing below has more to say.
        usual = usual_items(current.id, entries, rules, current.meta, bounded=bounded)
        if usual is not None:
            return _updated(name, book, usual, say)
        asked = True
    replacing = [f for f in _REPLACING if args.get(f) is not None]
    kind = _kind_for_update(current, args.get("type"), replacing)
    problems = check_kind_fields(kind, args)
    # Entries `usual_items` turned down above are not offered to it again.
    built = build(
        kind,
        current.id,
        args,
        rules,
        problems,
        current.meta,
        validated=not asked,
        bounded=bounded,
    )
    if problems or built is None:
        raise Rejection(problems)
    return _updated(name, book, built, say)


def _updated(name: str, book: Book, plan: Stored, say: Say, steps: tuple[int, ...] = ()) -> Applied:
    plans = {**book.plans, plan.id: plan}
    return Applied(name, book.with_plans(plans), plan.id, plan, say, steps)


def _kind_for_update(current: Stored, kind: PlanType | None, replacing: list[str]) -> PlanType:
    if kind is not None:
        return kind
    if len(replacing) == 1:
        return _KIND_OF[replacing[0]]
    if not replacing:
        wanted = FIELD_FOR[current.type]
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


def _changed(current: Stored, kind: PlanType | None, changes: list[Json], rules: Rules) -> Stored:
    if current.type != "items":
        raise Rejection(
            [
                Problem(
                    "changes",
                    f'plan "{current.id}" is a {current.type} plan; changes only edit items '
                    f"plans. Send {FIELD_FOR[current.type]} to replace it.",
                )
            ]
        )
    if kind not in (None, "items"):
        raise Rejection([Problem("type", "changes keep the plan an items plan; send null.", kind)])
    entries = list(current.entries)
    statuses = list(current.statuses)  # kept beside the entries: no pass over them all again
    problems = []
    for index, change in enumerate(changes):
        step = change["step"]
        status, priority, content = (
            change.get("status"),
            change.get("priority"),
            change.get("content"),
        )
        if not 1 <= step <= len(entries):
            problems.append(
                Problem(
                    f"changes[{index}].step",
                    f'plan "{current.id}" has {results.step_numbers(len(entries))}.',
                    step,
                )
            )
        elif status is None and priority is None and content is None:
            problems.append(
                Problem(
                    f"changes[{index}]",
                    "this change sets nothing; give status, priority or content.",
                )
            )
        elif content is not None and (
            too_long := check_step_text(f"changes[{index}].content", content, rules.limits)
        ):
            problems.append(too_long)
        else:
            old = entries[step - 1]
            new: Json = {
                "content": old["content"] if content is None else content,
                "priority": priority or old["priority"],
                "status": status or old["status"],
            }
            if "_meta" in old:
                new["_meta"] = old["_meta"]
                extra = extra_of(old)
                if "activeForm" in extra and content is not None and content != old["content"]:
                    # Claude's in-progress wording of the old text: every form would show it
                    # for the renamed step.
                    del extra["activeForm"]
                    if (meta := meta_with(old["_meta"], extra)) is None:
                        del new["_meta"]
                    else:
                        new["_meta"] = meta
            entries[step - 1] = new
            statuses[step - 1] = new["status"]
    if problems:
        raise Rejection(problems, results.steps_list(current))
    return Stored(
        "items", current.id, tuple(entries), meta=current.meta, known_statuses=tuple(statuses)
    )


# ---- remove ---------------------------------------------------------------------------------


def remove(call: Call, say: Say) -> Applied:
    """`remove_plan`: the plan with this id, gone."""
    book, plan_id = call.book, call.args["id"]
    if plan_id not in book.plans:
        raise Rejection(
            [Problem("id", "no plan has this id.", plan_id)], results.ids_list(book.plans)
        )
    plans = {k: v for k, v in book.plans.items() if k != plan_id}
    return Applied(call.tool.name, book.with_plans(plans), plan_id, None, say)


# ---- the lists of the other dialects ----------------------------------------------------


def write_list(
    call: Call,
    entries: list[Json],
    rename: Callable[[str], str],
    *,
    last_task: int | None = None,
    found: Collection[Problem] = (),
) -> tuple[Book, Stored]:
    """The book with the dialect's list (`rules.list_id`) set to `entries`: created when it
    does not exist, through the rules every plan is built by (the problems' paths given in
    the dialect's terms by `rename`). `last_task` records a newly issued task number; `found`
    are problems the dialect found itself, told together with the core's.
    """
    book, rules, plan_id = call.book, call.rules, call.list_id
    existing = book.plans.get(plan_id)
    problems: list[Problem] = []
    if existing is None and len(book.plans) >= rules.limits.max_plans:
        problems.append(
            Problem(
                "",
                f"this session already has {results.count(len(book.plans), 'plan')}, the "
                f'most allowed, and the list is a plan of its own ("{plan_id}").',
            )
        )
    elif existing is not None and existing.type != "items" and not rules.lists_only:
        # Our tools wrote it there: the model that has them can move it out of the way.
        problems.append(
            Problem(
                "",
                f'the list is the plan "{plan_id}", which is a {existing.type} plan; a list '
                f'does not replace it. Remove it with remove_plan (id "{plan_id}") first, or '
                "keep it and plan in it with update_plan.",
            )
        )
    built = None
    if not problems:
        # Without our tools nothing else reaches a plan at the list's id (a restored
        # snapshot put it there): the list replaces it rather than stay out of reach.
        keep = existing is not None and existing.type == "items"
        meta = existing.meta if keep and existing is not None else None
        rules = rules if rules.list_id == plan_id else replace(rules, list_id=plan_id)
        built = build(
            "items", plan_id, {"entries": entries}, rules, problems, meta, kept_by="session"
        )
    if found or problems or built is None:
        renamed = [Problem(rename(p.path), p.message, p.sent) for p in problems]
        raise Rejection(sorted([*found, *renamed], key=_by_item))
    plans = dict(book.plans)
    plans[plan_id] = built
    changed = book.with_plans(plans)
    if last_task is not None:
        changed = replace(changed, last_task=max(book.last_task, last_task))
    return changed, built


def _by_item(problem: Problem) -> tuple[int, int]:
    # Problems of the whole call first, then item by item (`todos[3].activeForm`).
    start = problem.path.find("[")
    end = problem.path.find("]", start)
    if start < 0 or end < 0 or not problem.path[start + 1 : end].isdigit():
        return (0, 0)
    return (1, int(problem.path[start + 1 : end]))
