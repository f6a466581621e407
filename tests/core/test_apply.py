"""The pure core, without a session: a call and a book in, the next book or the problems out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import change, entries

from llm_plans import Limits
from llm_plans._core.apply import apply, generated_id
from llm_plans._core.arguments import Decoded
from llm_plans._core.builder import Rules
from llm_plans._core.outcome import Applied, Read, Rejected
from llm_plans._core.plans import Book, Stored
from llm_plans.dialects.llm_plans import CREATE_PLAN, REMOVE_PLAN, UPDATE_PLAN

STEPS = {"type": "items", "entries": ["Read", "Write"]}


def applied(outcome: Applied | Rejected | Read) -> Applied:
    assert isinstance(outcome, Applied), outcome
    return outcome


def test_generated_ids_skip_plans_and_held_ids_and_keep_their_own() -> None:
    book = Book({"plan-1": Stored("markdown", "plan-1", content="x")}, next_number=1)
    assert generated_id(book, reserved_ids={"plan-2"}, own_id=None) == ("plan-3", 4)
    assert generated_id(book, reserved_ids={"plan-2"}, own_id="plan-7") == ("plan-7", 8)
    # an own id another plan took since is given up for the next free one
    assert generated_id(book, reserved_ids=(), own_id="plan-1") == ("plan-2", 3)


def test_a_rejection_leaves_the_book_and_its_counter_alone() -> None:
    book = applied(apply(Book(), CREATE_PLAN, STEPS)).book
    outcome = apply(book, CREATE_PLAN, {"type": "items", "entries": []})
    assert isinstance(outcome, Rejected)
    assert "at least one step" in outcome.text
    assert applied(apply(book, CREATE_PLAN, STEPS)).plan_id == "plan-2"


def test_changes_expand_to_the_complete_list_and_keep_the_rest() -> None:
    book = applied(apply(Book(), CREATE_PLAN, STEPS)).book
    outcome = applied(
        apply(book, UPDATE_PLAN, {"id": "plan-1", "changes": [{"step": 2, "status": "done"}]})
    )
    assert outcome.plan is not None
    assert outcome.plan.entries == (
        {"content": "Read", "priority": "medium", "status": "pending"},
        {"content": "Write", "priority": "medium", "status": "completed"},
    )
    assert outcome.changed == (2,)
    assert book.plans["plan-1"].entries[1]["status"] == "pending"  # the old book is untouched


@given(entries, st.data())
def test_a_changed_plan_keeps_its_statuses_beside_its_entries(
    sent: list[dict[str, object]], data: st.DataObject
) -> None:
    """`_changed` keeps the statuses it changed, not a pass over the entries: they must agree
    however many changes, to whichever steps, in whatever order (the same step twice too)."""
    book = applied(apply(Book(), CREATE_PLAN, {"type": "items", "entries": sent})).book
    steps = len(book.plans["plan-1"].entries)
    changes = data.draw(st.lists(change(steps), min_size=1, max_size=6))
    outcome = apply(book, UPDATE_PLAN, {"id": "plan-1", "changes": changes})
    if isinstance(outcome, Applied):
        assert outcome.plan is not None
        assert outcome.plan.statuses == tuple(e["status"] for e in outcome.plan.entries)


def test_previews_and_calls_meet_the_same_rules() -> None:
    book = Book({"p": Stored("markdown", "p", content="x")})
    preview = apply(book, CREATE_PLAN, Decoded({"type": "items", "id": "p", "entries": []}))
    whole = apply(book, CREATE_PLAN, '{"type": "items", "id": "p", "entries": []}')
    assert isinstance(preview, Rejected)
    assert isinstance(whole, Rejected)
    assert preview.text == whole.text


def test_removing_names_what_remains() -> None:
    book = applied(apply(Book(), CREATE_PLAN, STEPS)).book
    book = applied(apply(book, CREATE_PLAN, STEPS)).book
    outcome = applied(apply(book, REMOVE_PLAN, {"id": "plan-1"}))
    assert list(outcome.book.plans) == ["plan-2"]
    assert outcome.text() == 'Removed plan "plan-1". Remaining plan id: "plan-2".'


# ---- one set of rules for every path that writes a plan ---------------------------------------


def rejected(outcome: Applied | Rejected | Read) -> Rejected:
    assert isinstance(outcome, Rejected), outcome
    return outcome


def test_a_change_meets_the_step_rules_an_entry_meets() -> None:
    limits = Limits(max_entry_chars=10)
    rules = Rules(limits)
    book = applied(apply(Book(), CREATE_PLAN, STEPS, rules)).book
    long = "x" * 11
    as_change = rejected(
        apply(book, UPDATE_PLAN, {"id": "plan-1", "changes": [{"step": 1, "content": long}]}, rules)
    )
    as_entry = rejected(apply(book, CREATE_PLAN, {"type": "items", "entries": [long]}, rules))
    assert [p.path for p in as_change.problems] == ["changes[0].content"]
    assert [p.path for p in as_entry.problems] == ["entries[0].content"]
    # One rule, one text: only the field path differs.
    assert as_change.problems[0].message == as_entry.problems[0].message
    assert "11 characters; at most 10" in as_change.text
    exact = {"id": "plan-1", "changes": [{"step": 1, "content": "x" * 10}]}
    assert applied(apply(book, UPDATE_PLAN, exact, rules)).plan is not None


def test_the_usual_call_meets_the_step_length_of_any_limits() -> None:
    """The usual call's texts are measured as they are parsed, against the session's own
    limit (smaller or larger than the default): one character over is refused as the
    strict path refuses it, whitespace around a text does not count, and the limit itself
    passes."""
    for chars in (10, 1000, 5000):
        rules = Rules(Limits(max_entry_chars=chars))

        def step(text: str) -> dict[str, object]:
            return {"content": text, "priority": "medium", "status": "pending"}

        create = {"type": "items", "id": "p", "entries": [step("a"), step("x" * (chars + 1))]}
        refused = rejected(apply(Book(), CREATE_PLAN, create, rules))
        assert [p.path for p in refused.problems] == ["entries[1].content"]
        assert f"{chars + 1} characters; at most {chars}" in refused.text
        book = applied(apply(Book(), CREATE_PLAN, STEPS | {"id": "p"}, rules)).book
        update = {"id": "p", "entries": [step("b"), step("x" * (chars + 1))]}
        assert rejected(apply(book, UPDATE_PLAN, update, rules)).problems == refused.problems
        exact = {"id": "p", "entries": [step("b"), step(" " + "y" * chars + " ")]}
        plan = applied(apply(book, UPDATE_PLAN, exact, rules)).plan
        assert plan is not None
        assert plan.entries[1]["content"] == "y" * chars


def test_a_replacement_meets_the_rules_a_create_meets() -> None:
    book = applied(apply(Book(), CREATE_PLAN, {"type": "markdown", "content": "# x"})).book
    for update in (
        {"id": "plan-1", "entries": []},
        {"id": "plan-1", "type": "items", "entries": []},
    ):
        outcome = rejected(apply(book, UPDATE_PLAN, update))
        create = rejected(apply(book, CREATE_PLAN, {"type": "items", "entries": []}))
        assert outcome.problems == create.problems
        assert "at least one step" in outcome.text


def test_a_generated_id_meets_the_id_rules() -> None:
    rules = Rules(Limits(max_id_length=5))
    outcome = rejected(apply(Book(), CREATE_PLAN, STEPS, rules))
    assert outcome.problems[0].path == "id"
    # The model sent no id: it is told to send one, not that "plan-1" was too long.
    assert 'the generated id "plan-1" is longer than 5 characters; send an id of your own' in (
        outcome.text
    )
    assert applied(apply(Book(), CREATE_PLAN, {**STEPS, "id": "mine"}, rules)).plan_id == "mine"
    # A counter restored high enough that plan-N no longer fits is refused the same way.
    high = Book(next_number=10**70)
    assert "longer than 64 characters" in rejected(apply(high, CREATE_PLAN, STEPS)).text
