"""The builder's shortcut for the usual call keeps its answer: validated entries kept as sent
(`usual_items`) are the plan building them afresh makes, and an update that takes the
shortcut is the update the whole way gives."""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import PRIORITIES, STATUSES, entries, step_text

from llm_plans._core import apply as _apply
from llm_plans._core.apply import apply
from llm_plans._core.arguments import Rejection, validate
from llm_plans._core.builder import Rules, build, usual_items
from llm_plans._core.outcome import Applied
from llm_plans._core.plans import Book, Stored
from llm_plans._limits import Limits
from llm_plans.dialects.llm_plans import UPDATE_PLAN

# Tight limits, so that drawn calls cross them: at most three steps of 24 characters.
_LIMITS = Limits(max_entries=3, max_entry_chars=24)
_RULES = st.sampled_from(
    [Rules(_LIMITS), Rules(_LIMITS, list_id="todos"), Rules(Limits(), list_id="p")]
)
_META = st.sampled_from([None, {"team": "core"}])
_CONTENT = step_text | st.sampled_from(["x" * 24, "y" * 25])  # the limit, and past it
# The usual entry, whole; and any mix of the keys an entry may have, `_meta` null, empty or
# not finite included.
_WHOLE_ENTRY = st.fixed_dictionaries(
    {
        "content": _CONTENT,
        "priority": st.sampled_from(PRIORITIES),
        "status": st.sampled_from(STATUSES),
    }
)
_ANY_ENTRY = st.fixed_dictionaries(
    {"content": _CONTENT},
    optional={
        "priority": st.sampled_from([None, *PRIORITIES]),
        "status": st.sampled_from([None, *STATUSES]),
        "_meta": st.sampled_from([None, {}, {"n": float("nan")}, {"a": [1]}]),
    },
)


def _validated_entries(raw: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    try:
        args = validate(UPDATE_PLAN, {"id": "p", "entries": raw})
    except Rejection:
        return None
    return list(args["entries"])


def _built(plan: Stored | None, problems: list[Any]) -> Any:
    if plan is None:
        return [(p.path, p.message) for p in problems]
    shown = [list(e.items()) for e in plan.entries]  # key order included
    return (plan.type, plan.id, shown, plan.statuses, plan.meta)


@settings(max_examples=300)
@given(
    raw=st.one_of(st.lists(_WHOLE_ENTRY, max_size=5), st.lists(_ANY_ENTRY, max_size=5), entries),
    plan_id=st.sampled_from(["p", "todos"]),
    rules=_RULES,
    meta=_META,
)
def test_validated_entries_kept_as_sent_are_the_plan_building_them_afresh_makes(
    raw: list[dict[str, Any]], plan_id: str, rules: Rules, meta: Any
) -> None:
    validated = _validated_entries(raw)
    if validated is None:
        return  # a call the core refuses before it builds
    args = {"entries": validated}
    kept: list[Any] = []
    fresh: list[Any] = []
    kept_plan = build("items", plan_id, args, rules, kept, meta, validated=True)
    fresh_plan = build("items", plan_id, args, rules, fresh, meta)
    assert _built(kept_plan, kept) == _built(fresh_plan, fresh)
    usual = usual_items(plan_id, validated, rules, meta)
    if usual is not None:  # the shortcut answers only what the whole way answers the same
        assert _built(usual, []) == _built(fresh_plan, fresh)
        assert usual.entries == tuple(validated)


_CURRENT = [
    Stored("items", "p", ({"content": "Old", "priority": "low", "status": "pending"},)),
    Stored("markdown", "p", content="# Notes\n- [ ] a", meta={"k": 1}),
]


@settings(max_examples=300)
@given(
    current=st.sampled_from(_CURRENT),
    raw=st.one_of(st.lists(_WHOLE_ENTRY, max_size=5), entries),
    kind=st.sampled_from([None, "items", "markdown"]),
    content=st.sampled_from([None, "- [ ] b"]),
    changes=st.sampled_from([None, [{"step": 1, "status": "completed"}]]),
    rules=_RULES,
)
def test_an_update_that_takes_the_shortcut_is_the_update_the_whole_way_gives(
    current: Stored,
    raw: list[dict[str, Any]],
    kind: str | None,
    content: str | None,
    changes: Any,
    rules: Rules,
) -> None:
    book = Book({"p": current}, next_number=2)
    call = {"id": "p", "type": kind, "entries": raw, "content": content, "changes": changes}
    short = apply(book, UPDATE_PLAN, call, rules)
    with mock.patch.object(_apply, "usual_items", return_value=None):
        whole = apply(book, UPDATE_PLAN, call, rules)
    if isinstance(whole, Applied):
        assert isinstance(short, Applied)
        assert short.plan is not None
        assert whole.plan is not None
        assert _built(short.plan, []) == _built(whole.plan, [])
        assert short.text() == whole.text()
        assert list(short.book.plans) == list(whole.book.plans)
    else:
        assert not isinstance(short, Applied)
        assert short.text == whole.text


def test_a_plan_made_from_another_works_its_statuses_out_again() -> None:
    # The builder hands over the statuses it read; a plan made by `replace` has its own.
    kept = usual_items(
        "p", [{"content": "a", "priority": "low", "status": "pending"}], Rules(), None
    )
    assert kept is not None
    assert kept.statuses == ("pending",)
    done = ({"content": "a", "priority": "low", "status": "completed"},)
    assert dataclasses.replace(kept, entries=done).statuses == ("completed",)
