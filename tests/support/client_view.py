"""What a spec-following client shows after a run of plan notifications, and a compliance check.

`ClientView` applies `session/update` updates as a client of one wire form would: `plan_update`
replaces the plan with its id, `plan_removed` drops it, a legacy `plan` replaces the whole
list. `shown(view)` and `expected(plans)` reduce both sides to plain data that compares with
`==`, so a test can say "the client shows exactly `session.plans`"; `as_shown(plans, form)`
is what a client of `form` must read for them (a cancelled step, an `activeForm`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from spec_shapes import check

from llm_plans import FilePlan, ItemsPlan, Limits, MarkdownPlan, PlanEntry, WireForm

MAX_ENTRY_CHARS = Limits().max_entry_chars  # every session here has the default

ID_KEY = {"documents": "id", "schema": "planId", "v2": "planId"}
V1 = ("documents", "schema", "legacy")
STABLE = ("schema", "v2")
"""The forms of ACP's stable plan operations: no `file` plans, a file plan as markdown."""
# A plan file bigger than this shows as the line naming it (the limit the docs state).
MAX_PLAN_FILE_BYTES = 1 << 20


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
        if kind == "subagent_update":
            return  # about a child session, not this one's plans
        if self.form == "legacy":
            assert kind == "plan", f"{kind} sent to a client without plan operations"
            self.entries = list(update["entries"])
            return
        key = ID_KEY[self.form]
        if kind == "plan_update":
            plan = update["plan"]
            self.plans[plan[key]] = dict(plan)
        elif kind == "plan_removed":
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
    if kind == "markdown":
        shown = {"type": kind, "content": plan["content"]}
        return shown if "path" not in plan else {**shown, "path": plan["path"]}
    return {"type": kind, "uri": plan["uri"]}


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
        if len(content) > MAX_ENTRY_CHARS:  # the prefix counts toward the entry limit
            content = content[: MAX_ENTRY_CHARS - 3] + "..."
    return {"content": content, "priority": entry.priority, "status": status}


def legacy_list(plans: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The legacy list of items plans as a client shows them (`as_shown`'s, in creation
    order), the rules written apart from the code: every plan's steps but the first plan's
    read `[<plan id>] <text>` (after `Cancelled: ` where a step has it; a step whose text is
    the id as it is), cut to the entry limit with `...`."""
    out = []
    for number, (plan_id, plan) in enumerate(plans.items()):
        for entry in plan["entries"]:
            content = entry["content"]
            if number and content != plan_id:  # a step that is the label says whose it is
                cancelled = content.startswith("Cancelled: ") and entry["status"] == "completed"
                rest = content[len("Cancelled: ") :] if cancelled else content
                content = ("Cancelled: " if cancelled else "") + f"[{plan_id}] " + rest
                if len(content) > MAX_ENTRY_CHARS:
                    content = content[: MAX_ENTRY_CHARS - 3] + "..."
            out.append({**entry, "content": content})
    return out


def as_shown(
    plans: Mapping[str, ItemsPlan | MarkdownPlan | FilePlan], form: WireForm | str
) -> dict[str, dict[str, Any]]:
    """What a client of `form` (one with plan operations) must show for each plan: in the
    stable forms a file plan as a markdown plan of its file (`file_document`)."""
    name = WireForm(form).value
    out: dict[str, dict[str, Any]] = {}
    for plan_id, plan in plans.items():
        if isinstance(plan, ItemsPlan):
            entries = [shown_entry(e, name) for e in plan.entries]
            out[plan_id] = {"type": "items", "entries": entries}
        elif isinstance(plan, FilePlan) and name in STABLE:
            out[plan_id] = file_document(plan.uri)
        else:
            out[plan_id] = reduce_plan(plan)
    return out


def file_document(uri: str) -> dict[str, Any]:
    """A file plan as the stable forms show it, for a session without a workspace (the rules,
    written apart from the code): the file's whole UTF-8 text when it is a regular file of at
    most 1 MiB, else the line naming it; its path, percent-decoded, either way."""
    path = unquote(urlsplit(uri).path)
    text = None
    try:
        if os.path.isfile(path) and os.path.getsize(path) <= MAX_PLAN_FILE_BYTES:
            with open(path, encoding="utf-8") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError, ValueError):
        text = None
    content = text if text is not None else f"Plan file: {path}"
    return {"type": "markdown", "content": content, "path": path}


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
        assert update.get("sessionUpdate") in ("plan", "subagent_update"), (
            f"{update.get('sessionUpdate')!r} sent to a client that did not advertise plan "
            "operations"
        )
    check(name, json.loads(text))
