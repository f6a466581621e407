"""Our own tools: `create_plan`, `update_plan` and `remove_plan`, several plans by id.

The dialect every session takes unless told otherwise. Its calls are the core's own writers
(`_core.apply.create`, `update`, `remove`), its arguments the core's validators, which parse
the usual call in one pass (`_core.arguments.one_pass`); what is particular to the tools
themselves is here: which fields a streamed call's previews read, and the results the model
reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._core import results
from .._core.apply import Say, create, remove, update
from .._core.arguments import ADAPTERS, one_pass
from .._core.outcome import Applied
from .._core.repair import repair
from .._core.tool import Dialect, PlanTool, Previews
from .._models import CreatePlanArgs, RemovePlanArgs, ToolName, UpdatePlanArgs

CUT_OFF = (
    "your call was cut off before its arguments were complete (the output token limit was "
    "reached), so it was not applied. Send a shorter plan, or create it and add steps in a "
    "second call."
)

_NESTED: Mapping[str, str] = {
    "entries": "content, priority, status",
    "changes": "step, status, priority, content",
}


# ---- the results the model reads ------------------------------------------------------------


def _said(verb: str, *, hint: bool = False) -> Say:
    """The result of a call that applied, starting with `verb`: what changed, and what the
    model needs next (`hint`: how to move a new plan on)."""

    def say(applied: Applied, discipline: bool) -> str:
        plan, plans = applied.plan, applied.book.plans
        if plan is None:
            rest = (
                results.ids_list(plans).replace("Existing", "Remaining")
                if plans
                else "No plans remain."
            )
            return f'{verb} plan "{applied.plan_id}". {rest}'
        if plan.type != "items":
            return f"{verb} {results.describe(plan)}"
        if applied.changed:
            lines = [results.changes_line(verb, plan, applied.changed), *results.progress(plan)]
        else:
            lines = [f"{verb} {results.describe(plan)}"]
            if hint:
                lines.append(results.progress_hint(plan))
        if discipline:
            lines += results.discipline_notes(plan)
        return "\n".join(lines)

    return say


_CREATED, _UPDATED, _REMOVED = _said("Created", hint=True), _said("Updated"), _said("Removed")
"""The results of our calls that applied, from the outcome and whether discipline notes are on."""


# ---- what a streamed call's previews read ---------------------------------------------------


def _has_body(fields: Mapping[str, Any]) -> bool:
    return any(fields.get(key) for key in ("entries", "content", "uri", "changes"))


def _create_shows(fields: Mapping[str, Any]) -> bool:
    return "type" in fields and _has_body(fields)  # a new plan's kind must be known


def _update_shows(fields: Mapping[str, Any]) -> bool:
    return isinstance(fields.get("id"), str) and _has_body(fields)  # and which plan it is


def _previews(shows: Any, **facts: bool) -> Previews:
    # Steps are final array items (a step sent as text ends at a comma), markdown final lines.
    return Previews(("entries", "changes"), ("content",), True, shows, **facts)


# ---- the tools ------------------------------------------------------------------------------


def _tool(name: ToolName, definition: Any, run: Any, previews: Previews) -> PlanTool:
    return PlanTool(
        "llm_plans",
        name,
        definition,
        ADAPTERS[name],
        run,
        repair=repair,
        nested=_NESTED,
        plans_by_id=True,
        quick_parse=partial(one_pass, name),
        cut_off=CUT_OFF,
        previews=previews,
    )


CREATE_PLAN = _tool(
    "create_plan",
    CreatePlanArgs,
    partial(create, say=_CREATED),
    _previews(_create_shows, plan_exists=False, keeps_generated_id=True, entry_by_entry=True),
)
UPDATE_PLAN = _tool(
    "update_plan",
    UpdatePlanArgs,
    partial(update, say=_UPDATED),
    _previews(_update_shows, plan_exists=True, entry_by_entry=True),
)
REMOVE_PLAN = _tool(
    "remove_plan", RemovePlanArgs, partial(remove, say=_REMOVED), _previews(_has_body)
)

DIALECT = Dialect(
    "llm_plans",
    (CREATE_PLAN, UPDATE_PLAN, REMOVE_PLAN),
    "several plans by id: create, update by step number or whole, remove",
)
