"""Texts the model reads: problems with its arguments, and what a successful call did."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ._book import Stored
from ._models import ToolName
from ._registry import TOOLS

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
# Step texts quoted in update results are cut to this: the model wrote them and needs a cue,
# and the result of a status change must stay small however long the steps are.
_MAX_BRIEF = 60
# Results of a status change stay under 600 bytes at any plan length: at most this many
# changed (or in-progress) step numbers are listed, then a count of the rest.
_MAX_CHANGES_LISTED = 5


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
    failure: BaseException | None = None
    """A local failure after the call was decided: `send` raised (the client missed the
    change and is brought up to date by the next call or `replay()`), or `on_commit` raised
    (the change stands; the next commit runs it again). None when all went well."""


def cut_off_problem() -> Problem:
    """The problem of a call the output token limit cut short."""
    return Problem("", CUT_OFF)


def rejection(tool: str, problems: list[Problem], *, context: str = "") -> str:
    """The result of a rejected call: every problem, then what to do."""
    count = "1 problem" if len(problems) == 1 else f"{len(problems)} problems"
    lines = [f"{tool} was not applied ({count}); no plan was changed."]
    lines += [p.render() for p in problems]
    if context:
        lines.append(context)
    lines.append(f"Fix the errors and call {tool} again.")
    return "\n".join(lines)


def applied(
    tool: ToolName,
    plan_id: str,
    plan: Stored | None,
    changed: tuple[int, ...],
    plans: Mapping[str, Stored],
    *,
    discipline: bool,
) -> str:
    """The result of a call that applied: what changed, and what the model needs next."""
    verb = TOOLS[tool].verb
    if plan is None:
        rest = ids_list(plans).replace("Existing", "Remaining") if plans else "No plans remain."
        return f'{verb} plan "{plan_id}". {rest}'
    if plan.type != "items":
        return f"{verb} {describe(plan)}"
    if changed:
        lines = [_changes_line(verb, plan, changed), *_progress(plan)]
    else:
        lines = [f"{verb} {describe(plan, changed)}"]
        if tool == "create_plan":
            lines.append(progress_hint(plan))
    if discipline:
        lines += discipline_notes(plan)
    return "\n".join(lines)


def describe(plan: Stored, focus: Iterable[int] = ()) -> str:
    """A plan as the model should see it after writing it: its id and numbered steps.

    A long plan lists only the steps that matter now (`focus`, those in progress and the
    next pending ones), with counts for the rest: the model wrote the plan and needs the
    numbers, not the whole list in every result.
    """
    if plan.type == "markdown":
        return f'plan "{plan.id}" (markdown, {len(plan.content.splitlines())} lines).'
    if plan.type == "file":
        return f'plan "{plan.id}" (file {plan.uri}).'
    total = len(plan.entries)
    lines = [f'plan "{plan.id}" (items, {_steps(total)}):']
    shown = range(1, total + 1) if total <= MAX_LISTED_STEPS else _focus(plan, focus)
    previous = 0
    for number in shown:
        if number > previous + 1:
            lines.append(f"   ... steps {previous + 1} to {number - 1} not shown")
        entry = plan.entries[number - 1]
        priority = "" if entry["priority"] == "medium" else f" ({entry['priority']} priority)"
        lines.append(f"{number}. [{entry['status']}] {entry['content']}{priority}")
        previous = number
    if previous < total:
        lines.append(f"   ... steps {previous + 1} to {total} not shown")
    if total > MAX_LISTED_STEPS:
        counts = _counts(plan)
        lines.append(
            f"({counts['completed']} completed, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending)"
        )
    return "\n".join(lines)


def steps_list(plan: Stored) -> str:
    """The numbered steps of a plan, for a rejected change to them."""
    text = describe(plan)
    return text[0].upper() + text[1:]


def _steps(count: int) -> str:
    return "1 step" if count == 1 else f"{count} steps"


def _counts(plan: Stored) -> dict[str, int]:
    return {s: plan.statuses.count(s) for s in ("completed", "in_progress", "pending")}


def _brief(text: str) -> str:
    return json.dumps(
        text if len(text) <= _MAX_BRIEF else text[: _MAX_BRIEF - 3] + "...", ensure_ascii=False
    )


def _changes_line(verb: str, plan: Stored, changed: tuple[int, ...]) -> str:
    parts = []
    steps = list(dict.fromkeys(changed))
    for number in steps[:_MAX_CHANGES_LISTED]:
        entry = plan.entries[number - 1]
        parts.append(f"step {number} {entry['status']}")
    if len(steps) > _MAX_CHANGES_LISTED:
        parts.append(f"and {len(steps) - _MAX_CHANGES_LISTED} more")
    return f'{verb} plan "{plan.id}" ({_steps(len(plan.entries))}): {", ".join(parts)}.'


def _progress(plan: Stored) -> list[str]:
    doing = plan.steps_with("in_progress", 1)
    doing_count = plan.statuses.count("in_progress")
    pending_count = plan.statuses.count("pending")
    lines = []
    if doing:
        shown = "; ".join(f"step {n} {_brief(plan.entries[n - 1]['content'])}" for n in doing)
        more = f" and {doing_count - 1} more" if doing_count > 1 else ""
        lines.append(f"In progress: {shown}{more}.")
    if not doing_count and not pending_count:
        lines.append(f"All {_steps(len(plan.entries))} are completed.")
        return lines
    left = f"Remaining: {doing_count + pending_count} of {len(plan.entries)}"
    first = plan.steps_with("pending", 1)
    if first:
        left += f"; next pending: step {first[0]} {_brief(plan.entries[first[0] - 1]['content'])}"
    lines.append(left + ".")
    return lines


def _focus(plan: Stored, focus: Iterable[int]) -> list[int]:
    wanted = {n for n in focus if 1 <= n <= len(plan.entries)}
    wanted.update(plan.steps_with("in_progress", len(plan.entries)))
    wanted.update(plan.steps_with("pending", _NEXT_PENDING))
    return sorted(wanted)


def ids_list(plans: Mapping[str, Any]) -> str:
    """The ids that exist, for messages about unknown ids."""
    if not plans:
        return "There are no plans yet; create one with create_plan."
    return "Existing plan ids: " + ", ".join(json.dumps(i, ensure_ascii=False) for i in plans) + "."


def discipline_notes(plan: Stored) -> list[str]:
    """Advice (not errors) when an items plan does not show what is being worked on."""
    doing = plan.steps_with("in_progress", _MAX_CHANGES_LISTED)
    if len(doing) > 1:
        steps = ", ".join(map(str, doing))
        more = plan.statuses.count("in_progress") - len(doing)
        if more:
            steps += f" and {more} more"
        return [f"Note: steps {steps} are all in_progress; keep exactly one step in progress."]
    if not doing:
        left = plan.steps_with("pending", 1)
        if left:
            return [
                f"Note: steps remain but none is in_progress; set step {left[0]} (or the step "
                "you work on now) to in_progress."
            ]
    return []


def progress_hint(plan: Stored) -> str:
    """How to record progress on a new items plan, in the fewest bytes."""
    example = json.dumps(
        {"id": plan.id, "changes": [{"step": 1, "status": "completed"}]}, ensure_ascii=False
    )
    return f"Record progress by step number: update_plan {example}"


def send_failure(failure: BaseException) -> str:
    """Appended to a result when the client could not be notified."""
    return (
        f"Warning: the change is saved, but the client could not be notified "
        f"({type(failure).__name__}: {failure}). It is re-sent with the next plan call."
    )
