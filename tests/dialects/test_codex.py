"""`codex`: Codex's update_plan calls, as its models send them, into one ACP list."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot
from list_checks import (
    CAPS,
    STATUSES,
    answered_safely,
    broken,
    mutated,
    scripted_updates,
    sent_parts,
    session,
    streamed_as_plain,
)

from llm_plans import ConfigurationError, PlanSession
from llm_plans.testing import RecordingSend

FIELDS = {"plan": {"step", "status"}, "explanation": set()}


def step(text: str, status: str) -> dict[str, str]:
    return {"step": text, "status": status}


# Written from Codex's `update_plan` shape (codex-rs plan.rs): the whole plan each time, an
# optional explanation, statuses as plain strings.
CREATE = {
    "explanation": "Three steps: find the bug, fix it, prove it.",
    "plan": [
        step("Reproduce the crash", "in_progress"),
        step("Patch the parser", "pending"),
        step("Add a regression test", "pending"),
        step("Update the changelog", "pending"),
    ],
}
PROGRESS = {
    "plan": [
        step("Reproduce the crash", "completed"),
        step("Patch the parser", "in_progress"),
        step("Add a regression test", "pending"),
        step("Update the changelog", "pending"),
    ]
}
CANCEL = {
    "explanation": "The changelog is generated at release.",
    "plan": [
        step("Reproduce the crash", "completed"),
        step("Patch the parser", "completed"),
        step("Add a regression test", "in_progress"),
        step("Update the changelog", "cancelled"),
    ],
}
COMPLETE = {
    "plan": [
        step("Reproduce the crash", "completed"),
        step("Patch the parser", "completed"),
        step("Add a regression test", "completed"),
        step("Update the changelog", "cancelled"),
    ]
}
DROP = {"plan": COMPLETE["plan"][:3]}
UNICODE = {
    "plan": [step("Übersetze die Meldung ✅", "in_progress"), step("翻訳を確認する", "pending")]
}
SCRIPT: tuple[dict[str, Any], ...] = (CREATE, PROGRESS, CANCEL, COMPLETE, DROP)


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    assert await scripted_updates("codex", form, "update_plan", SCRIPT) == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Reproduce the crash",
                        "priority": "medium",
                        "status": "in_progress",
                    },
                    {"content": "Patch the parser", "priority": "medium", "status": "pending"},
                    {"content": "Add a regression test", "priority": "medium", "status": "pending"},
                    {"content": "Update the changelog", "priority": "medium", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "medium", "status": "completed"},
                    {"content": "Patch the parser", "priority": "medium", "status": "in_progress"},
                    {"content": "Add a regression test", "priority": "medium", "status": "pending"},
                    {"content": "Update the changelog", "priority": "medium", "status": "pending"},
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "medium", "status": "completed"},
                    {"content": "Patch the parser", "priority": "medium", "status": "completed"},
                    {
                        "content": "Add a regression test",
                        "priority": "medium",
                        "status": "in_progress",
                    },
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "medium",
                        "status": "completed",
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "medium", "status": "completed"},
                    {"content": "Patch the parser", "priority": "medium", "status": "completed"},
                    {
                        "content": "Add a regression test",
                        "priority": "medium",
                        "status": "completed",
                    },
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "medium",
                        "status": "completed",
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Reproduce the crash", "priority": "medium", "status": "completed"},
                    {"content": "Patch the parser", "priority": "medium", "status": "completed"},
                    {
                        "content": "Add a regression test",
                        "priority": "medium",
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
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {"content": "Patch the parser", "priority": "medium", "status": "pending"},
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {
                            "content": "Update the changelog",
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
                        {
                            "content": "Reproduce the crash",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Patch the parser",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "pending",
                        },
                        {
                            "content": "Update the changelog",
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
                        {
                            "content": "Reproduce the crash",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Patch the parser",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "in_progress",
                        },
                        {
                            "content": "Cancelled: Update the changelog",
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
                        {
                            "content": "Reproduce the crash",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Patch the parser",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Cancelled: Update the changelog",
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
                        {
                            "content": "Reproduce the crash",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Patch the parser",
                            "priority": "medium",
                            "status": "completed",
                        },
                        {
                            "content": "Add a regression test",
                            "priority": "medium",
                            "status": "completed",
                        },
                    ],
                },
            },
        ]
    ),
}


async def test_results_say_what_the_plan_is_now() -> None:
    plans, _ = session("codex")
    texts = [(await plans.call("update_plan", args)).content for args in SCRIPT]
    assert texts == snapshot(
        [
            """\
Updated the plan (4 items): 1 in progress, 3 pending.
In progress: "Reproduce the crash".
Next: "Patch the parser".\
""",
            """\
Updated the plan (4 items): 1 completed, 1 in progress, 2 pending.
In progress: "Patch the parser".
Next: "Add a regression test".\
""",
            """\
Updated the plan (4 items): 2 completed, 1 in progress, 1 cancelled.
In progress: "Add a regression test".\
""",
            "Updated the plan (4 items): 3 completed, 1 cancelled.",
            "Updated the plan (3 items): 3 completed.",
        ]
    )


async def test_the_explanation_is_taken_and_not_kept() -> None:
    """An ACP plan has no place a client shows it: the same plan with or without one."""
    with_it, with_send = session("codex")
    without, without_send = session("codex")
    assert (await with_it.call("update_plan", CREATE)).ok
    bare = {"plan": CREATE["plan"]}
    assert (await without.call("update_plan", bare)).ok
    assert with_it.snapshot() == without.snapshot()
    assert with_send.sent == without_send.sent
    assert (await with_it.call("update_plan", {**bare, "explanation": None})).ok
    before = with_it.snapshot()
    result = await with_it.call("update_plan", {**bare, "explanation": ["why"]})
    assert not result.ok
    assert '- explanation: sent ["why"]; expected a string.' in result.content
    assert with_it.snapshot() == before


async def test_codex_and_our_tools_cannot_share_a_session() -> None:
    with pytest.raises(ConfigurationError, match="'update_plan'"):
        PlanSession(RecordingSend(), session_id="s", dialects=["llm_plans", "codex"])
    plans, _ = session("codex", dialects=["codex", "claude_todos"])
    assert plans.tool_names == ("update_plan", "TodoWrite")
    result = await plans.call("create_plan", {"type": "items", "entries": ["x"]})
    assert result.content.endswith("Call one of the plan tools instead: update_plan, TodoWrite.")


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("done", "completed"),
        ("Completed", "completed"),
        ("in progress", "in_progress"),
        ("In-Progress", "in_progress"),
        ("canceled", "cancelled"),
        ("todo", "pending"),
    ],
)
async def test_status_words_models_write_are_taken(sent: str, stored: str) -> None:
    plans, _ = session("codex")
    assert (await plans.call("update_plan", {"plan": [step("Build", sent)]})).ok
    assert plans.plans["main"].entries[0].status == stored  # type: ignore[union-attr]


@settings(max_examples=100)
@given(status=st.text(max_size=12))
def test_any_other_status_is_rejected_with_the_accepted_values(status: str) -> None:
    async def run() -> None:
        plans, send = session("codex")
        await plans.call("update_plan", CREATE)
        before, sent = plans.snapshot(), len(send.sent)
        args = {"plan": [step("Build", "pending"), step("Ship", status)]}
        result = await plans.call("update_plan", args)
        if result.ok:
            assert plans.plans["main"].entries[1].status in STATUSES  # type: ignore[union-attr]
            return
        assert (plans.snapshot(), len(send.sent)) == (before, sent)
        assert "- plan[1].status: sent " in result.content
        accepted = '"pending", "in_progress", "completed", "cancelled" or "blocked".'
        assert f"accepted values: {accepted}" in result.content

    asyncio.run(run())


async def test_a_replacement_keeps_what_an_unchanged_step_had() -> None:
    """A plan restored with priorities and `_meta` (written by our tools before) keeps them
    for every step whose text Codex sends unchanged."""
    ours = PlanSession(RecordingSend(), session_id="s")
    entries = [
        {"content": "Reproduce the crash", "priority": "high", "status": "completed"},
        {"content": "Patch the parser", "priority": "low", "_meta": {"ticket": "BUG-7"}},
    ]
    await ours.call("create_plan", {"type": "items", "id": "main", "entries": entries})
    plans, _ = session("codex")
    assert plans.restore(ours.snapshot()) == []
    assert (await plans.call("update_plan", PROGRESS)).ok
    got = [(e.content, e.priority, e.meta) for e in plans.plans["main"].entries]  # type: ignore[union-attr]
    assert got == [
        ("Reproduce the crash", "high", None),
        ("Patch the parser", "low", {"ticket": "BUG-7"}),
        ("Add a regression test", "medium", None),
        ("Update the changelog", "medium", None),
    ]


async def test_an_empty_plan_keeps_the_list_empty() -> None:
    plans, send = session("codex", list_id="codex-plan")
    await plans.call("update_plan", CREATE)
    result = await plans.call("update_plan", {"plan": []})
    assert result.content == "Updated the plan: it is empty now."
    assert send.updates[-1] == {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": "codex-plan", "entries": []},
    }


async def test_bad_arguments_name_the_plan_paths_and_change_nothing() -> None:
    plans, send = session("codex")
    await plans.call("update_plan", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {"plan": [{"step": "", "status": "pending"}, {"status": "blocked"}, {"text": "x"}]}
    result = await plans.call("update_plan", bad)
    assert result.content == snapshot("""\
update_plan was not applied (5 problems); no plan was changed.
- plan[0].step: sent ""; must not be empty.
- plan[1].step: this field is required.
- plan[2].step: this field is required.
- plan[2].status: this field is required.
- plan[2].text: sent "x"; not a known field. Accepted fields: step, status.
Fix the errors and call update_plan again.\
""")
    too_many = {"plan": [step(f"Step {n}", "pending") for n in range(plans.limits.max_entries + 1)]}
    result = await plans.call("update_plan", too_many)
    assert f"- plan: {plans.limits.max_entries + 1} steps; at most" in result.content
    long = {"plan": [step("x" * (plans.limits.max_entry_chars + 1), "pending")]}
    result = await plans.call("update_plan", long)
    assert f"- plan[0].step: {plans.limits.max_entry_chars + 1} characters" in result.content
    assert "- colour: " in (await plans.call("update_plan", {**CREATE, "colour": 1})).content
    # Our own arrays may be null; Codex's plan may not, and the problem does not say it may.
    for value in ("not a plan", None):
        result = await plans.call("update_plan", {"plan": value})
        assert f"- plan: sent {json.dumps(value)}; expected an array.\n" in result.content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


async def test_a_call_as_codex_sends_it_through_the_responses_api() -> None:
    """Codex calls its tools through OpenAI's Responses API: a `function_call` item with the
    arguments as JSON text."""
    plans, _ = session("codex")
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "update_plan",
        "arguments": json.dumps(CREATE),
        "status": "completed",
    }
    output = await plans.handle(item)
    assert output is not None
    assert output["type"] == "function_call_output"
    assert output["call_id"] == "call_1"
    assert output["output"].startswith("Updated the plan (4 items)")


@settings(max_examples=60)
@given(data=st.data())
def test_streamed_calls_end_as_the_same_call_sent_whole(data: st.DataObject) -> None:
    before = data.draw(st.sampled_from([(), (CREATE,)]))
    args = data.draw(st.sampled_from([*SCRIPT, UNICODE, broken(CANCEL, "plan")]))
    parts = data.draw(sent_parts(args))
    asyncio.run(streamed_as_plain("codex", "update_plan", before, args, "plan", parts))


@settings(max_examples=200)
@given(args=mutated(CANCEL, "plan"))
def test_hostile_calls_are_answered_and_change_nothing(args: Any) -> None:
    async def run() -> None:
        plans, send = session("codex")
        await plans.call("update_plan", CREATE)
        await answered_safely(plans, send, "update_plan", args, FIELDS)

    asyncio.run(run())


async def test_a_blocked_step_is_pending_and_keeps_its_own_status() -> None:
    plans = PlanSession(RecordingSend(), session_id="s", dialects="codex")
    result = await plans.call(
        "update_plan", {"plan": [{"step": "Wait for CI", "status": "blocked"}]}
    )
    assert result.ok, result.content
    [entry] = plans.plans["main"].entries  # type: ignore[union-attr]
    assert (entry.status, entry.meta) == ("pending", {"llm_plans": {"status": "blocked"}})
