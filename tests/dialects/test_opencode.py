"""`opencode`: opencode's todowrite calls, as its models send them and as opencode's ACP
agent reports them (`rawInput`), into one ACP list whose entries keep their priorities."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot
from list_checks import (
    CAPS,
    answered_safely,
    broken,
    mutated,
    scripted_updates,
    sent_parts,
    session,
    streamed_as_plain,
)
from spec_shapes import check

from llm_plans import PlanSession, tools
from llm_plans.testing import RecordingSend

FIELDS = {"todos": {"content", "status", "priority", "id"}}


def todo(content: str, status: str, priority: str = "medium") -> dict[str, str]:
    return {"content": content, "status": status, "priority": priority}


# Written from opencode 1.18.33's `todowrite` (its `SessionTodo` struct: content, status and
# priority, all required): the whole list each time, each todo's priority restated.
CREATE = {
    "todos": [
        todo("Reproduce the crash", "in_progress", "high"),
        todo("Find the null dereference", "pending", "high"),
        todo("Add a regression test", "pending"),
        todo("Update the changelog", "pending", "low"),
    ]
}
PROGRESS = {
    "todos": [
        todo("Reproduce the crash", "completed", "high"),
        todo("Find the null dereference", "in_progress", "high"),
        todo("Add a regression test", "pending"),
        todo("Update the changelog", "pending", "low"),
    ]
}
CANCEL = {
    "todos": [
        todo("Reproduce the crash", "completed", "high"),
        todo("Find the null dereference", "completed", "high"),
        todo("Add a regression test", "in_progress", "high"),  # raised now
        todo("Update the changelog", "cancelled", "low"),
    ]
}
COMPLETE = {
    "todos": [
        todo("Reproduce the crash", "completed", "high"),
        todo("Find the null dereference", "completed", "high"),
        todo("Add a regression test", "completed", "high"),
        todo("Update the changelog", "cancelled", "low"),
    ]
}
SCRIPT: tuple[dict[str, Any], ...] = (CREATE, PROGRESS, CANCEL, COMPLETE)

# A todowrite `tool_call_update`'s `rawInput` as opencode's ACP agent sends it: the model's
# arguments, compact JSON.
RAW_INPUT = (
    '{"todos":[{"content":"Read the code","status":"in_progress","priority":"high"},'
    '{"content":"Fix it","status":"cancelled","priority":"low"}]}'
)


def listed(plans: PlanSession) -> list[tuple[str, str, str]]:
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    return [(e.content, e.status, e.priority) for e in entries]


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    assert await scripted_updates("opencode", form, "todowrite", SCRIPT) == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "high", "status": "in_progress"},
                    {
                        "content": "Find the null dereference",
                        "priority": "high",
                        "status": "pending",
                    },
                    {"content": "Add a regression test", "priority": "medium", "status": "pending"},
                    {"content": "Update the changelog", "priority": "low", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "high", "status": "completed"},
                    {
                        "content": "Find the null dereference",
                        "priority": "high",
                        "status": "in_progress",
                    },
                    {"content": "Add a regression test", "priority": "medium", "status": "pending"},
                    {"content": "Update the changelog", "priority": "low", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "high", "status": "completed"},
                    {
                        "content": "Find the null dereference",
                        "priority": "high",
                        "status": "completed",
                    },
                    {
                        "content": "Add a regression test",
                        "priority": "high",
                        "status": "in_progress",
                    },
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "low",
                        "status": "completed",
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "high", "status": "completed"},
                    {
                        "content": "Find the null dereference",
                        "priority": "high",
                        "status": "completed",
                    },
                    {"content": "Add a regression test", "priority": "high", "status": "completed"},
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "low",
                        "status": "completed",
                    },
                ],
            },
        ]
    ),
    "schema": snapshot(
        [
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Reproduce the crash",
                            "priority": "high",
                            "status": "in_progress",
                        },
                        {
                            "content": "Find the null dereference",
                            "priority": "high",
                            "status": "pending",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {"content": "Update the changelog", "priority": "low", "status": "pending"},
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Reproduce the crash",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Find the null dereference",
                            "priority": "high",
                            "status": "in_progress",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {"content": "Update the changelog", "priority": "low", "status": "pending"},
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Reproduce the crash",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Find the null dereference",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "high",
                            "status": "in_progress",
                        },
                        {
                            "content": "Cancelled: Update the changelog",
                            "priority": "low",
                            "status": "completed",
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Reproduce the crash",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Find the null dereference",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "high",
                            "status": "completed",
                        },
                        {
                            "content": "Cancelled: Update the changelog",
                            "priority": "low",
                            "status": "completed",
                        },
                    ],
                },
            },
        ]
    ),
}


async def test_results_say_what_the_list_is_now() -> None:
    plans, _ = session("opencode")
    texts = [(await plans.call("todowrite", args)).content for args in SCRIPT]
    assert texts == snapshot(
        [
            """\
Updated the todo list (4 items): 1 in progress, 3 pending.
In progress: "Reproduce the crash".
Next: "Find the null dereference".\
""",
            """\
Updated the todo list (4 items): 1 completed, 1 in progress, 2 pending.
In progress: "Find the null dereference".
Next: "Add a regression test".\
""",
            """\
Updated the todo list (4 items): 2 completed, 1 in progress, 1 cancelled.
In progress: "Add a regression test".\
""",
            "Updated the todo list (4 items): 3 completed, 1 cancelled.",
        ]
    )


async def test_opencodes_raw_input_becomes_the_plan_with_its_priorities() -> None:
    """What the ACP proxy does with a todowrite call opencode reports: `rawInput` as sent,
    through `call` and through `mirror` alike."""
    for how in ("call", "mirror"):
        plans, send = session("opencode")
        result = await getattr(plans, how)("todowrite", RAW_INPUT)
        assert result.ok, result.content
        assert listed(plans) == [
            ("Read the code", "in_progress", "high"),
            ("Fix it", "cancelled", "low"),
        ]
        assert plans.snapshot()["plans"][0]["entries"] == [
            {"content": "Read the code", "priority": "high", "status": "in_progress"},
            {"content": "Fix it", "priority": "low", "status": "cancelled"},
        ]
        (params,) = send.sent
        check("schema", params)
        # ACP v1 has no cancelled: the schema form shows it completed, and says so.
        assert send.updates[-1]["plan"]["entries"][1] == {
            "content": "Cancelled: Fix it",
            "priority": "low",
            "status": "completed",
        }


async def test_the_priority_sent_wins_over_the_one_the_entry_had() -> None:
    plans, _ = session("opencode", dialects=["llm_plans", "opencode"])
    assert (await plans.call("todowrite", CREATE)).ok
    lowered = {"todos": [todo("Reproduce the crash", "in_progress", "low"), *CREATE["todos"][1:]]}
    assert (await plans.call("todowrite", lowered)).ok
    assert listed(plans)[0] == ("Reproduce the crash", "in_progress", "low")
    # Our update_plan may change it; the next todowrite says it again, and wins.
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 2, "priority": "low"}]})
    assert listed(plans)[1][2] == "low"
    assert (await plans.call("todowrite", CREATE)).ok
    assert [p for _, _, p in listed(plans)] == ["high", "high", "medium", "low"]


async def test_a_replacement_keeps_what_else_an_unchanged_todo_had() -> None:
    """Another dialect's `_meta` stays with a todo whose text is restated (a Claude task's
    number and description); its priority is the one sent."""
    plans, _ = session("opencode", dialects=["opencode", "claude_tasks"])
    created = {"subject": "Reproduce the crash", "description": "With the saved input."}
    assert (await plans.call("TaskCreate", created)).ok
    assert (await plans.call("todowrite", CREATE)).ok
    first = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert (first.status, first.priority, first.meta) == (
        "in_progress",
        "high",
        {"llm_plans": {"taskId": "1", "description": "With the saved input."}},
    )
    assert (await plans.call("TaskUpdate", {"taskId": "1", "status": "completed"})).ok


@pytest.mark.parametrize("sent", [None, "missing"])
async def test_a_todo_without_a_priority_is_medium(sent: str | None) -> None:
    plans, _ = session("opencode")
    assert (await plans.call("todowrite", CREATE)).ok
    first: dict[str, Any] = {"content": "Reproduce the crash", "status": "completed"}
    if sent is None:
        first["priority"] = None
    assert (await plans.call("todowrite", {"todos": [first]})).ok
    assert listed(plans) == [("Reproduce the crash", "completed", "medium")]


@pytest.mark.parametrize(
    ("sent", "stored"),
    [("High", "high"), (" LOW ", "low"), ("med", "medium"), ("Normal", "medium")],
)
async def test_priority_spellings_are_repaired(sent: str, stored: str) -> None:
    plans, _ = session("opencode")
    assert (await plans.call("todowrite", {"todos": [todo("Ship it", "pending", sent)]})).ok
    assert listed(plans) == [("Ship it", "pending", stored)]


@pytest.mark.parametrize(
    ("sent", "stored"),
    [("done", "completed"), ("Canceled", "cancelled"), ("In Progress", "in_progress")],
)
async def test_status_spellings_are_repaired(sent: str, stored: str) -> None:
    plans, _ = session("opencode")
    assert (await plans.call("todowrite", {"todos": [todo("Ship it", sent)]})).ok
    assert listed(plans) == [("Ship it", stored, "medium")]


async def test_cancelled_todos_keep_their_place_and_blocked_is_pending() -> None:
    plans, _ = session("opencode")
    sent = {
        "todos": [
            todo("Wait for CI", "blocked", "high"),
            todo("Drop the flag", "cancelled", "low"),
            todo("Merge", "pending"),
        ]
    }
    assert (await plans.call("todowrite", sent)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.status, e.priority, e.meta) for e in entries] == [
        ("Wait for CI", "pending", "high", {"llm_plans": {"status": "blocked"}}),
        ("Drop the flag", "cancelled", "low", None),
        ("Merge", "pending", "medium", None),
    ]


async def test_an_older_opencodes_id_is_kept() -> None:
    """Early opencode versions sent an `id` per todo; a model trained on them may still."""
    plans, _ = session("opencode")
    old = {"todos": [{**todo("Ship it", "pending", "high"), "id": 1}]}
    assert (await plans.call("todowrite", old)).ok
    item = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert (item.priority, item.meta) == ("high", {"llm_plans": {"id": "1"}})
    long = "i" * (plans.limits.max_entry_chars + 1)
    result = await plans.call("todowrite", {"todos": [{**todo("a", "pending"), "id": long}]})
    assert f"- todos[0].id: {len(long)} characters" in result.content


async def test_an_empty_list_keeps_the_plan_empty() -> None:
    plans, send = session("opencode")
    await plans.call("todowrite", CREATE)
    result = await plans.call("todowrite", {"todos": []})
    assert result.content == "Updated the todo list: it is empty now."
    assert send.updates[-1]["plan"]["entries"] == []


async def test_the_definition_is_opencodes_with_enums() -> None:
    (definition,) = tools.openai_chat(dialect="opencode")
    assert definition["function"]["name"] == "todowrite"
    parameters: Any = definition["function"]["parameters"]
    item = parameters["properties"]["todos"]["items"]
    assert item["required"] == ["content", "status", "priority"]
    assert item["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
        "cancelled",
    ]
    assert item["properties"]["priority"]["enum"] == ["high", "medium", "low"]


async def test_bad_arguments_name_the_todos_paths_and_change_nothing() -> None:
    plans, send = session("opencode")
    await plans.call("todowrite", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {
        "todos": [
            todo(" ", "pending"),
            todo("x", "waiting", "urgent"),
            {"content": "y", "priority": "low", "colour": "red"},
        ]
    }
    assert (await plans.call("todowrite", bad)).content == snapshot("""\
todowrite was not applied (5 problems); no plan was changed.
- todos[0].content: sent " "; must not be empty.
- todos[1].status: sent "waiting"; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
- todos[1].priority: sent "urgent"; accepted values: "high", "medium" or "low".
- todos[2].status: this field is required.
- todos[2].colour: sent "red"; not a known field. Accepted fields: content, status, priority.
Fix the errors and call todowrite again.\
""")
    limit = plans.limits.max_entries
    too_many = {"todos": [todo(f"Step {n}", "pending") for n in range(limit + 1)]}
    result = await plans.call("todowrite", too_many)
    assert f"- todos: {limit + 1} steps; at most {limit}" in result.content
    long = "x" * (plans.limits.max_entry_chars + 1)
    result = await plans.call("todowrite", {"todos": [todo("a", "pending"), todo(long, "pending")]})
    assert f"- todos[1].content: {len(long)} characters" in result.content
    assert "- colour: " in (await plans.call("todowrite", {**CREATE, "colour": 1})).content
    assert "- todos: this field is required." in (await plans.call("todowrite", {})).content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


@settings(max_examples=60)
@given(data=st.data())
def test_streamed_calls_end_as_the_same_call_sent_whole(data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(SCRIPT) - 1))
    before = data.draw(st.sampled_from([SCRIPT[:index], ()]))
    unicode = {
        "todos": [todo("Übersetze die Meldung ✅", "in_progress", "high"), todo("翻訳", "pending")]
    }
    args = data.draw(st.sampled_from([SCRIPT[index], unicode, broken(SCRIPT[index], "todos")]))
    parts = data.draw(sent_parts(args))
    asyncio.run(streamed_as_plain("opencode", "todowrite", before, args, "todos", parts))


@settings(max_examples=200)
@given(args=mutated(CANCEL, "todos") | mutated(CREATE, "todos"))
def test_hostile_calls_are_answered_and_change_nothing(args: Any) -> None:
    async def run() -> None:
        plans, send = session("opencode")
        await plans.call("todowrite", CREATE)
        if await answered_safely(plans, send, "todowrite", args, FIELDS):
            for entry in plans.plans["main"].entries:  # type: ignore[union-attr]
                assert entry.priority in ("high", "medium", "low")

    asyncio.run(run())


def test_the_session_takes_it_beside_ours_and_vibes() -> None:
    """The ACP proxy's session: ours for plans by id, opencode's and Vibe's lists."""
    plans = PlanSession(RecordingSend(), session_id="s", dialects=["llm_plans", "opencode", "vibe"])
    assert plans.tool_names == ("create_plan", "update_plan", "remove_plan", "todowrite", "todo")
