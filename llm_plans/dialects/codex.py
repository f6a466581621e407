"""`codex`: Codex's `update_plan`, the whole plan in every call.

The model sends every step each time (`step`, the text, and `status`) with an optional
`explanation` of why the plan changed; the session's list becomes that list. Codex's schema
types `status` as a plain string and names the values only in its description; ours gives the
enum (pending, in_progress, completed, cancelled), so strict decoding keeps to it, and a model
that writes another word anyway has the usual synonyms ("done", "in progress", "canceled")
repaired; anything else is rejected with the accepted values.

`explanation` is validated (a string, or null) and not kept: an ACP plan has no place for it
that a client shows (Codex shows it in its own transcript, not in the plan), it is a note
about one call rather than about any step, and echoing it back would spend the model's
tokens on its own words. The result says what the plan now is instead.

Its tool name is ours too: a session cannot take `codex` and `llm_plans` at once
(the registry, `llm_plans.dialects`, raises `ConfigurationError`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter
from typing_extensions import NotRequired, Required, TypedDict

from .._core import results
from .._core.apply import write_list
from .._core.outcome import Applied
from .._core.repair import repair_list
from .._core.tool import Call, Dialect, PlanTool, Previews
from .._models import Status
from ._base import carried, entry, renamer

__all__ = ["PlanItem", "UpdatePlanArgs"]

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")


class PlanItem(BaseModel):
    """One step, as Codex's models write it.

    Args:
        step: The step's text: the plan entry's `content`.
        status: Where the step stands (`pending`, `in_progress`, `completed`, `cancelled`).
    """

    model_config = _FORBID

    step: str
    status: Status


class UpdatePlanArgs(BaseModel):
    """Arguments of Codex's `update_plan`.

    Args:
        explanation: Why the plan changed, when it did (optional).
        plan: The whole plan, in order: it replaces the session's list.
    """

    model_config = _FORBID

    explanation: str | None = Field(None, description="Why the plan changed, when it did.")
    plan: list[PlanItem] = Field(description="The whole plan, in order.")


class _StepIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    step: Required[_Text]
    # Ours, and blocked (pending to ACP, kept in _meta), which Codex's plain string allows.
    status: Required[Literal["pending", "in_progress", "completed", "cancelled", "blocked"]]


class _UpdatePlanIn(TypedDict):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    explanation: NotRequired[str | None]
    plan: Required[list[_StepIn]]


def _run(call: Call) -> Applied:
    steps: list[dict[str, Any]] = call.args["plan"]
    entries = [
        entry(step["step"], "pending", {"status": "blocked"})
        if step["status"] == "blocked"
        else entry(step["step"], step["status"])
        for step in steps
    ]
    book, plan = write_list(call, carried(call.current, entries), _rename)
    return Applied(
        "update_plan",
        book,
        plan.id,
        plan,
        say=lambda _, discipline: results.list_written(
            "Updated", "plan", plan, discipline=discipline
        ),
    )


def _rename(path: str) -> str:
    # The core names a step's text `content`; Codex's models wrote it as `step`.
    path = renamer("plan")(path)
    return path.replace(".content", ".step", 1) if path.startswith("plan[") else path


def _repair(value: Any) -> Any:
    return repair_list(value, "plan", text="step")


UPDATE_PLAN = PlanTool(
    dialect="codex",
    name="update_plan",
    definition=UpdatePlanArgs,
    adapter=TypeAdapter(_UpdatePlanIn),
    run=_run,
    repair=_repair,
    previews=Previews.of_list("plan"),
    nested={"plan": "step, status"},
)

DIALECT = Dialect("codex", (UPDATE_PLAN,), "full replacement")
