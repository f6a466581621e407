"""Typed plans as the client sees them, and the arguments of the three plan tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.json_schema import SkipJsonSchema

Priority = Literal["high", "medium", "low"]
Status = Literal["pending", "in_progress", "completed", "cancelled"]
PlanType = Literal["items", "markdown", "file"]

PRIORITIES: tuple[Priority, ...] = ("high", "medium", "low")
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed", "cancelled")
PLAN_TYPES: tuple[PlanType, ...] = ("items", "markdown", "file")


def _not_blank(value: str) -> str:
    # A validator rather than `min_length`: Anthropic's strict mode rejects string-length
    # keywords, and the tool schemas are derived from these models.
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _null_is(default: str) -> BeforeValidator:
    # The model sends null for "the usual" (strict mode makes every field present); the plan
    # stores the value ACP requires.
    return BeforeValidator(lambda value: default if value is None else value)


def _nullable_enum(values: tuple[str, ...]) -> WithJsonSchema:
    return WithJsonSchema({"anyOf": [{"enum": list(values), "type": "string"}, {"type": "null"}]})


Text = Annotated[str, AfterValidator(_not_blank)]
Meta = Annotated[dict[str, Any] | None, Field(alias="_meta")]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class PlanEntry(_Frozen):
    """One step of an items plan, exactly as ACP's `PlanEntry`; also the `Entry` the model
    writes, where null priority means medium and null status pending.

    One class for both, so a plan's steps are validated straight from the model's JSON.

    Args:
        content: What the step does, at least one character after stripping white space.
        priority: `high`, `medium` or `low`; None means medium.
        status: `pending`, `in_progress`, `completed` or `cancelled`; None means pending.
        _meta: ACP's `_meta` (extension data beyond the spec), also given as `meta`; None: none.
    """

    model_config = ConfigDict(use_attribute_docstrings=True)

    # Checked natively rather than by a Python validator: this runs for every step of every
    # plan; the schema generator leaves minLength out of the tool definitions.
    content: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    """What this step does, as a short imperative sentence."""
    priority: Annotated[Priority, _null_is("medium"), _nullable_enum(PRIORITIES)] = "medium"
    """How important the step is; null means medium."""
    status: Annotated[Status, _null_is("pending"), _nullable_enum(STATUSES)] = "pending"
    """Where the step stands; null means pending."""
    meta: SkipJsonSchema[Meta] = None


class ItemsPlan(_Frozen):
    """A plan made of steps with priority and status.

    Args:
        type: Always `items`.
        id: The plan's id, unique in its session.
        entries: The steps, in order.
        _meta: ACP's `_meta` (extension data beyond the spec), also given as `meta`; None: none.
    """

    type: Literal["items"] = "items"
    """Always `items`, the kind of plan."""
    id: str
    """The plan's id, unique in its session."""
    entries: tuple[PlanEntry, ...]
    """The steps, in order."""
    meta: Meta = None
    """ACP's `_meta`: extension data beyond the spec, as sent on the wire; None: none."""


class MarkdownPlan(_Frozen):
    """A free-form plan written in Markdown.

    Args:
        type: Always `markdown`.
        id: The plan's id, unique in its session.
        content: The Markdown text.
        _meta: ACP's `_meta` (extension data beyond the spec), also given as `meta`; None: none.
    """

    type: Literal["markdown"] = "markdown"
    """Always `markdown`, the kind of plan."""
    id: str
    """The plan's id, unique in its session."""
    content: str
    """The Markdown text."""
    meta: Meta = None
    """ACP's `_meta`: extension data beyond the spec, as sent on the wire; None: none."""


class FilePlan(_Frozen):
    """A plan kept in a file, named by its URI.

    Args:
        type: Always `file`.
        id: The plan's id, unique in its session.
        uri: The plan file's absolute `file:` URI.
        _meta: ACP's `_meta` (extension data beyond the spec), also given as `meta`; None: none.
    """

    type: Literal["file"] = "file"
    """Always `file`, the kind of plan."""
    id: str
    """The plan's id, unique in its session."""
    uri: str
    """The plan file's absolute `file:` URI."""
    meta: Meta = None
    """ACP's `_meta`: extension data beyond the spec, as sent on the wire; None: none."""


Plan = Annotated[ItemsPlan | MarkdownPlan | FilePlan, Field(discriminator="type")]
"""Any plan: an `ItemsPlan`, `MarkdownPlan` or `FilePlan`, told apart by `type`."""


# ---- tool arguments: what the model sends --------------------------------------------------


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Change(_Arguments):
    """A change to one existing step of an items plan.

    Args:
        step: The step's number, from 1, as the last plan tool result listed it.
        status: The step's new status; None keeps it.
        priority: The step's new priority; None keeps it.
        content: The step's new wording; None keeps it.
    """

    step: Annotated[int, Field(ge=1)]
    """1-based number of the step, as listed in the last plan tool result."""
    status: Status | None = None
    """New status, or null to keep it."""
    priority: Priority | None = None
    """New priority, or null to keep it."""
    content: Text | None = None
    """New wording, or null to keep it."""


class CreatePlanArgs(_Arguments):
    """Arguments of `create_plan`.

    Args:
        type: `items` (a checklist), `markdown` (free-form notes) or `file` (a plan kept in a
            file).
        id: The new plan's id; None has one generated (`plan-1`, `plan-2`, ...).
        entries: The steps of an items plan, in order; None for the other types.
        content: The text of a markdown plan; None for the other types.
        uri: A file plan's `file:` URI or absolute path; None for the other types.
    """

    type: PlanType
    """items: a checklist of steps; markdown: free-form notes; file: a plan kept in a file."""
    id: str | None = None
    """A short id for the plan, or null to get one generated (plan-1, plan-2, ...)."""
    entries: list[PlanEntry] | None = None
    """The steps, in order. Required for type items, otherwise null."""
    content: Text | None = None
    """The Markdown text. Required for type markdown, otherwise null."""
    uri: Text | None = None
    """A file: URI or absolute path of the plan file. Required for type file, otherwise null."""


class UpdatePlanArgs(_Arguments):
    """Arguments of `update_plan`.

    Args:
        id: The id of the plan to update.
        type: The plan's new type when it is replaced; None keeps it or infers it from the
            fields given.
        entries: Every step of an items plan, replacing the old ones; None: not replaced.
        content: A markdown plan's new text; None: not replaced.
        uri: A file plan's new file; None: not replaced.
        changes: Changes to some steps by number, the others left as they are; None: none.
    """

    id: str
    """The id of the plan to update."""
    type: PlanType | None = None
    """New kind of plan when replacing it, or null to keep or infer it."""
    entries: list[PlanEntry] | None = None
    """Replace every step of an items plan with this list, or null."""
    content: Text | None = None
    """Replace the Markdown text, or null."""
    uri: Text | None = None
    """Replace the plan file, or null."""
    changes: list[Change] | None = None
    """Change some existing steps by number, leaving the others as they are, or null."""


class RemovePlanArgs(_Arguments):
    """Arguments of `remove_plan`.

    Args:
        id: The id of the plan to remove.
    """

    id: str
    """The id of the plan to remove."""


ToolName = Literal["create_plan", "update_plan", "remove_plan"]
