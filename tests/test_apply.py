"""The pure core, without a session: a call and a book in, the next book or the problems out."""

from __future__ import annotations

from llm_plans._apply import Applied, Rejected, apply, generated_id
from llm_plans._arguments import Decoded
from llm_plans._book import Book, Stored

STEPS = {"type": "items", "entries": ["Read", "Write"]}


def applied(outcome: Applied | Rejected) -> Applied:
    assert isinstance(outcome, Applied), outcome
    return outcome


def test_generated_ids_skip_plans_and_held_ids_and_keep_their_own() -> None:
    book = Book({"plan-1": Stored("markdown", "plan-1", content="x")}, next_number=1)
    assert generated_id(book, held={"plan-2"}, own_id=None) == ("plan-3", 4)
    assert generated_id(book, held={"plan-2"}, own_id="plan-7") == ("plan-7", 8)
    # an own id another plan took since is given up for the next free one
    assert generated_id(book, held=(), own_id="plan-1") == ("plan-2", 3)


def test_a_rejection_leaves_the_book_and_its_counter_alone() -> None:
    book = applied(apply(Book(), "create_plan", STEPS)).book
    outcome = apply(book, "create_plan", {"type": "items", "entries": []})
    assert isinstance(outcome, Rejected)
    assert "at least one step" in outcome.text
    assert applied(apply(book, "create_plan", STEPS)).plan_id == "plan-2"


def test_changes_expand_to_the_complete_list_and_keep_the_rest() -> None:
    book = applied(apply(Book(), "create_plan", STEPS)).book
    outcome = applied(
        apply(book, "update_plan", {"id": "plan-1", "changes": [{"step": 2, "status": "done"}]})
    )
    assert outcome.plan is not None
    assert outcome.plan.entries == (
        {"content": "Read", "priority": "medium", "status": "pending"},
        {"content": "Write", "priority": "medium", "status": "completed"},
    )
    assert outcome.changed == (2,)
    assert book.plans["plan-1"].entries[1]["status"] == "pending"  # the old book is untouched


def test_previews_and_calls_meet_the_same_rules() -> None:
    book = Book({"p": Stored("markdown", "p", content="x")})
    preview = apply(book, "create_plan", Decoded({"type": "items", "id": "p", "entries": []}))
    whole = apply(book, "create_plan", '{"type": "items", "id": "p", "entries": []}')
    assert isinstance(preview, Rejected)
    assert isinstance(whole, Rejected)
    assert preview.text == whole.text


def test_removing_names_what_remains() -> None:
    book = applied(apply(Book(), "create_plan", STEPS)).book
    book = applied(apply(book, "create_plan", STEPS)).book
    outcome = applied(apply(book, "remove_plan", {"id": "plan-1"}))
    assert list(outcome.book.plans) == ["plan-2"]
    assert outcome.text() == 'Removed plan "plan-1". Remaining plan ids: "plan-2".'
