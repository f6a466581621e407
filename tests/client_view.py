"""What a spec-following client shows after a run of plan notifications, and a compliance check.

`ClientView` applies `session/update` updates as a client of one wire form would: `plan_update`
replaces the plan with its id, `plan_removed` drops it, a legacy `plan` replaces the whole
list. `shown(view)` and `expected(plans)` reduce both sides to plain data that compares with
`==`, so a test can say "the client shows exactly `session.plans`"; `as_shown(plans, form)`
is what a client of `form` must read for them (a cancelled step, an `activeForm`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from spec_shapes import check

from llm_plans import FilePlan, ItemsPlan, MarkdownPlan, PlanEntry, WireForm

ID_KEY = {"documents": "id", "schema": "planId", "v2": "planId", "v2-unstable": "planId"}
V1 = ("documents", "schema", "legacy")
EMPTY = {"type": "items", "entries": []}
"""What a v2 client shows for a removed plan (v2's stable surface has no `plan_removed`)."""


class ClientView:
    """The state of one client's plan panel, built only from the notifications it received."""

    def __init__(self, form: WireForm | str) -> None:
        self.form = WireForm(form).value
        self.plans: dict[str, dict[str, Any]] = {}
        """Plan id to the plan object last received for it (plan operation forms)."""
        self.entries: list[dict[str, Any]] = []
        """The list the last legacy `plan` update carried (legacy form)."""

    def apply(self, update: Mapping[str, Any]) -> None:
        kind = update["sessionUpdate"]
        if self.form == "legacy":
            assert kind == "plan", f"{kind} sent to a client without plan operations"
            self.entries = list(update["entries"])
            return
        key = ID_KEY[self.form]
        if kind == "plan_update":
            plan = update["plan"]
            self.plans[plan[key]] = dict(plan)
        elif kind == "plan_removed":
            assert self.form != "v2", "plan_removed is not part of v2's stable surface"
            # A client drops the plan if it has it; removing an unknown id changes nothing.
            self.plans.pop(update[key], None)
        else:
            raise AssertionError(f"{kind!r} sent to a client with plan operations")

    def apply_all(self, updates: Iterable[Mapping[str, Any]]) -> ClientView:
        for update in updates:
            self.apply(update)
        return self

    def shown(self) -> dict[str, dict[str, Any]]:
        """The plans on screen, reduced as `expected` reduces the session's plans."""
        return {plan_id: _reduce_wire(plan) for plan_id, plan in self.plans.items()}

    def shown_entries(self) -> list[dict[str, str]]:
        """The legacy list on screen: content, priority and status of each entry."""
        return [_entry(e) for e in self.entries]


def _entry(entry: Mapping[str, Any]) -> dict[str, str]:
    return {k: entry[k] for k in ("content", "priority", "status")}


def _reduce_wire(plan: Mapping[str, Any]) -> dict[str, Any]:
    kind = plan["type"]
    if kind == "items":
        return {"type": "items", "entries": [_entry(e) for e in plan["entries"]]}
    field = {"markdown": "content", "file": "uri"}[kind]
    return {"type": kind, field: plan[field]}


def shown_entry(entry: PlanEntry, form: str) -> dict[str, str]:
    """How a client of `form` must show one entry (the rules, written apart from the code):
    a step in progress by its non-empty `_meta.llm_plans.activeForm`; in v1, which has no
    `cancelled`, a cancelled step as completed with its content prefixed `Cancelled: `."""
    content, status = entry.content, entry.status
    ours = (entry.meta or {}).get("llm_plans")
    active = ours.get("activeForm") if isinstance(ours, dict) else None
    if status == "in_progress" and isinstance(active, str) and active.strip():
        content = active
    if status == "cancelled" and form in V1:
        prefix = "" if content.startswith("Cancelled: ") else "Cancelled: "
        content, status = prefix + content, "completed"
    return {"content": content, "priority": entry.priority, "status": status}


def as_shown(
    plans: Mapping[str, ItemsPlan | MarkdownPlan | FilePlan], form: WireForm | str
) -> dict[str, dict[str, Any] | None]:
    """What a client of `form` must show for each plan; None for a markdown or file plan in
    v2, shown as the steps the legacy list has for it (which the caller compares)."""
    name = WireForm(form).value
    out: dict[str, dict[str, Any] | None] = {}
    for plan_id, plan in plans.items():
        if isinstance(plan, ItemsPlan):
            entries = [shown_entry(e, name) for e in plan.entries]
            out[plan_id] = {"type": "items", "entries": entries}
        else:
            out[plan_id] = None if name == "v2" else reduce_plan(plan)
    return out


def reduce_plan(plan: ItemsPlan | MarkdownPlan | FilePlan) -> dict[str, Any]:
    """One of `session.plans` as a client of the plan operation forms shows it."""
    if isinstance(plan, ItemsPlan):
        entries = [
            {"content": e.content, "priority": e.priority, "status": e.status} for e in plan.entries
        ]
        return {"type": "items", "entries": entries}
    if isinstance(plan, MarkdownPlan):
        return {"type": "markdown", "content": plan.content}
    return {"type": "file", "uri": plan.uri}


def expected(plans: Mapping[str, ItemsPlan | MarkdownPlan | FilePlan]) -> dict[str, Any]:
    """`session.plans` as a client of the plan operation forms should show them."""
    return {plan_id: reduce_plan(plan) for plan_id, plan in plans.items()}


def check_compliant(form: WireForm | str, params: Mapping[str, Any]) -> None:
    """Raise unless `params` is a `session/update` a client of `form` may receive.

    Strict JSON (no NaN or Infinity, no lone surrogates: the text must encode as UTF-8), the
    spec's shapes for the form (`spec_shapes.check`), and never a plan operation in the
    legacy form.
    """
    name = WireForm(form).value
    # ensure_ascii=False: with escapes a lone surrogate would pass as "\udfff"; as UTF-8 it
    # cannot be written at all, which is what a client's JSON parser would choke on.
    text = json.dumps(params, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    update = params["update"]
    if name == "legacy":
        assert update.get("sessionUpdate") == "plan", (
            f"{update.get('sessionUpdate')!r} sent to a client that did not advertise plan "
            "operations"
        )
    check(name, json.loads(text))
