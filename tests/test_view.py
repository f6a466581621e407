"""PlanBoard: the client-side view, fed notifications of every form."""

from __future__ import annotations

from rich.console import Console

from llm_plans.view import PlanBoard, plain

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
    assert list(board.plans) == ["work", "doc"]


def test_legacy_list_and_plain_text() -> None:
    board = PlanBoard()
    shown = board.apply({"sessionUpdate": "plan", "entries": ENTRIES})
    assert shown is not None
    assert plain(board.plans["plan"]) == (
        "[plan] 1/3 done\n  ✔ Read (high)\n  ▶ Write\n  ○ Test (low)"
    )
    board.apply({"sessionUpdate": "plan", "entries": []})
    assert board.plans == {}
    assert "(no plans)" in rendered(board)
    assert board.apply({"sessionUpdate": "agent_message_chunk"}) is None
