from __future__ import annotations

import json
from typing import Any

import pytest

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend


async def entries_after(arguments: Any) -> list[dict[str, Any]]:
    send = RecordingSend()
    session = PlanSession(send, session_id="s")
    result = await session.call("create_plan", arguments)
    assert result.ok, result.content
    return list(send.updates[-1]["entries"])


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        ("In Progress", "in_progress"),
        ("in-progress", "in_progress"),
        ("IN_PROGRESS", "in_progress"),
        ("done", "completed"),
        ("Complete", "completed"),
        ("finished", "completed"),
        ("todo", "pending"),
        ("not started", "pending"),
        ("open", "pending"),
        ("active", "in_progress"),
        ("doing", "in_progress"),
        ("started", "in_progress"),
        ("WIP", "in_progress"),
        (" pending ", "pending"),
    ],
)
async def test_status_spellings_and_synonyms(sent: str, status: str) -> None:
    entries = await entries_after({"type": "items", "entries": [{"content": "a", "status": sent}]})
    assert entries[0]["status"] == status


@pytest.mark.parametrize(
    ("sent", "priority"),
    [("HIGH", "high"), ("Low", "low"), ("med", "medium"), ("normal", "medium")],
)
async def test_priority_spellings(sent: str, priority: str) -> None:
    entries = await entries_after(
        {"type": "items", "entries": [{"content": "a", "priority": sent}]}
    )
    assert entries[0]["priority"] == priority


async def test_type_spelling() -> None:
    assert await entries_after({"type": "Items", "entries": [{"content": "a"}]})


async def test_arrays_and_objects_sent_as_json_strings() -> None:
    inner = json.dumps([{"content": "a", "status": "done"}, json.dumps({"content": "b"})])
    entries = await entries_after({"type": "items", "entries": inner})
    assert [(e["content"], e["status"]) for e in entries] == [("a", "completed"), ("b", "pending")]


async def test_whole_arguments_double_encoded() -> None:
    once = json.dumps({"type": "items", "entries": [{"content": "a"}]})
    assert await entries_after(json.dumps(once))
    assert await entries_after(once)


async def test_steps_sent_as_bare_strings_or_a_single_object() -> None:
    entries = await entries_after({"type": "items", "entries": ["a", "b"]})
    assert [e["content"] for e in entries] == ["a", "b"]
    entries = await entries_after({"type": "items", "entries": {"content": "only"}})
    assert [e["content"] for e in entries] == ["only"]


async def test_changes_sent_as_a_json_string() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s")
    await session.call("create_plan", {"type": "items", "entries": ["a", "b"]})
    result = await session.call(
        "update_plan", {"id": "plan-1", "changes": '[{"step": "2", "status": "Done"}]'}
    )
    assert result.ok, result.content
    assert send.updates[-1]["entries"][1]["status"] == "completed"


async def test_unrecognised_values_are_reported_as_sent() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call(
        "create_plan", {"type": "items", "entries": [{"content": "a", "status": "Blocked"}]}
    )
    assert not result.ok
    assert 'entries[0].status: sent "Blocked"' in result.content
    assert '"pending", "in_progress", "completed" or "cancelled"' in result.content
