"""The wire side's reckoning of a notification's bytes, which preview budgets count."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from strategies import PRIORITIES, STATUSES

from llm_plans._core.plans import Stored
from llm_plans._wire import forms as _wire
from llm_plans._wire.forms import WireForm

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)
_META = st.dictionaries(_TEXT, st.one_of(st.integers(), _TEXT, st.none()), max_size=3)


@st.composite
def _entry(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "content": draw(_TEXT),
        "priority": draw(st.sampled_from(PRIORITIES)),
        "status": draw(st.sampled_from(STATUSES)),
    }
    if draw(st.booleans()):
        entry["_meta"] = draw(st.one_of(st.none(), _META))
    return entry


@st.composite
def _update(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["items", "markdown", "file", "legacy", "removed"]))
    form = draw(st.sampled_from([WireForm.SCHEMA, WireForm.DOCUMENTS, WireForm.V2]))
    plan_id = draw(_TEXT)
    meta = draw(st.one_of(st.none(), _META))
    if kind == "legacy":
        return _wire.legacy_plan(draw(st.lists(_entry(), max_size=8)))
    if kind == "removed":
        return _wire.plan_removed(form, plan_id)
    if kind == "items":
        entries = tuple(draw(st.lists(_entry(), max_size=8)))
        return _wire.plan_update(form, Stored("items", plan_id, entries, meta=meta))
    field = {"content": draw(_TEXT)} if kind == "markdown" else {"uri": draw(_TEXT)}
    plan = Stored(kind, plan_id, meta=meta, **field)  # type: ignore[arg-type]
    # The stable forms send a file plan as a markdown plan of its file's text, with a `path`.
    path = draw(st.one_of(st.none(), _TEXT))
    document = _wire.Document(draw(_TEXT), path) if kind == "file" else None
    if kind == "file" and form is not WireForm.DOCUMENTS:
        return _wire.plan_update(form, plan, document)
    return _wire.plan_update(form, plan)


@given(session_id=_TEXT, update=_update())
def test_a_notifications_weight_is_its_compact_json_size(
    session_id: str, update: dict[str, Any]
) -> None:
    size = len(json.dumps(_wire.notification(session_id, update), separators=(",", ":")))
    assert _wire.weight(session_id, update) == size


@given(
    entries=st.lists(_entry(), max_size=12),
    cuts=st.lists(st.integers(0, 12), max_size=6),
    others=st.lists(_update(), max_size=3),
)
def test_a_scale_weighs_growing_previews_as_weight_does(
    entries: list[dict[str, Any]], cuts: list[int], others: list[dict[str, Any]]
) -> None:
    # A stream's previews: the same entry objects, more or fewer each time, and now and then
    # another notification between them.
    scale = _wire.Scale()
    shown = [Stored("items", "p", tuple(entries[:cut])) for cut in cuts]
    updates = [_wire.plan_update(WireForm.SCHEMA, plan) for plan in shown]
    for k, other in enumerate(others):
        updates.insert(3 * k % (len(updates) + 1), other)
    for update in updates:
        assert scale.weigh("s", update) == _wire.weight("s", update)
