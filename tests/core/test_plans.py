"""A stored plan's step facts, worked out once and kept, are the ones counting afresh gives."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import STATUSES

from llm_plans._core.plans import Stored


def _plan(statuses: list[str]) -> Stored:
    entries = tuple(
        {"content": f"step {n}", "priority": "medium", "status": s}
        for n, s in enumerate(statuses, 1)
    )
    return Stored("items", "p", entries)


@given(st.lists(st.sampled_from(STATUSES), max_size=60))
def test_steps_in_progress_and_counts_are_what_counting_each_step_gives(
    statuses: list[str],
) -> None:
    plan = _plan(statuses)
    doing = tuple(n for n, s in enumerate(statuses, 1) if s == "in_progress")
    counts = {s: statuses.count(s) for s in STATUSES}
    for _ in range(2):  # worked out on first use, then kept
        assert plan.in_progress() == doing
        assert dict(plan.status_counts()) == counts


@given(st.lists(st.sampled_from(STATUSES), min_size=1, max_size=20), st.data())
def test_a_plan_made_from_another_works_its_facts_out_again(
    statuses: list[str], data: st.DataObject
) -> None:
    plan = _plan(statuses)
    plan.in_progress(), plan.status_counts()  # kept on the first plan
    other = data.draw(st.lists(st.sampled_from(STATUSES), min_size=1, max_size=20))
    made = dataclasses.replace(plan, entries=_plan(other).entries)
    assert made.in_progress() == tuple(n for n, s in enumerate(other, 1) if s == "in_progress")
    assert dict(made.status_counts()) == {s: other.count(s) for s in STATUSES}


def test_the_kept_counts_cannot_be_changed_through_what_is_returned() -> None:
    plan = _plan(["pending", "in_progress"])
    with pytest.raises(TypeError):
        plan.status_counts()["pending"] = 5  # type: ignore[index]
    assert plan.status_counts()["pending"] == 1
