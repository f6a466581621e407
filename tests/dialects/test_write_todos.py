"""`write_todos`: LangChain's and Gemini CLI's write_todos calls, as their models send them,
into one ACP list."""

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

from llm_plans import PlanSession, tools
from llm_plans.testing import RecordingSend

FIELDS = {"todos": {"content", "description", "status"}}


def todo(content: str, status: str) -> dict[str, str]:
    return {"content": content, "status": status}


def gemini(description: str, status: str) -> dict[str, str]:
    return {"description": description, "status": status}


# Written from LangChain 1.5's `write_todos` (langchain/agents/middleware/todo.py), with the
# `cancelled` our definition adds: the whole list each time.
CREATE = {
    "todos": [
        todo("Read the issue", "in_progress"),
        todo("Write the migration", "pending"),
        todo("Backfill the column", "pending"),
        todo("Drop the old column", "pending"),
    ]
}
PROGRESS = {
    "todos": [
        todo("Read the issue", "completed"),
        todo("Write the migration", "in_progress"),
        todo("Backfill the column", "pending"),
        todo("Drop the old column", "pending"),
    ]
}
CANCEL = {
    "todos": [
        todo("Read the issue", "completed"),
        todo("Write the migration", "completed"),
        todo("Backfill the column", "in_progress"),
        todo("Drop the old column", "cancelled"),
    ]
}
COMPLETE = {
    "todos": [
        todo("Read the issue", "completed"),
        todo("Write the migration", "completed"),
        todo("Backfill the column", "completed"),
        todo("Drop the old column", "cancelled"),
    ]
}
DROP = {"todos": COMPLETE["todos"][:3]}
SCRIPT: tuple[dict[str, Any], ...] = (CREATE, PROGRESS, CANCEL, COMPLETE, DROP)

# Written from Gemini CLI 0.61's `write_todos` (gemini-2.5-pro's definition): `description` for
# the text, and `blocked` among the statuses.
GEMINI = {
    "todos": [
        gemini("Read the issue", "completed"),
        gemini("Write the migration", "in_progress"),
        gemini("Backfill the column", "blocked"),
        gemini("Drop the old column", "pending"),
    ]
}


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    updates = await scripted_updates("write_todos", form, "write_todos", (*SCRIPT, GEMINI))
    assert updates == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "in_progress"},
                    {"content": "Write the migration", "priority": "medium", "status": "pending"},
                    {"content": "Backfill the column", "priority": "medium", "status": "pending"},
                    {"content": "Drop the old column", "priority": "medium", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "completed"},
                    {
                        "content": "Write the migration",
                        "priority": "medium",
                        "status": "in_progress",
                    },
                    {"content": "Backfill the column", "priority": "medium", "status": "pending"},
                    {"content": "Drop the old column", "priority": "medium", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "completed"},
                    {"content": "Write the migration", "priority": "medium", "status": "completed"},
                    {
                        "content": "Backfill the column",
                        "priority": "medium",
                        "status": "in_progress",
                    },
                    {
                        "content": "Cancelled: Drop the old column",
                        "priority": "medium",
                        "status": "completed",
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "completed"},
                    {"content": "Write the migration", "priority": "medium", "status": "completed"},
                    {"content": "Backfill the column", "priority": "medium", "status": "completed"},
                    {
                        "content": "Cancelled: Drop the old column",
                        "priority": "medium",
                        "status": "completed",
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "completed"},
                    {"content": "Write the migration", "priority": "medium", "status": "completed"},
                    {"content": "Backfill the column", "priority": "medium", "status": "completed"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the issue", "priority": "medium", "status": "completed"},
                    {
                        "content": "Write the migration",
                        "priority": "medium",
                        "status": "in_progress",
                    },
                    {
                        "content": "Backfill the column",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"status": "blocked"}},
                    },
                    {"content": "Drop the old column", "priority": "medium", "status": "pending"},
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
                            "content": "Read the issue",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {
                            "content": "Drop the old column",
                            "priority": "medium",
                            "status": "pending",
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
                        {"content": "Read the issue", "priority": "medium", "status": "completed"},
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {
                            "content": "Drop the old column",
                            "priority": "medium",
                            "status": "pending",
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
                        {"content": "Read the issue", "priority": "medium", "status": "completed"},
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Cancelled: Drop the old column",
                            "priority": "medium",
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
                        {"content": "Read the issue", "priority": "medium", "status": "completed"},
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Cancelled: Drop the old column",
                            "priority": "medium",
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
                        {"content": "Read the issue", "priority": "medium", "status": "completed"},
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
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
                        {"content": "Read the issue", "priority": "medium", "status": "completed"},
                        {
                            "content": "Write the migration",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Backfill the column",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"status": "blocked"}},
                        },
                        {
                            "content": "Drop the old column",
                            "priority": "medium",
                            "status": "pending",
                        },
                    ],
                },
            },
        ]
    ),
}


async def test_results_say_what_the_list_is_now() -> None:
    plans, _ = session("write_todos")
    texts = [(await plans.call("write_todos", args)).content for args in (*SCRIPT, GEMINI)]
    assert texts == snapshot(
        [
            """\
Updated the todo list (4 items): 1 in progress, 3 pending.
In progress: "Read the issue".
Next: "Write the migration".\
""",
            """\
Updated the todo list (4 items): 1 completed, 1 in progress, 2 pending.
In progress: "Write the migration".
Next: "Backfill the column".\
""",
            """\
Updated the todo list (4 items): 2 completed, 1 in progress, 1 cancelled.
In progress: "Backfill the column".\
""",
            "Updated the todo list (4 items): 3 completed, 1 cancelled.",
            "Updated the todo list (3 items): 3 completed.",
            """\
Updated the todo list (4 items): 1 completed, 1 in progress, 1 pending, 1 blocked.
In progress: "Write the migration".
Next: "Drop the old column".
Blocked: "Backfill the column".\
""",
        ]
    )


async def test_results_count_blocked_todos_apart_and_never_call_one_next() -> None:
    plans, _ = session("write_todos")
    waiting = {"todos": [gemini(f"Wait for {n}", "blocked") for n in ("CI", "review", "QA")]}
    result = await plans.call(
        "write_todos", {"todos": [*waiting["todos"], todo("Tidy", "pending")]}
    )
    assert result.content == snapshot("""\
Updated the todo list (4 items): 1 pending, 3 blocked.
Next: "Tidy".
Blocked: "Wait for CI" (and 2 more).
Note: items remain but none is in_progress; mark the one you work on now in_progress.\
""")
    result = await plans.call("write_todos", waiting)
    assert result.content == snapshot("""\
Updated the todo list (3 items): 3 blocked.
Blocked: "Wait for CI" (and 2 more).\
""")


async def test_the_definition_is_langchains_with_cancelled() -> None:
    (definition,) = tools.openai_chat(dialect="write_todos")
    parameters: Any = definition["function"]["parameters"]
    item = parameters["properties"]["todos"]["items"]
    assert sorted(item["properties"]) == ["content", "status"]
    assert item["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
        "cancelled",
    ]


async def test_geminis_blocked_todo_is_pending_and_keeps_its_own_status() -> None:
    plans, _ = session("write_todos")
    assert (await plans.call("write_todos", GEMINI)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.status, e.meta) for e in entries] == [
        ("Read the issue", "completed", None),
        ("Write the migration", "in_progress", None),
        ("Backfill the column", "pending", {"llm_plans": {"status": "blocked"}}),
        ("Drop the old column", "pending", None),
    ]
    # Unblocked by the next call: the status it sends now is the todo's.
    assert (await plans.call("write_todos", PROGRESS)).ok
    assert plans.plans["main"].entries[2].meta is None  # type: ignore[union-attr]


@pytest.mark.parametrize(("sent", "stored"), [("done", "completed"), ("Closed", "completed")])
async def test_status_words_of_other_trackers_are_taken(sent: str, stored: str) -> None:
    plans, _ = session("write_todos")
    assert (await plans.call("write_todos", {"todos": [gemini("Merge it", sent)]})).ok
    assert plans.plans["main"].entries[0].status == stored  # type: ignore[union-attr]


@pytest.mark.parametrize("sent", ["Blocked", " BLOCKED ", "blocked"])
async def test_blocked_is_taken_in_any_case(sent: str) -> None:
    plans, _ = session("write_todos")
    assert (await plans.call("write_todos", {"todos": [gemini("Wait for CI", sent)]})).ok
    item = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert (item.status, item.meta) == ("pending", {"llm_plans": {"status": "blocked"}})


async def test_a_todo_with_both_texts_reads_as_content_and_keeps_the_description() -> None:
    plans, _ = session("write_todos")
    both = {"content": "Fix the build", "description": "CI fails on 3.13", "status": "pending"}
    assert (await plans.call("write_todos", {"todos": [both]})).ok
    item = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert (item.content, item.meta) == (
        "Fix the build",
        {"llm_plans": {"description": "CI fails on 3.13"}},
    )


async def test_both_shapes_write_the_same_list() -> None:
    langchain, langchain_send = session("write_todos")
    gemini_style, gemini_send = session("write_todos")
    as_gemini = {"todos": [gemini(t["content"], t["status"]) for t in CANCEL["todos"]]}
    assert (await langchain.call("write_todos", CANCEL)).ok
    assert (await gemini_style.call("write_todos", as_gemini)).ok
    assert langchain.snapshot() == gemini_style.snapshot()
    assert langchain_send.sent == gemini_send.sent


async def test_a_replacement_keeps_what_an_unchanged_todo_had() -> None:
    plans, _ = session("write_todos", dialects=["llm_plans", "write_todos"])
    await plans.call("write_todos", CREATE)
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 4, "priority": "high"}]})
    reordered = {"todos": [PROGRESS["todos"][3], gemini("Read the issue", "completed")]}
    assert (await plans.call("write_todos", reordered)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.priority) for e in entries] == [
        ("Drop the old column", "high"),
        ("Read the issue", "medium"),
    ]


async def test_an_empty_list_keeps_the_plan_empty() -> None:
    plans, send = session("write_todos")
    await plans.call("write_todos", CREATE)
    result = await plans.call("write_todos", {"todos": []})
    assert result.content == "Updated the todo list: it is empty now."
    assert send.updates[-1]["plan"]["entries"] == []
    restored, _ = session("write_todos")
    assert restored.restore(plans.snapshot()) == []


async def test_bad_arguments_name_the_todos_paths_and_change_nothing() -> None:
    plans, send = session("write_todos")
    await plans.call("write_todos", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {"todos": [gemini(" ", "pending"), todo("x", "waiting"), {"title": "y", "status": 1}]}
    result = await plans.call("write_todos", bad)
    assert result.content == snapshot("""\
write_todos was not applied (4 problems); no plan was changed.
- todos[0].description: sent " "; must not be empty.
- todos[1].status: sent "waiting"; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
- todos[2].status: sent 1; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
- todos[2].title: sent "y"; not a known field. Accepted fields: content (or description), status.
Fix the errors and call write_todos again.\
""")
    no_text = {"todos": [todo("a", "pending"), {"status": "pending"}]}
    assert (await plans.call("write_todos", no_text)).content == snapshot("""\
write_todos was not applied (1 problem); no plan was changed.
- todos[1].content: this field is required (the todo's text).
Fix the errors and call write_todos again.\
""")
    limit = plans.limits.max_entries
    too_many = {"todos": [todo(f"Step {n}", "pending") for n in range(limit + 1)]}
    result = await plans.call("write_todos", too_many)
    assert f"- todos: {limit + 1} steps; at most {limit}" in result.content
    long = "x" * (plans.limits.max_entry_chars + 1)
    result = await plans.call(
        "write_todos", {"todos": [todo("a", "pending"), gemini(long, "blocked")]}
    )
    assert f"- todos[1].description: {len(long)} characters" in result.content
    result = await plans.call("write_todos", {"todos": [todo(long, "pending")]})
    assert f"- todos[0].content: {len(long)} characters" in result.content
    assert "- colour: " in (await plans.call("write_todos", {**CREATE, "colour": 1})).content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


@settings(max_examples=60)
@given(data=st.data())
def test_streamed_calls_end_as_the_same_call_sent_whole(data: st.DataObject) -> None:
    before = data.draw(st.sampled_from([(), (CREATE,)]))
    unicode = {
        "todos": [gemini("Übersetze die Meldung ✅", "blocked"), todo("翻訳を確認する", "pending")]
    }
    args = data.draw(st.sampled_from([*SCRIPT, GEMINI, unicode, broken(GEMINI, "todos")]))
    parts = data.draw(sent_parts(args))
    asyncio.run(streamed_as_plain("write_todos", "write_todos", before, args, "todos", parts))


@settings(max_examples=200)
@given(args=mutated(GEMINI, "todos") | mutated(CANCEL, "todos"))
def test_hostile_calls_are_answered_and_change_nothing(args: Any) -> None:
    async def run() -> None:
        plans, send = session("write_todos")
        await plans.call("write_todos", CREATE)
        await answered_safely(plans, send, "write_todos", args, FIELDS)

    asyncio.run(run())


def test_the_session_takes_it_beside_ours() -> None:
    plans = PlanSession(RecordingSend(), session_id="s", dialects=["llm_plans", "write_todos"])
    assert plans.tool_names == ("create_plan", "update_plan", "remove_plan", "write_todos")


async def test_a_description_kept_beside_the_text_is_held_to_a_steps_length() -> None:
    plans = PlanSession(RecordingSend(), session_id="s", dialects="write_todos")
    limit = plans.limits.max_entry_chars
    todo = {"content": "a", "description": "d" * (limit + 1), "status": "pending"}
    result = await plans.call("write_todos", {"todos": [todo]})
    assert not result.ok
    assert f"- todos[0].description: {limit + 1} characters; at most {limit}." in result.content
    assert dict(plans.plans) == {}
