"""Texts the model reads: problems with its arguments, and what a successful call did."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ._models import ItemsPlan, Plan

_UNSET: Any = object()
CUT_OFF = (
    "your call was cut off before its arguments were complete (the output token limit was "
    "reached), so it was not applied. Send a shorter plan, or create it and add steps in a "
    "second call."
)
# Long values are cut in error messages: the model needs to recognise its input, not reread it.
_MAX_SHOWN = 120
# Results list every step of plans up to this long; a longer one shows the steps in focus.
MAX_LISTED_STEPS = 40
_NEXT_PENDING = 3


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a tool call, phrased for the model."""

    path: str
    """Where in the arguments, as `changes[0].step`; empty for the whole call."""
    message: str
    """What is wrong and what is accepted."""
    sent: Any = _UNSET
    """The offending value, shown back to the model."""

    def render(self) -> str:
        where = f"{self.path}: " if self.path else ""
        sent = "" if self.sent is _UNSET else f"sent {shown(self.sent)}; "
        return f"- {where}{sent}{self.message}"


def shown(value: Any) -> str:
    """`value` as JSON, cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def path_of(loc: Iterable[int | str]) -> str:
    """A pydantic location as a JSON-ish path: `entries[2].status`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def from_validation_error(error: ValidationError, fields: Iterable[str]) -> list[Problem]:
    """Turn pydantic's errors into problems that say what is accepted."""
    problems = []
    for item in error.errors(include_url=False):
        loc = [p for p in item["loc"] if not _is_union_branch(p)]
        path = path_of(loc)
        kind = item["type"]
        value = item.get("input", _UNSET)
        ctx = item.get("ctx") or {}
        if kind == "missing":
            problems.append(Problem(path, "this field is required."))
        elif kind == "extra_forbidden":
            accepted = ", ".join(fields) if len(loc) == 1 else _nested_fields(loc)
            problems.append(
                Problem(path, f"not a known field. Accepted fields: {accepted}.", value)
            )
        elif kind == "literal_error":
            expected = str(ctx.get("expected", "")).replace("'", '"')
            problems.append(Problem(path, f"accepted values: {expected}.", value))
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            problems.append(Problem(path, "expected a whole number.", value))
        elif kind == "greater_than_equal":
            problems.append(Problem(path, f"must be at least {ctx.get('ge')}.", value))
        elif kind == "string_too_short":
            problems.append(Problem(path, "must not be empty.", value))
        elif kind in ("string_type", "string_unicode"):
            problems.append(Problem(path, "expected a string.", value))
        elif kind in ("list_type", "tuple_type"):
            problems.append(Problem(path, "expected an array (or null).", value))
        elif kind in ("model_type", "dict_type", "model_attributes_type"):
            problems.append(Problem(path, "expected a JSON object.", value))
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            problems.append(Problem(path, message.rstrip(".") + ".", value))
    return problems


def _is_union_branch(part: int | str) -> bool:
    # pydantic names the branch of a union it tried (`list[Entry]`, `literal['a']`); the model
    # never wrote those names, so they are dropped from paths.
    return isinstance(part, str) and ("[" in part or part in ("none", "str", "int"))


def _nested_fields(loc: list[int | str]) -> str:
    parent = next((p for p in reversed(loc[:-1]) if isinstance(p, str)), "")
    if parent == "entries":
        return "content, priority, status"
    if parent == "changes":
        return "step, status, priority, content"
    return "see the tool's schema"


@dataclass(frozen=True)
class ToolResult:
    """What a plan tool call did, and the text the model reads as its result."""

    ok: bool
    """False when the call was rejected; then nothing was sent and nothing changed."""
    content: str
    """The tool result for the model."""
    tool: str = ""
    plan_id: str | None = None


def cut_off(tool: str) -> ToolResult:
    """The result of a call the output token limit cut short."""
    return ToolResult(False, rejection(tool, [Problem("", CUT_OFF)]), tool)


def rejection(tool: str, problems: list[Problem], *, context: str = "") -> str:
    """The result of a rejected call: every problem, then what to do."""
    count = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
    lines = [f"{tool} was not applied ({count}); no plan was changed."]
    lines += [p.render() for p in problems]
    if context:
        lines.append(context)
    lines.append(f"Fix the errors and call {tool} again.")
    return "\n".join(lines)


def describe(plan: Plan, focus: Iterable[int] = ()) -> str:
    """A plan as the model should see it after a change: its id and numbered steps.

    A long plan lists only the steps that matter now (`focus`, those in progress and the
    next pending ones), with counts for the rest: the model wrote the plan and needs the
    numbers, not the whole list in every result.
    """
    if isinstance(plan, ItemsPlan):
        total = len(plan.entries)
        steps = "1 step" if total == 1 else f"{total} steps"
        lines = [f'Plan "{plan.id}" (items, {steps}):']
        shown = range(1, total + 1) if total <= MAX_LISTED_STEPS else _focus(plan, focus)
        previous = 0
        for number in shown:
            if number > previous + 1:
                lines.append(f"   ... steps {previous + 1} to {number - 1} not shown")
            entry = plan.entries[number - 1]
            priority = "" if entry.priority == "medium" else f" ({entry.priority} priority)"
            lines.append(f"{number}. [{entry.status}] {entry.content}{priority}")
            previous = number
        if previous < total:
            lines.append(f"   ... steps {previous + 1} to {total} not shown")
        if total > MAX_LISTED_STEPS:
            counts = {s: 0 for s in ("completed", "in_progress", "pending")}
            for entry in plan.entries:
                counts[entry.status] += 1
            lines.append(
                f"({counts['completed']} completed, {counts['in_progress']} in "
                f"progress, {counts['pending']} pending)"
            )
        return "\n".join(lines)
    if plan.type == "markdown":
        return f'Plan "{plan.id}" (markdown, {len(plan.content.splitlines())} lines).'
    return f'Plan "{plan.id}" (file {plan.uri}).'


def _focus(plan: ItemsPlan, focus: Iterable[int]) -> list[int]:
    wanted = {n for n in focus if 1 <= n <= len(plan.entries)}
    pending = 0
    for number, entry in enumerate(plan.entries, 1):
        if entry.status == "in_progress":
            wanted.add(number)
        elif entry.status == "pending" and pending < _NEXT_PENDING:
            wanted.add(number)
            pending += 1
    return sorted(wanted)


def ids_list(plans: Mapping[str, Plan]) -> str:
    """The ids that exist, for messages about unknown ids."""
    if not plans:
        return "There are no plans yet; create one with create_plan."
    return "Existing plan ids: " + ", ".join(json.dumps(i) for i in plans) + "."


def discipline_notes(plan: ItemsPlan) -> list[str]:
    """Advice (not errors) when an items plan does not show what is being worked on."""
    doing = [n for n, e in enumerate(plan.entries, 1) if e.status == "in_progress"]
    left = [n for n, e in enumerate(plan.entries, 1) if e.status == "pending"]
    if len(doing) > 1:
        steps = ", ".join(map(str, doing))
        return [f"Note: steps {steps} are all in_progress; keep exactly one step in progress."]
    if left and not doing:
        return [
            f"Note: steps remain but none is in_progress; set step {left[0]} (or the step "
            "you work on now) to in_progress."
        ]
    return []


def progress_hint(plan: ItemsPlan) -> str:
    """How to record progress on a new items plan, in the fewest bytes."""
    example = json.dumps({"id": plan.id, "changes": [{"step": 1, "status": "completed"}]})
    return f"Record progress by step number: update_plan {example}"
