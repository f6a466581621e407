"""PlanBoard: the client-side view, fed notifications of every form."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from llm_plans.view import MARK_SECONDS, PlanBoard, ShownPlan, entry_line, plain

ENTRIES = [
    {"content": "Read", "priority": "high", "status": "completed"},
    {"content": "Write", "priority": "medium", "status": "in_progress"},
    {"content": "Test", "priority": "low", "status": "pending"},
]


def rendered(board: PlanBoard) -> str:
    console = Console(record=True, width=60, force_terminal=True)
    console.print(board.render())
    return console.export_text()


def test_plans_by_id_in_both_id_forms_and_removal() -> None:
    board = PlanBoard()
    board.apply(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "id": "work", "entries": ENTRIES},
            },
        }
    )
    board.apply(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "plan_update",
                "plan": {"type": "markdown", "planId": "notes", "content": "## Idea\n- [ ] try it"},
            },
        }
    )
    board.apply(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "plan_update",
                "plan": {"type": "file", "planId": "doc", "uri": "file:///tmp/plan.md"},
            },
        }
    )
    text = rendered(board)
    assert "work · 1/3" in text
    assert "✔ Read  [high]" in text
    assert "▶ Write" in text
    assert "○ Test  [low]" in text
    assert "notes · markdown" in text
    assert "Idea" in text
    assert "/tmp/plan.md" in text
    assert (
        board.apply(
            {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "notes"}}
        )
        == "notes"
    )
    assert list(board.plans) == [("s", "work"), ("s", "doc")]


def test_a_stable_markdown_plan_shows_its_path_and_v2_removes_it() -> None:
    """The stable forms' markdown plan names its file with `path`; `plan_removed` drops it."""
    board = PlanBoard(clock=lambda: 0.0)
    update = {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "markdown",
            "planId": "design",
            "content": "# Design\n- [ ] Fix the divisor",
            "path": "/work/docs/design.md",
        },
    }
    shown = board.apply({"sessionId": "s", "update": update})
    assert isinstance(shown, ShownPlan)
    assert shown.path == "/work/docs/design.md"
    assert "design · markdown · /work/docs/design.md" in rendered(board)
    assert plain(shown).startswith("[design] markdown /work/docs/design.md\n")
    removal = {"sessionUpdate": "plan_removed", "planId": "design"}
    assert board.apply({"sessionId": "s", "update": removal}) == "design"
    assert board.plans == {}
    [gone] = board.shown()
    assert gone.removed
    assert gone.path == "/work/docs/design.md"


def test_legacy_list_and_plain_text() -> None:
    board = PlanBoard()
    shown = board.apply({"sessionUpdate": "plan", "entries": ENTRIES})
    assert shown is not None
    assert plain(board.plans[(None, "plan")]) == (
        "[plan] 1/3 done\n  ✔ Read (high)\n  ▶ Write\n  ○ Test (low)"
    )
    board.apply({"sessionUpdate": "plan", "entries": []})
    assert board.plans == {}
    board.settle()
    assert "(no plans)" in rendered(board)
    assert board.apply({"sessionUpdate": "agent_message_chunk"}) is None


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def items(plan_id: str, *texts: str) -> dict[str, object]:
    entries = [{"content": t, "priority": "medium", "status": "pending"} for t in texts]
    plan = {"type": "items", "planId": plan_id, "entries": entries}
    return {"sessionUpdate": "plan_update", "plan": plan}


def test_a_removed_plan_stays_visible_as_removed_for_a_moment() -> None:
    clock = Clock()
    board = PlanBoard(clock)
    board.apply(items("work", "Read"))
    board.apply(items("notes", "Idea"))
    clock.now += 10
    assert board.apply({"sessionUpdate": "plan_removed", "planId": "notes"}) == "notes"
    assert list(board.plans) == [(None, "work")]
    text = rendered(board)
    assert "notes · 0/1 · removed" in text
    assert [p.id for p in board.shown()] == ["work", "notes"]
    assert plain(board.shown()[-1]) == "[notes] removed"
    clock.now += MARK_SECONDS
    assert "notes" not in rendered(board)


def test_added_and_dropped_steps_are_marked_until_the_mark_expires() -> None:
    clock = Clock()
    board = PlanBoard(clock)
    first = board.apply(items("work", "Read", "Write"))
    assert isinstance(first, ShownPlan)
    assert first.added == set()  # a new plan: nothing to point out
    growing = board.apply(items("work", "Read", "Write", "Ship"))
    assert isinstance(growing, ShownPlan)
    assert growing.added == set()  # nor while it is still being written (streamed)
    clock.now += MARK_SECONDS
    board.apply(items("work", "Read", "Write"))
    changed = board.apply(items("work", "Read", "Fix the import", "Test"))
    assert isinstance(changed, ShownPlan)
    assert changed.added == {1, 2}
    assert plain(changed) == (
        "[work] 0/3 done\n  ○ Read\n  ○ Fix the import (new)\n  ○ Test (new)\n  ✗ Write (removed)"
    )
    text = rendered(board)
    assert "○ Fix the import  new" in text
    assert "✗ Write  removed" in text
    clock.now += MARK_SECONDS
    text = rendered(board)
    assert "new" not in text
    assert "Write" not in text


def struck(board: PlanBoard) -> dict[str, bool]:
    """Each word on the board, and whether it is drawn struck through."""
    words: dict[str, bool] = {}
    for segment in Console(width=60, force_terminal=True).render(board.render()):
        for word in segment.text.split():
            words[word] = words.get(word, False) or bool(segment.style and segment.style.strike)
    return words


def test_only_what_was_removed_is_struck_through_not_what_was_done() -> None:
    # Strike is the board's mark for a removed plan or step; a completed step reads as done.
    clock = Clock()
    board = PlanBoard(clock)
    steps = [{"content": t, "status": s} for t, s in [("Read", "completed"), ("Drop", "pending")]]
    board.apply(
        {
            "sessionUpdate": "plan_update",
            "plan": {"planId": "work", "type": "items", "entries": steps},
        }
    )
    board.apply(items("notes", "Idea"))
    clock.now += MARK_SECONDS
    board.apply(
        {
            "sessionUpdate": "plan_update",
            "plan": {"planId": "work", "type": "items", "entries": steps[:1]},
        }
    )
    board.apply({"sessionUpdate": "plan_removed", "planId": "notes"})
    words = struck(board)
    assert words["Read"] is False
    assert words["✔"] is False
    assert words["Drop"] is True  # a dropped step
    assert words["Idea"] is True  # in a removed plan
    line = entry_line({"content": "Read", "status": "completed"})
    assert [(line.plain[span.start : span.end], str(span.style)) for span in line.spans] == [
        ("✔ ", "green"),
        ("Read", "dim"),
    ]


def test_a_legacy_list_marks_the_entries_a_removed_plan_took_with_it() -> None:
    board = PlanBoard(Clock())
    board.apply({"sessionUpdate": "plan", "entries": ENTRIES})
    board.apply({"sessionUpdate": "plan", "entries": ENTRIES[:1]})
    assert "✗ Test  removed" in rendered(board)
    board.settle()
    assert "removed" not in rendered(board)


def test_the_board_is_a_live_renderable() -> None:
    board = PlanBoard(Clock())
    board.apply(items("work", "Read"))
    console = Console(record=True, width=60, force_terminal=True)
    console.print(board)
    assert "work · 0/1" in console.export_text()


_SHOWN = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf", "Mn", "Me"))
_IDS = st.one_of(
    st.sampled_from(["[/]", "[red]x", "[bold]", "[/bold]", "[link=http://x]y", "\\[x]", ":smile:"]),
    st.text(_SHOWN, min_size=1, max_size=20),
    st.text(st.sampled_from("[]/\\=:#@ab"), min_size=1, max_size=20),
)


@given(plan_id=_IDS, content=_IDS, kind=st.sampled_from(["items", "markdown", "file"]))
def test_ids_and_step_texts_are_shown_literally(plan_id: str, content: str, kind: str) -> None:
    board = PlanBoard()
    body: dict[str, object] = {"type": kind, "id": plan_id}
    if kind == "items":
        body["entries"] = [{"content": content, "priority": "high", "status": "in_progress"}]
    elif kind == "markdown":
        body["content"] = "notes"
    else:
        body["uri"] = "file:///p.md"
    board.apply({"sessionUpdate": "plan_update", "plan": body})
    console = Console(record=True, width=200, force_terminal=True)
    console.print(board.render())
    text = console.export_text()
    assert f"{plan_id} · " in text  # every character of the id, none taken as markup
    if kind == "items":
        assert content in text
    board.apply({"sessionUpdate": "plan_removed", "id": plan_id})
    console.print(board.render())
    assert f"{plan_id} · " in console.export_text()


def test_a_cancelled_step_has_its_own_mark_and_leaves_the_count() -> None:
    """v2 sends `cancelled` as a status: neither done nor to do."""
    update = {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "p",
            "entries": [
                {"content": "Write", "priority": "medium", "status": "completed"},
                {"content": "Skip", "priority": "medium", "status": "cancelled"},
                {"content": "Ship", "priority": "medium", "status": "pending"},
            ],
        },
    }
    board = PlanBoard()
    board.apply({"sessionId": "s", "update": update})
    [plan] = board.shown()
    assert plan.progress == "1/2"
    assert entry_line(plan.entries[1]).plain == "✘ Skip"


@pytest.mark.parametrize("legacy", [True, False])
def test_a_v1_cancelled_step_reads_as_cancelled(legacy: bool) -> None:
    """v1 shows a cancelled step as completed with `Cancelled: ` before its text: the board
    reads it back as cancelled, in the legacy list and in a plan_update alike."""
    entries = [
        {"content": "Write", "priority": "medium", "status": "completed"},
        {"content": "Cancelled: Skip", "priority": "medium", "status": "completed"},
    ]
    update: dict[str, Any] = (
        {"sessionUpdate": "plan", "entries": entries}
        if legacy
        else {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": entries},
        }
    )
    board = PlanBoard()
    board.apply({"sessionId": "s", "update": update})
    [shown] = board.shown()
    assert shown.progress == "1/1"
    assert entry_line(shown.entries[1]).plain == "✘ Skip"
    assert plain(shown).endswith("✘ Skip")


def test_a_subagents_plan_never_overwrites_its_parents() -> None:
    board = PlanBoard()
    items = {"type": "items", "planId": "plan-1", "entries": ENTRIES}
    board.apply({"sessionId": "s", "update": {"sessionUpdate": "plan_update", "plan": items}})
    announce = {"sessionUpdate": "subagent_update", "sessionId": "child", "title": "Explorer"}
    assert board.apply({"sessionId": "s", "update": announce}) is None
    child_plan = {**items, "entries": ENTRIES[:1]}
    board.apply(
        {"sessionId": "child", "update": {"sessionUpdate": "plan_update", "plan": child_plan}}
    )
    assert list(board.plans) == [("s", "plan-1"), ("child", "plan-1")]
    assert board.plans[("s", "plan-1")].entries == ENTRIES
    text = rendered(board)
    assert "Explorer / plan-1 · 1/1" in text
    assert "plan-1 · 1/3" in text
    removal = {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    board.apply({"sessionId": "child", "update": removal})
    assert list(board.plans) == [("s", "plan-1")]


def test_a_renamed_subagents_plans_show_its_new_title() -> None:
    board = PlanBoard()
    items = {"type": "items", "planId": "p", "entries": ENTRIES[:1]}
    for update in (
        {"sessionUpdate": "subagent_update", "sessionId": "child", "title": "Old title"},
    ):
        board.apply({"sessionId": "s", "update": update})
    board.apply({"sessionId": "child", "update": {"sessionUpdate": "plan_update", "plan": items}})
    rename = {"sessionUpdate": "subagent_update", "sessionId": "child", "title": "New title"}
    board.apply({"sessionId": "s", "update": rename})
    assert [p.owner for p in board.shown()] == ["New title"]
