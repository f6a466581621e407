"""`claude_todos`: Claude Code's TodoWrite calls, as its models send them, into one ACP list."""

from __future__ import annotations

import json
from typing import Any

import pytest
from inline_snapshot import snapshot
from list_checks import CAPS, scripted_updates

from llm_plans import ConfigurationError, PlanSession, StreamError
from llm_plans.testing import RecordingSend


def todo(content: str, status: str, active: str | None = None) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active or f"{content}ing"}


# Written from the shape Claude Code 2.1.330 defines (`TodoWriteInput`): the whole list each time.
CREATE = {
    "todos": [
        todo("Read the failing test", "in_progress", "Reading the failing test"),
        todo("Fix the parser", "pending", "Fixing the parser"),
        todo("Run the suite", "pending", "Running the suite"),
    ]
}
PROGRESS = {
    "todos": [
        todo("Read the failing test", "completed", "Reading the failing test"),
        todo("Fix the parser", "in_progress", "Fixing the parser"),
        todo("Run the suite", "pending", "Running the suite"),
    ]
}
CANCEL = {
    "todos": [
        todo("Read the failing test", "completed", "Reading the failing test"),
        todo("Fix the parser", "completed", "Fixing the parser"),
        todo("Run the suite", "cancelled", "Running the suite"),
    ]
}
DROP = {"todos": [todo("Read the failing test", "completed", "Reading the failing test")]}


def session(form: str, **kwargs: Any) -> tuple[PlanSession, RecordingSend]:
    send = RecordingSend()
    kwargs.setdefault("dialects", "claude_todos")
    plans = PlanSession(send, session_id="s", client_capabilities=CAPS[form], **kwargs)
    return plans, send


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    script = (CREATE, PROGRESS, CANCEL, DROP)
    assert await scripted_updates("claude_todos", form, "TodoWrite", script) == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Reading the failing test",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                    },
                    {
                        "content": "Fix the parser",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                    },
                    {
                        "content": "Fixing the parser",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                    },
                    {
                        "content": "Fix the parser",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                    },
                    {
                        "content": "Cancelled: Run the suite",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                    }
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
                            "content": "Reading the failing test",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                        },
                        {
                            "content": "Fix the parser",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
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
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                        },
                        {
                            "content": "Fixing the parser",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
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
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                        },
                        {
                            "content": "Fix the parser",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"activeForm": "Fixing the parser"}},
                        },
                        {
                            "content": "Cancelled: Run the suite",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"activeForm": "Running the suite"}},
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
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"activeForm": "Reading the failing test"}},
                        }
                    ],
                },
            },
        ]
    ),
}


async def test_the_list_is_one_plan_with_a_stable_id() -> None:
    plans, _ = session("schema", list_id="todos")
    await plans.call("TodoWrite", CREATE)
    await plans.call("TodoWrite", PROGRESS)
    assert list(plans.plans) == ["todos"]
    entries = plans.plans["todos"].entries  # type: ignore[union-attr]
    assert [(e.content, e.status, e.priority) for e in entries] == [
        ("Read the failing test", "completed", "medium"),
        ("Fix the parser", "in_progress", "medium"),
        ("Run the suite", "pending", "medium"),
    ]
    assert entries[1].meta == {"llm_plans": {"activeForm": "Fixing the parser"}}


async def test_a_replacement_keeps_what_an_unchanged_todo_had() -> None:
    """Priority and `_meta` set on a step (by our own tools, or a restore) survive a TodoWrite
    that sends the same text, in whatever position; a todo with new text starts fresh."""
    plans, _ = session("schema", dialects=["llm_plans", "claude_todos"])
    await plans.call("TodoWrite", CREATE)
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 3, "priority": "high"}]})
    reordered = {"todos": [PROGRESS["todos"][2], PROGRESS["todos"][0], todo("Ship", "pending")]}
    assert (await plans.call("TodoWrite", reordered)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.priority) for e in entries] == [
        ("Run the suite", "high"),
        ("Read the failing test", "medium"),
        ("Ship", "medium"),
    ]


async def test_an_empty_list_keeps_the_plan_empty_and_restores() -> None:
    plans, send = session("schema")
    await plans.call("TodoWrite", CREATE)
    result = await plans.call("TodoWrite", {"todos": []})
    assert result.ok
    assert result.content == "Updated the todo list: it is empty now."
    assert send.updates[-1]["plan"]["entries"] == []
    restored, _ = session("schema")
    assert restored.restore(plans.snapshot()) == []
    assert restored.plans["main"].entries == ()  # type: ignore[union-attr]


async def test_older_todo_shapes_and_common_mistakes_are_taken() -> None:
    """Claude Code 2.0 sent an `id` (and a `priority`) per todo instead of `activeForm`; models
    also send the list as a JSON string, or "done" for completed."""
    plans, _ = session("schema")
    older = {"todos": [{"content": "Plan", "status": "in_progress", "id": "1", "priority": "high"}]}
    assert (await plans.call("TodoWrite", older)).ok
    entry = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert (entry.priority, entry.meta) == ("high", {"llm_plans": {"id": "1"}})
    stringly = {"todos": json.dumps([{"content": "Plan", "status": "Done", "activeForm": "x"}])}
    assert (await plans.call("TodoWrite", stringly)).ok
    assert plans.plans["main"].entries[0].status == "completed"  # type: ignore[union-attr]


async def test_bad_arguments_name_the_todos_paths_and_change_nothing() -> None:
    plans, send = session("schema")
    await plans.call("TodoWrite", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {"todos": [{"content": " ", "status": "pending"}, {"content": "x", "status": "maybe"}]}
    result = await plans.call("TodoWrite", bad)
    assert not result.ok
    assert result.content == snapshot("""\
TodoWrite was not applied (2 problems); no plan was changed.
- todos[0].content: sent " "; must not be empty.
- todos[1].status: sent "maybe"; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
Fix the errors and call TodoWrite again.\
""")
    too_many = {
        "todos": [todo(f"step {n}", "pending") for n in range(plans.limits.max_entries + 1)]
    }
    result = await plans.call("TodoWrite", too_many)
    assert not result.ok
    assert f"- todos: {plans.limits.max_entries + 1} steps; at most" in result.content
    long = {"todos": [todo("x" * (plans.limits.max_entry_chars + 1), "pending")]}
    assert "- todos[0].content: " in (await plans.call("TodoWrite", long)).content
    assert "- colour: " in (await plans.call("TodoWrite", {**CREATE, "colour": 1})).content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


async def test_sessions_take_only_the_dialects_they_were_given() -> None:
    plans, _ = session("schema")
    result = await plans.call("create_plan", {"type": "markdown", "content": "x"})
    assert not result.ok
    assert result.content.endswith("Call one of the plan tools instead: TodoWrite.")
    ours = PlanSession(RecordingSend(), session_id="s")
    assert not (await ours.call("TodoWrite", CREATE)).ok
    with pytest.raises(ConfigurationError, match="unknown dialect 'claude'"):
        PlanSession(RecordingSend(), session_id="s", dialects=["claude"])
    with pytest.raises(ConfigurationError, match="list_id"):
        PlanSession(RecordingSend(), session_id="s", dialects="claude_todos", list_id=" ")


async def test_prefixed_names_and_streams_reach_the_same_list() -> None:
    plans, send = session("schema")
    text = json.dumps(CREATE)
    for start in range(0, len(text), 7):
        await plans.feed("call-1", "mcp__plans__TodoWrite", text[start : start + 7])
    result = await plans.finish("call-1")
    plain, _ = session("schema")
    assert result.content == (await plain.call("TodoWrite", CREATE)).content
    assert plans.snapshot() == plain.snapshot()
    assert send.updates[-1]["plan"]["planId"] == "main"


async def test_a_streamed_list_shows_each_todo_as_it_completes() -> None:
    plans, send = session("schema", stream_interval=0)
    todos = [todo(f"Step {n}", "pending") for n in range(5)]
    text = json.dumps({"todos": todos})
    for char in text:
        await plans.feed("call-1", "TodoWrite", char)
    shown = [[e["content"] for e in u["plan"]["entries"]] for u in send.updates]
    assert shown == [[f"Step {n}" for n in range(k)] for k in range(1, 6)]
    assert (await plans.finish("call-1")).ok
    assert len(send.updates) == 5  # the last preview was the whole list: nothing to resend


async def test_answers_never_point_to_tools_the_dialect_lacks() -> None:
    """A todo list's model has no markdown plan to move detail into, and no second call adds
    to what a cut-off one created."""
    plans, _ = session("schema")
    long = {"todos": [todo("x" * (plans.limits.max_entry_chars + 1), "pending", "x")]}
    result = await plans.call("TodoWrite", long)
    assert "Keep steps short." in result.content
    assert "markdown" not in result.content
    cut = json.dumps(CREATE)[:-9]
    result = await plans.call("TodoWrite", cut)
    assert "cut off" in result.content
    assert "create it" not in result.content
    await plans.feed("call-1", "TodoWrite", json.dumps(CREATE))
    assert (
        "Send it again with shorter texts."
        in (await plans.finish("call-1", truncated=True)).content
    )


async def test_a_stream_of_another_tool_is_refused_naming_the_sessions_tools() -> None:
    plans, _ = session("schema")
    with pytest.raises(StreamError, match="its plan tools: TodoWrite"):
        await plans.feed("call-1", "create_plan", "{")


@pytest.mark.parametrize(
    ("tool", "dialect", "first", "blocked", "later"),
    [
        (
            "TodoWrite",
            "claude_todos",
            None,
            {"todos": [todo("Wait for CI", "Blocked")]},
            {"todos": [todo("Wait for CI", "in_progress")]},
        ),
        (
            "todo_write",
            "cursor",
            None,
            {"merge": True, "todos": [{"id": "w", "content": "Wait for CI", "status": "blocked"}]},
            {"merge": True, "todos": [{"id": "w", "status": "in_progress"}]},
        ),
        (
            "TaskUpdate",
            "claude_tasks",
            ("TaskCreate", {"subject": "Wait for CI", "description": ""}),
            {"taskId": "1", "status": "blocked"},
            {"taskId": "1", "status": "in_progress"},
        ),
    ],
)
async def test_blocked_is_pending_with_its_word_kept_in_every_list_dialect(
    tool: str, dialect: str, first: Any, blocked: Any, later: Any
) -> None:
    plans, _ = session("schema", dialects=dialect)
    if first is not None:
        assert (await plans.call(*first)).ok
    assert (await plans.call(tool, blocked)).ok
    [step] = plans.plans["main"].entries  # type: ignore[union-attr]
    assert step.status == "pending"
    assert step.meta is not None
    assert step.meta["llm_plans"]["status"] == "blocked"
    assert (await plans.call(tool, later)).ok
    [step] = plans.plans["main"].entries  # type: ignore[union-attr]
    assert step.status == "in_progress"
    assert "status" not in (step.meta or {}).get("llm_plans", {})


async def test_a_priority_sent_wins_over_the_one_kept() -> None:
    plans, _ = session("schema", dialects=["llm_plans", "claude_todos"])
    await plans.call("TodoWrite", CREATE)
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 1, "priority": "low"}]})
    restated = {"todos": [{**CREATE["todos"][0], "priority": "high"}, CREATE["todos"][1]]}
    assert (await plans.call("TodoWrite", restated)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [e.priority for e in entries] == ["high", "medium"]


async def test_renaming_a_step_drops_the_wording_of_the_old_text() -> None:
    plans, send = session("schema", dialects=["llm_plans", "claude_todos"])
    todo_ = {"content": "Fix parser", "status": "in_progress", "activeForm": "Fixing parser"}
    await plans.call("TodoWrite", {"todos": [todo_]})
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Fixing parser"
    change = {"step": 1, "content": "Rewrite the lexer"}
    assert (await plans.call("update_plan", {"id": "main", "changes": [change]})).ok
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Rewrite the lexer"
    assert plans.plans["main"].entries[0].meta is None  # type: ignore[union-attr]


async def test_a_generated_plan_id_never_takes_the_lists_id() -> None:
    plans, _ = session("schema", dialects=["llm_plans", "claude_todos"], list_id="plan-1")
    created = await plans.call("create_plan", {"type": "items", "entries": [{"content": "mine"}]})
    assert created.plan_id == "plan-2"
    await plans.call("TodoWrite", CREATE)
    assert list(plans.plans) == ["plan-2", "plan-1"]


async def test_a_plan_of_another_kind_at_the_lists_id() -> None:
    """With our tools the model can move it away, and is told how; without them (a restored
    snapshot put it there) nothing else reaches it, so the list replaces it."""
    mixed, _ = session("schema", dialects=["llm_plans", "claude_todos"])
    await mixed.call("create_plan", {"type": "markdown", "id": "main", "content": "# Notes"})
    refused = await mixed.call("TodoWrite", CREATE)
    assert not refused.ok
    assert 'Remove it with remove_plan (id "main") first' in refused.content
    only, send = session("schema")
    assert only.restore(mixed.snapshot()) == []
    assert (await only.call("TodoWrite", CREATE)).ok
    assert send.updates[-1]["plan"]["type"] == "items"
    assert len(only.plans["main"].entries) == 3  # type: ignore[union-attr]
