"""Texts the model reads that every dialect shares: problems with its arguments, rejections,
plans described, and notes on how a list moves on."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .plans import Stored, extra_of

_UNSET: Any = object()
# Another dialect's tool writes a whole list, or one task, in a call: no second call adds to
# what the first one created.
CUT_OFF_LIST = (
    "your call was cut off before its arguments were complete (the output token limit was "
    "reached), so it was not applied. Send it again with shorter texts."
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
MAX_CHANGES_LISTED = 5
# A rejection names this many problems, then how many more: the model fixes the first ones
# and hears of any left on its next call. Listing all of them let 300 KB of arguments come
# back as a 3.1 MB tool result, more tokens than the plan it was fixing.
MAX_PROBLEMS_LISTED = 10
# Each problem's line is cut to this many UTF-8 bytes (a path, a value and a message fit
# comfortably), and the context (a plan's steps, the ids of 20 plans) to this many in all.
_MAX_LINE_BYTES = 400
_MAX_CONTEXT_BYTES = 3_072
MAX_REJECTION_BYTES = 8 * 1024
"""No rejection's text is longer than this, in UTF-8 bytes, whatever the model sent: a
header, MAX_PROBLEMS_LISTED lines, the context and the next step fit in it with room left."""


# `json.dumps(value, ensure_ascii=False)` without building an encoder on every call: result
# texts quote step texts and ids on every call.
_quoted = json.JSONEncoder(ensure_ascii=False).encode


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
        where = f"{cut(self.path)}: " if self.path else ""
        sent = "" if self.sent is _UNSET else f"sent {shown(self.sent)}; "
        return clip(f"- {where}{sent}{self.message}", _MAX_LINE_BYTES)


def shown(value: Any) -> str:
    """`value` as JSON, cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(text)


def cut(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, ending in "..." where it was cut."""
    if len(text) * 4 <= limit:
        return text  # no character takes more than 4 bytes: no need to encode
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode("utf-8", "ignore") + "..."


def count(number: int, noun: str) -> str:
    """`1 step`, `2 steps`: a count with its noun in the right number."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def path_of(loc: Iterable[int | str]) -> str:
    """A pydantic location as a JSON-ish path: `entries[2].status`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def from_validation_error(
    error: ValidationError, fields: Iterable[str], nested: Mapping[str, str] | None = None
) -> list[Problem]:
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
            accepted = ", ".join(fields) if len(loc) == 1 else _nested_fields(loc, nested)
            problems.append(
                Problem(path, f"not a known field. Accepted fields: {accepted}.", value)
            )
        elif kind == "literal_error":
            expected = str(ctx.get("expected", "")).replace("'", '"')
            problems.append(Problem(path, f"accepted values: {expected}.", value))
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            problems.append(Problem(path, "expected a whole number.", value))
        elif kind in ("bool_type", "bool_parsing"):
            problems.append(Problem(path, "expected true or false.", value))
        elif kind == "greater_than_equal":
            problems.append(Problem(path, f"must be at least {ctx.get('ge')}.", value))
        elif kind == "string_too_short":
            problems.append(Problem(path, "must not be empty.", value))
        elif kind in ("string_type", "string_unicode"):
            problems.append(Problem(path, "expected a string.", value))
        elif kind in ("list_type", "tuple_type"):
            # Our arrays may be null; another dialect's (`nested` given) may not.
            also = " (or null)" if nested is None else ""
            problems.append(Problem(path, f"expected an array{also}.", value))
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


def _nested_fields(loc: list[int | str], nested: Mapping[str, str] | None = None) -> str:
    parent = next((p for p in reversed(loc[:-1]) if isinstance(p, str)), "")
    return (nested or {}).get(parent, "see the tool's schema")


KEPT_BY_SESSION = (
    'the "llm_plans" key of an entry\'s _meta is where the session keeps its own records (task '
    "numbers, activeForm, a dialect's status), which no call may set. Leave it out; other _meta "
    "keys are kept as sent."
)
"""Why a model's entry may not carry `_meta["llm_plans"]` (at `entries[N]._meta.llm_plans`)."""


@dataclass(frozen=True, init=False)
class ToolResult:
    """What a plan tool call did, and the text the model reads as its result.

    Args:
        ok: False when the call was rejected (then nothing changed and nothing was sent).
        content: The tool result for the model.
        tool: The plan tool called, by name.
        plan_id: The plan the call was about, when it named or created one.
        failure: What failed locally after the call was decided (`send` or `on_commit`
            raised); None when all went well.
    """

    ok: bool
    """False when the call was rejected; then nothing was sent and nothing changed."""
    content: str
    """The tool result for the model."""
    tool: str = ""
    """The plan tool called (`create_plan`, `update_plan`, `remove_plan`)."""
    plan_id: str | None = None
    """The plan the call was about, when it named or created one."""
    failure: BaseException | None = None
    """A local failure after the call was decided: `send` raised (the client missed the
    change and is brought up to date by the next call or `replay()`), or `on_commit` raised
    (the change stands; the next commit runs it again). None when all went well."""

    def __init__(
        self,
        ok: bool,
        content: str,
        tool: str = "",
        plan_id: str | None = None,
        failure: BaseException | None = None,
    ) -> None:
        # Every call makes one: its fields are set in one step. A frozen dataclass's own
        # __init__ sets each through object.__setattr__, which costs about twice as much.
        self.__dict__.update(ok=ok, content=content, tool=tool, plan_id=plan_id, failure=failure)


def rejection(
    tool: str,
    problems: list[Problem],
    *,
    context: str = "",
    known: bool = True,
    plan_tools: Iterable[str] = (),
) -> str:
    """The result of a rejected call: the first problems, how many more, then what to do.

    At most MAX_REJECTION_BYTES whatever the model sent: the problems listed, each line and
    the context are bounded (MAX_PROBLEMS_LISTED, `_MAX_LINE_BYTES`, `_MAX_CONTEXT_BYTES`).
    """
    name = tool if known else shown(tool)  # quoted: the model may have sent anything
    lines = [f"{name} was not applied ({count(len(problems), 'problem')}); no plan was changed."]
    lines += [p.render() for p in problems[:MAX_PROBLEMS_LISTED]]
    more = len(problems) - MAX_PROBLEMS_LISTED
    if more > 0:
        lines.append(f"- ... and {count(more, 'more problem')}, not listed here.")
    if context:
        lines += _context_lines(context)
    if known:
        lines.append(f"Fix the errors and call {tool} again.")
    else:
        names = ", ".join(plan_tools)
        lines.append(f"Call one of the plan tools instead: {names}.")
    return clip("\n".join(lines), MAX_REJECTION_BYTES)


def _context_lines(context: str) -> list[str]:
    # Whole lines while they fit, then how many were left out: a cut list of steps or ids
    # still reads as one.
    lines = context.split("\n")
    out: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        line = clip(line, _MAX_CONTEXT_BYTES)
        used += len(line.encode("utf-8", "surrogatepass")) + 1
        if used > _MAX_CONTEXT_BYTES:
            out.append(f"   ... {count(len(lines) - index, 'more line')} not shown")
            break
        out.append(line)
    return out


def describe(plan: Stored, focus: Iterable[int] = ()) -> str:
    """A plan as the model should see it after writing it: its id and numbered steps.

    A long plan lists only the steps that matter now (`focus`, those in progress and the
    next pending ones), with counts for the rest: the model wrote the plan and needs the
    numbers, not the whole list in every result.
    """
    if plan.type == "markdown":
        return f'plan "{plan.id}" (markdown, {count(len(plan.content.splitlines()), "line")}).'
    if plan.type == "file":
        return f'plan "{plan.id}" (file {plan.uri}).'
    total = len(plan.entries)
    lines = [f'plan "{plan.id}" (items, {_steps(total)}):']
    if total <= MAX_LISTED_STEPS:
        # Every step, in one pass: the usual plan, and a small call's largest text cost.
        lines += [
            f"{number}. [{e['status']}] {e['content']}"
            if e["priority"] == "medium"
            else f"{number}. [{e['status']}] {e['content']} ({e['priority']} priority)"
            for number, e in enumerate(plan.entries, 1)
        ]
        return "\n".join(lines)
    shown = _focus(plan, focus)
    previous = 0
    for number in shown:
        if number > previous + 1:
            lines.append(f"   ... {_span(previous + 1, number - 1)} not shown")
        entry = plan.entries[number - 1]
        priority = "" if entry["priority"] == "medium" else f" ({entry['priority']} priority)"
        lines.append(f"{number}. [{entry['status']}] {entry['content']}{priority}")
        previous = number
    if previous < total:
        lines.append(f"   ... {_span(previous + 1, total)} not shown")
    if total > MAX_LISTED_STEPS:
        counts = plan.status_counts()
        cancelled = f", {counts['cancelled']} cancelled" if counts["cancelled"] else ""
        lines.append(
            f"({counts['completed']} completed, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending{cancelled})"
        )
    return "\n".join(lines)


def steps_list(plan: Stored) -> str:
    """The numbered steps of a plan, for a rejected change to them."""
    text = describe(plan)
    return text[0].upper() + text[1:]


def _steps(number: int) -> str:
    return count(number, "step")


def _span(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first} to {last}"


def step_numbers(total: int) -> str:
    """The step numbers a plan of `total` steps has, for a change to a step it lacks."""
    return "only step 1" if total == 1 else f"steps 1 to {total}"


def brief(text: str) -> str:
    return _quoted(text if len(text) <= _MAX_BRIEF else text[: _MAX_BRIEF - 3] + "...")


def changes_line(verb: str, plan: Stored, changed: tuple[int, ...]) -> str:
    parts = []
    steps = list(dict.fromkeys(changed))
    for number in steps[:MAX_CHANGES_LISTED]:
        entry = plan.entries[number - 1]
        parts.append(f"step {number} {entry['status']}")
    if len(steps) > MAX_CHANGES_LISTED:
        parts.append(f"and {len(steps) - MAX_CHANGES_LISTED} more")
    return f'{verb} plan "{plan.id}" ({_steps(len(plan.entries))}): {", ".join(parts)}.'


def progress(plan: Stored) -> list[str]:
    doing = plan.in_progress()
    counts = plan.status_counts()
    doing_count, pending_count = len(doing), counts["pending"]
    lines = []
    if doing:
        shown = f"step {doing[0]} {brief(plan.entries[doing[0] - 1]['content'])}"
        more = f" and {doing_count - 1} more" if doing_count > 1 else ""
        lines.append(f"In progress: {shown}{more}.")
    if not doing_count and not pending_count:
        total = len(plan.entries)
        cancelled = counts["cancelled"]
        if not cancelled:
            done = "The plan's only step is" if total == 1 else f"All {total} steps are"
            lines.append(f"{done} completed.")
        else:  # finished, but not everything was done: say so
            lines.append(f"No steps remain: {total - cancelled} completed, {cancelled} cancelled.")
        return lines
    left = f"Remaining: {doing_count + pending_count} of {len(plan.entries)}"
    first = plan.steps_with("pending", 1)
    if first:
        left += f"; next pending: step {first[0]} {brief(plan.entries[first[0] - 1]['content'])}"
    lines.append(left + ".")
    return lines


def _focus(plan: Stored, focus: Iterable[int]) -> list[int]:
    wanted = {n for n in focus if 1 <= n <= len(plan.entries)}
    wanted.update(plan.in_progress())
    wanted.update(plan.steps_with("pending", _NEXT_PENDING))
    return sorted(wanted)


def ids_list(plans: Mapping[str, Any]) -> str:
    """The ids that exist, for messages about unknown ids."""
    if not plans:
        return "There are no plans yet; create one with create_plan."
    label = "Existing plan id: " if len(plans) == 1 else "Existing plan ids: "
    return label + ", ".join(map(_quoted, plans)) + "."


def discipline_notes(plan: Stored) -> list[str]:
    """Advice (not errors) when an items plan does not show what is being worked on."""
    doing = plan.in_progress()
    if len(doing) > 1:
        steps = ", ".join(map(str, doing[:MAX_CHANGES_LISTED]))
        more = len(doing) - MAX_CHANGES_LISTED
        if more > 0:
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
    example = _quoted({"id": plan.id, "changes": [{"step": 1, "status": "completed"}]})
    return f"Record progress by step number: update_plan {example}"


def send_failure(failure: BaseException) -> str:
    """Appended to a result when the client could not be notified."""
    return (
        f"Warning: the change is saved, but the client could not be notified "
        f"({type(failure).__name__}: {failure}). It is re-sent with the next plan call."
    )


# ---- other dialects' results ------------------------------------------------------------------


def list_written(verb: str, noun: str, plan: Stored, *, discipline: bool) -> str:
    """The result of a call that wrote a dialect's list: its counts, the item in progress and
    the next one, in a few lines at any length (the model just sent the whole list).

    A pending item some dialect called blocked (the word kept in its `_meta`) is counted
    apart and never named as next; with only blocked items left to do, no note asks to
    start one."""
    total = len(plan.entries)
    if not total:
        return f"{verb} the {noun}: it is empty now."
    blocked = _blocked(plan)
    counts = dict(plan.status_counts())
    counts["pending"] -= len(blocked)
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in counts if counts[s]]
    if blocked:
        parts.append(f"{len(blocked)} blocked")
    lines = [f"{verb} the {noun} ({count(total, 'item')}): {', '.join(parts)}."]
    doing = plan.in_progress()
    if doing:
        lines.append(f"In progress: {brief(plan.entries[doing[0] - 1]['content'])}.")
    waiting = set(blocked)
    upcoming = [n for n in plan.steps_with("pending", len(blocked) + 1) if n not in waiting]
    if upcoming:
        lines.append(f"Next: {brief(plan.entries[upcoming[0] - 1]['content'])}.")
    if blocked:
        more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
        lines.append(f"Blocked: {brief(plan.entries[blocked[0] - 1]['content'])}{more}.")
    if discipline and (counts["pending"] or doing):
        lines += list_discipline_notes(plan)
    return "\n".join(lines)


def _blocked(plan: Stored) -> list[int]:
    # The step numbers of pending items whose dialect called them blocked.
    if "pending" not in plan.statuses:
        return []
    found = []
    for number, entry in enumerate(plan.entries, 1):
        if (
            entry["status"] == "pending"
            and "_meta" in entry
            and extra_of(entry).get("status") == "blocked"
        ):
            found.append(number)
    return found


def list_discipline_notes(plan: Stored) -> list[str]:
    """`discipline_notes` for lists written whole, which the model edits by text, not number."""
    doing = len(plan.in_progress())
    if doing > 1:
        return [f"Note: {doing} items are in_progress; keep exactly one in progress."]
    if not doing and plan.steps_with("pending", 1):
        return [
            "Note: items remain but none is in_progress; mark the one you work on now in_progress."
        ]
    return []
