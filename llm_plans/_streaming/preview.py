"""A streamed call's preview, worked out from what became final since the last one.

A preview shows what the core gives for the final part of a call's arguments. Worked out
afresh each time, a long plan's previews cost its whole text again and again: its entries
re-validated and rebuilt on every step. The entries that became final do not change, and
every rule an entry meets is a rule of that entry alone (its fields, its length, its
numbers), so the core validates and builds only the entries new since the last preview,
asks the tool to `run` the rest of the call (the same decisions as any call: ids,
limits, the book), and puts the entries it built before in front of the new ones.

The result is the core's own for the whole prefix (tests/streaming/test_preview.py holds the two
equal for valid, repairable and hostile calls): whatever is not the plain case (a call
that needs repair or is refused, `changes`, a markdown or file plan, a dialect's list)
takes `apply`'s whole way.

The usual preview of a streamed plan is the last one with a step or two more, and nothing
else new: `grown` then skips even that. Its other decisions were made for the
same book and the same other fields, and a generated id stays the one the last preview
showed (the session passes it as `own_id`), so only the new entries are validated and built.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from .._core.apply import apply, run
from .._core.arguments import Decoded, valid_as_sent
from .._core.builder import Rules, usual_items
from .._core.outcome import Applied, Read, Rejected
from .._core.plans import Book, Json, Stored
from .._core.tool import Call, PlanTool


@dataclass(eq=False)
class Built:
    """What the last preview of one streamed call built: its entries as decoded (the
    scanner's own objects, which stay the same from one preview to the next) and the wire
    entries the core built from them; when that preview was an items plan built entry by
    entry, the plan, the book it was worked out against and the call's other fields."""

    sent: list[Any] = field(default_factory=list)
    entries: tuple[Json, ...] = ()
    plan: Stored | None = None
    book: Book | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def preview(
    book: Book,
    tool: PlanTool,
    fields: Mapping[str, Any],
    rules: Rules,
    built: Built,
    *,
    reserved_ids: Collection[str] = (),
    own_id: str | None = None,
) -> Applied | Rejected | Read:
    """What `apply(book, tool, Decoded(fields), rules, ...)` gives,
    validating and building only the entries `built` does not hold yet; `built` then holds
    this preview's."""
    built.plan = None  # (set again below when this preview is an items plan built so)
    raw = fields.get("entries") if tool.previews.entry_by_entry else None
    if (
        type(raw) is not list
        or not raw
        or "changes" in fields
        or len(raw) > rules.limits.max_entries
    ):
        return apply(book, tool, Decoded(fields), rules, reserved_ids=reserved_ids, own_id=own_id)
    # At least the last entry is validated again: a call always has entries to build.
    kept = min(len(built.sent), len(raw) - 1)
    if kept and not all(map(operator.is_, islice(raw, kept), built.sent)):
        kept = 0
    short = dict(fields)
    short["entries"] = raw[kept:]
    valid = valid_as_sent(tool, short)
    if valid is None:  # needs repair, or is refused: the core's whole way, its own answer
        return apply(book, tool, Decoded(fields), rules, reserved_ids=reserved_ids, own_id=own_id)
    outcome = run(Call(tool, valid, book, rules, reserved_ids, own_id))
    if not isinstance(outcome, Applied) or outcome.plan is None or outcome.plan.type != "items":
        # Refused: with every entry in `short` this is the whole call's answer; without,
        # the core tells the whole call's problems (their step numbers count every entry).
        if not kept:
            return outcome
        return apply(book, tool, Decoded(fields), rules, reserved_ids=reserved_ids, own_id=own_id)
    plan = outcome.plan
    if not kept:
        built.sent, built.entries = raw, plan.entries
        built.plan, built.book, built.fields = plan, book, short
        return outcome
    entries = built.entries[:kept] + plan.entries
    built.sent, built.entries = raw, entries
    whole = Stored("items", plan.id, entries, meta=plan.meta)
    built.plan, built.book, built.fields = whole, book, short
    plans = dict(outcome.book.plans)
    plans[plan.id] = whole
    return Applied(
        outcome.tool,
        outcome.book.with_plans(plans),
        outcome.plan_id,
        whole,
        outcome.say,
        outcome.changed,
    )


def grown(book: Book, tool: PlanTool, new: list[Any], rules: Rules, built: Built) -> Stored | None:
    """The usual preview in few steps: what `preview` gives when the call's final part is the
    last preview's grown by the entries `new` and nothing else (`FinalPrefix.grown`), for the
    book that preview was worked out against. Every decision but the new entries' own (the
    plan's id, the book's limits, the fields beside the entries) was made for the same book
    and fields then, so the plan is that preview's with `new` validated, built and put
    after its entries. None when the last preview was not an items plan built so, or `new`
    are not the usual entries (a repair, a refusal, `_meta`, past the limits): `preview`
    then decides. `built` then holds this preview's."""
    plan = built.plan
    if (
        plan is None
        or built.book is not book
        or not tool.previews.entry_by_entry
        or len(built.sent) + len(new) > rules.limits.max_entries
    ):
        return None
    short = dict(built.fields)
    short["entries"] = new
    valid = valid_as_sent(tool, short)
    more = None if valid is None else usual_items(plan.id, valid["entries"], rules, plan.meta)
    if more is None:
        return None
    whole = Stored(
        "items",
        plan.id,
        plan.entries + more.entries,
        meta=plan.meta,
        known_statuses=plan.statuses + more.statuses,
    )
    built.sent = [*built.sent, *new]
    built.entries, built.plan = whole.entries, whole
    return whole
