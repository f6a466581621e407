"""The texts the model reads, pinned as inline snapshots."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from inline_snapshot import snapshot

from llm_plans import Limits, PlanSession, ToolResult
from llm_plans.testing import RecordingSend


async def test_unknown_id_lists_the_existing_ids() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    await session.call("create_plan", {"type": "items", "entries": ["Read", "Write"]})
    result = await session.call(
        "update_plan", {"id": "plan-9", "changes": [{"step": 1, "status": "done"}]}
    )
    assert result.content == snapshot("""\
update_plan was not applied (1 problem); no plan was changed.
- id: sent "plan-9"; no plan has this id.
Existing plan id: "plan-1".
Fix the errors and call update_plan again.\
""")


async def test_several_problems_are_all_named() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call(
        "create_plan",
        {
            "type": "items",
            "entries": [{"content": "a", "status": "blocked", "priority": 3}],
            "colour": "red",
        },
    )
    assert result.content == snapshot("""\
create_plan was not applied (3 problems); no plan was changed.
- entries[0].priority: sent 3; accepted values: "high", "medium" or "low".
- entries[0].status: sent "blocked"; accepted values: "pending", "in_progress", "completed" or "cancelled".
- colour: sent "red"; not a known field. Accepted fields: type, id, entries, content, uri.
Fix the errors and call create_plan again.\
""")


async def test_success_and_discipline_notes() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    created = await session.call(
        "create_plan",
        {
            "type": "items",
            "entries": [{"content": "Read", "status": "in_progress", "priority": "high"}, "Write"],
        },
    )
    assert created.content == snapshot("""\
Created plan "plan-1" (items, 2 steps):
1. [in_progress] Read (high priority)
2. [pending] Write
Record progress by step number: update_plan {"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]}\
""")
    both = await session.call(
        "update_plan", {"id": "plan-1", "changes": [{"step": 2, "status": "in_progress"}]}
    )
    assert both.content.splitlines()[-1] == snapshot(
        "Note: steps 1, 2 are all in_progress; keep exactly one step in progress."
    )
    idle = await session.call(
        "update_plan",
        {
            "id": "plan-1",
            "changes": [{"step": 1, "status": "completed"}, {"step": 2, "status": "pending"}],
        },
    )
    assert idle.content.splitlines()[-1] == snapshot(
        "Note: steps remain but none is in_progress; set step 2 (or the step you work on now) "
        "to in_progress."
    )


@pytest.mark.parametrize("steps", [5, 20, 100, 200])
async def test_a_status_change_result_stays_small_at_any_length(steps: int) -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    entries = [{"content": f"Step {n} " + "with a long description " * 40} for n in range(steps)]
    await session.call("create_plan", {"type": "items", "id": "build", "entries": entries})
    result = await session.call(
        "update_plan",
        {
            "id": "build",
            "changes": [{"step": 3, "status": "completed"}, {"step": 4, "status": "in_progress"}],
        },
    )
    assert len(result.content.encode()) <= 600
    first = result.content.splitlines()[0]
    assert first == f'Updated plan "build" ({steps} steps): step 3 completed, step 4 in_progress.'
    assert 'In progress: step 4 "Step 3 with a long' in result.content
    assert f"Remaining: {steps - 1} of {steps}; next pending: step 1 " in result.content


async def test_counts_of_one_are_singular() -> None:
    session = PlanSession(RecordingSend(), session_id="s", limits=Limits(max_plans=1))
    await session.call("create_plan", {"type": "items", "id": "one", "entries": ["Ship"]})
    done = await session.call(
        "update_plan", {"id": "one", "changes": [{"step": 1, "status": "completed"}]}
    )
    assert done.content == snapshot("""\
Updated plan "one" (1 step): step 1 completed.
The plan's only step is completed.\
""")
    beyond = await session.call(
        "update_plan", {"id": "one", "changes": [{"step": 2, "status": "completed"}]}
    )
    assert beyond.content.splitlines()[1] == snapshot(
        '- changes[0].step: sent 2; plan "one" has only step 1.'
    )
    full = await session.call("create_plan", {"type": "markdown", "content": "# Notes"})
    assert full.content.splitlines()[1] == snapshot(
        "- this session already has 1 plan, the most allowed. Remove a finished plan with "
        "remove_plan first."
    )
    await session.call("remove_plan", {"id": "one"})
    note = await session.call("create_plan", {"type": "markdown", "content": "# Notes"})
    assert note.content == snapshot('Created plan "plan-1" (markdown, 1 line).')


async def test_an_unknown_tool_is_told_the_plan_tools() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call("make_plan", {"type": "items", "entries": ["a"]})
    assert result.content == snapshot("""\
"make_plan" was not applied (1 problem); no plan was changed.
- 'make_plan' is not a plan tool.
Call one of the plan tools instead: create_plan, update_plan, remove_plan.\
""")
    assert "make_plan again" not in result.content


def test_a_tool_result_is_a_frozen_value() -> None:
    # Its own __init__ (set in one step, on every call) keeps what the dataclass gave.
    result = ToolResult(True, "Updated plan", "update_plan", plan_id="p")
    assert result == ToolResult(ok=True, content="Updated plan", tool="update_plan", plan_id="p")
    assert hash(result) == hash(ToolResult(True, "Updated plan", "update_plan", "p"))
    assert result != ToolResult(True, "Updated plan", "update_plan")
    assert ToolResult(False, "x") == ToolResult(False, "x", "", None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.ok = False  # type: ignore[misc]
    assert dataclasses.replace(result, ok=False).ok is False
    assert dataclasses.asdict(result) == {
        "ok": True,
        "content": "Updated plan",
        "tool": "update_plan",
        "plan_id": "p",
        "failure": None,
    }
    assert pickle.loads(pickle.dumps(result)) == result
    assert copy.copy(result) == result
    assert repr(result).startswith("ToolResult(ok=True, content='Updated plan'")
