"""`cursor`: Cursor's todo_write calls, as its models send them, into one ACP list: a whole
list with `merge: false`, updates by the model's own ids with `merge: true`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
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
from spec_shapes import check

from llm_plans import PlanSession, tools
from llm_plans.testing import RecordingSend

FIELDS = {"todos": {"id", "content", "status"}, "merge": set()}


def todo(todo_id: str, content: str | None = None, status: str | None = None) -> dict[str, str]:
    out = {"id": todo_id}
    if content is not None:
        out["content"] = content
    if status is not None:
        out["status"] = status
    return out


# Written from Cursor's `todo_write` shape (public tool-definition dumps): the model's own ids;
# `merge: false` sends the list, `merge: true` the todos that change.
CREATE: dict[str, Any] = {
    "merge": False,
    "todos": [
        todo("1", "Find where sessions expire", "in_progress"),
        todo("2", "Refresh tokens before expiry", "pending"),
        todo("3", "Add a test for the refresh", "pending"),
        todo("4", "Document the new setting", "pending"),
    ],
}
PROGRESS = {
    "merge": True,
    "todos": [todo("1", status="completed"), todo("2", status="in_progress")],
}
CANCEL = {
    "merge": True,
    "todos": [
        todo("2", "Refresh tokens before expiry", "completed"),
        todo("3", "Add a test for the refresh", "in_progress"),
        todo("4", "Document the new setting", "cancelled"),
    ],
}
COMPLETE = {"merge": True, "todos": [todo("3", status="completed")]}
DROP = {"merge": False, "todos": [todo("1"), todo("2"), todo("3")]}
SCRIPT: tuple[dict[str, Any], ...] = (CREATE, PROGRESS, CANCEL, COMPLETE, DROP)


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    assert await scripted_updates("cursor", form, "todo_write", SCRIPT) == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Find where sessions expire",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Refresh tokens before expiry",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Add a test for the refresh",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Document the new setting",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Find where sessions expire",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Refresh tokens before expiry",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Add a test for the refresh",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Document the new setting",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Find where sessions expire",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Refresh tokens before expiry",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Add a test for the refresh",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Cancelled: Document the new setting",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Find where sessions expire",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Refresh tokens before expiry",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Add a test for the refresh",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Cancelled: Document the new setting",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Find where sessions expire",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Refresh tokens before expiry",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Add a test for the refresh",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "3"}},
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
                            "content": "Find where sessions expire",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Refresh tokens before expiry",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Add a test for the refresh",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Document the new setting",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "4"}},
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
                            "content": "Find where sessions expire",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Refresh tokens before expiry",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Add a test for the refresh",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Document the new setting",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "4"}},
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
                            "content": "Find where sessions expire",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Refresh tokens before expiry",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Add a test for the refresh",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Cancelled: Document the new setting",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "4"}},
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
                            "content": "Find where sessions expire",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Refresh tokens before expiry",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Add a test for the refresh",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Cancelled: Document the new setting",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "4"}},
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
                            "content": "Find where sessions expire",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Refresh tokens before expiry",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Add a test for the refresh",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                    ],
                },
            },
        ]
    ),
}


async def test_results_say_what_the_list_is_now() -> None:
    plans, _ = session("cursor")
    texts = [(await plans.call("todo_write", args)).content for args in SCRIPT]
    assert texts == snapshot(
        [
            """\
Updated the todo list (4 items): 1 in progress, 3 pending.
In progress: "Find where sessions expire".
Next: "Refresh tokens before expiry".\
""",
            """\
Updated the todo list (4 items): 1 completed, 1 in progress, 2 pending.
In progress: "Refresh tokens before expiry".
Next: "Add a test for the refresh".\
""",
            """\
Updated the todo list (4 items): 2 completed, 1 in progress, 1 cancelled.
In progress: "Add a test for the refresh".\
""",
            "Updated the todo list (4 items): 3 completed, 1 cancelled.",
            "Updated the todo list (3 items): 3 completed.",
        ]
    )


def listed(plans: PlanSession) -> list[tuple[str, str, Any]]:
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    return [(e.content, e.status, (e.meta or {}).get("llm_plans", {}).get("id")) for e in entries]


async def test_a_merge_updates_by_id_in_place_and_adds_new_ids_at_the_end() -> None:
    plans, _ = session("cursor")
    await plans.call("todo_write", CREATE)
    merge = {
        "merge": True,
        "todos": [todo("5", "Ship it"), todo("2", "Refresh tokens early", "in_progress")],
    }
    assert (await plans.call("todo_write", merge)).ok
    assert listed(plans) == [
        ("Find where sessions expire", "in_progress", "1"),
        ("Refresh tokens early", "in_progress", "2"),
        ("Add a test for the refresh", "pending", "3"),
        ("Document the new setting", "pending", "4"),
        ("Ship it", "pending", "5"),
    ]


async def test_one_todo_is_a_whole_call() -> None:
    """Cursor's definition asks for two todos at least; a lone status change is taken."""
    plans, _ = session("cursor")
    await plans.call("todo_write", CREATE)
    assert (await plans.call("todo_write", COMPLETE)).ok
    assert (await plans.call("todo_write", {"merge": False, "todos": [todo("9", "Only")]})).ok
    assert listed(plans) == [("Only", "pending", "9")]


async def test_an_empty_merge_changes_nothing_and_an_empty_list_empties_it() -> None:
    plans, send = session("cursor")
    await plans.call("todo_write", CREATE)
    before = plans.snapshot()
    assert (await plans.call("todo_write", {"merge": True, "todos": []})).ok
    assert plans.snapshot() == before
    result = await plans.call("todo_write", {"merge": False, "todos": []})
    assert result.content == "Updated the todo list: it is empty now."
    assert send.updates[-1]["plan"]["entries"] == []
    assert (await plans.call("todo_write", {"merge": True, "todos": [todo("1", "Again")]})).ok
    assert listed(plans) == [("Again", "pending", "1")]


async def test_ids_survive_a_restore_and_merges_go_on() -> None:
    plans, _ = session("cursor")
    await plans.call("todo_write", CREATE)
    again, _ = session("cursor")
    assert again.restore(plans.snapshot()) == []
    assert (await again.call("todo_write", PROGRESS)).ok
    assert (await plans.call("todo_write", PROGRESS)).ok
    assert again.snapshot() == plans.snapshot()


async def test_a_number_id_is_its_decimal_text() -> None:
    plans, _ = session("cursor")
    await plans.call("todo_write", {"merge": False, "todos": [{"id": 7, "content": "A"}]})
    assert (
        await plans.call("todo_write", {"merge": True, "todos": [todo("7", status="completed")]})
    ).ok
    assert listed(plans) == [("A", "completed", "7")]


async def test_an_update_keeps_priority_and_meta_and_drops_what_no_longer_holds() -> None:
    """A merge keeps what the list had for a todo (a priority set with our tools, another
    dialect's `_meta`), but not the in-progress wording of a text it replaces."""
    plans, _ = session("cursor", dialects=["llm_plans", "claude_todos", "cursor"])
    todos = [
        {"content": "Build", "status": "in_progress", "activeForm": "Building", "id": "b"},
        {"content": "Test", "status": "pending", "activeForm": "Testing", "id": "t"},
        {"content": "Untracked", "status": "pending", "activeForm": "Tracking"},
    ]
    assert (await plans.call("TodoWrite", {"todos": todos})).ok
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 1, "priority": "high"}]})
    merge = {"merge": True, "todos": [todo("b", status="completed"), todo("t", "Test it all")]}
    assert (await plans.call("todo_write", merge)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.status, e.priority, e.meta) for e in entries] == [
        ("Build", "completed", "high", {"llm_plans": {"activeForm": "Building", "id": "b"}}),
        ("Test it all", "pending", "medium", {"llm_plans": {"id": "t"}}),
        ("Untracked", "pending", "medium", {"llm_plans": {"activeForm": "Tracking"}}),
    ]


async def test_another_dialects_status_stays_until_the_status_changes() -> None:
    """A blocked todo (pending in ACP, `blocked` kept in `_meta`) that a merge sends as
    pending again is still blocked; sent in progress, it is not any more."""
    blocked = {"llm_plans": {"id": "w", "status": "blocked"}}
    entries = [{"content": "Wait for CI", "status": "pending", "_meta": blocked}]
    plans, _ = session("cursor")
    items = {"type": "items", "id": "main", "entries": entries}
    assert plans.restore({"version": 1, "next_number": 1, "plans": [items]}) == []
    assert (
        await plans.call("todo_write", {"merge": True, "todos": [todo("w", status="pending")]})
    ).ok
    assert plans.plans["main"].entries[0].meta == blocked  # type: ignore[union-attr]
    assert (
        await plans.call("todo_write", {"merge": True, "todos": [todo("w", status="in_progress")]})
    ).ok
    assert plans.plans["main"].entries[0].meta == {"llm_plans": {"id": "w"}}  # type: ignore[union-attr]


async def test_a_new_id_without_content_is_rejected_by_its_path() -> None:
    plans, send = session("cursor")
    await plans.call("todo_write", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    merge = {"merge": True, "todos": [todo("1", status="completed"), todo("7", status="pending")]}
    result = await plans.call("todo_write", merge)
    assert result.content == snapshot("""\
todo_write was not applied (1 problem); no plan was changed.
- todos[1].content: required: the list has no todo with id "7", so this one is new.
Ids in the list: "1", "2", "3", "4".
Fix the errors and call todo_write again.\
""")
    replace = {"merge": False, "todos": [todo("x")]}
    empty, _ = session("cursor")
    assert (await empty.call("todo_write", replace)).content == snapshot("""\
todo_write was not applied (1 problem); no plan was changed.
- todos[0].content: required: the list has no todo with id "x", so this one is new.
The list has no todos with ids yet.
Fix the errors and call todo_write again.\
""")
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


async def test_bad_arguments_name_the_todos_paths_and_change_nothing() -> None:
    plans, send = session("cursor")
    await plans.call("todo_write", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {
        "merge": "yes please",
        "todos": [
            todo("1", "A", "waiting"),
            {"id": True, "content": ""},
            {"content": "x", "done": 1},
        ],
    }
    assert (await plans.call("todo_write", bad)).content == snapshot("""\
todo_write was not applied (6 problems); no plan was changed.
- merge: sent "yes please"; expected true or false.
- todos[0].status: sent "waiting"; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
- todos[1].id: sent true; expected a string.
- todos[1].content: sent ""; must not be empty.
- todos[2].id: this field is required.
- todos[2].done: sent 1; not a known field. Accepted fields: id, content, status.
Fix the errors and call todo_write again.\
""")
    twice = {"merge": True, "todos": [todo("2", status="completed"), todo("2", "Again")]}
    assert (await plans.call("todo_write", twice)).content == snapshot("""\
todo_write was not applied (1 problem); no plan was changed.
- todos[1].id: sent "2"; todos[0] has this id too; send each todo once.
Fix the errors and call todo_write again.\
""")
    assert (
        "- merge: this field is required."
        in (await plans.call("todo_write", {"todos": CREATE["todos"]})).content
    )
    limit = plans.limits.max_entries
    added = {"merge": True, "todos": [todo(f"n{k}", f"New {k}") for k in range(limit - 3)]}
    result = await plans.call("todo_write", added)
    assert f"- todos: {limit + 1} steps; at most {limit}" in result.content
    long = "x" * (plans.limits.max_entry_chars + 1)
    # The third todo of the call, added as the list's fifth: named by its place in the call.
    merge = {"merge": True, "todos": [todo("1", "Short"), todo("2"), todo("new", long)]}
    result = await plans.call("todo_write", merge)
    assert f"- todos[2].content: {len(long)} characters" in result.content
    long_id = "i" * (plans.limits.max_id_length + 1)
    result = await plans.call("todo_write", {"merge": True, "todos": [todo(long_id, "A")]})
    assert f'- todos[0].id: sent "{long_id}"' in result.content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


async def test_a_chat_completions_call_with_a_prefixed_name_reaches_the_list() -> None:
    """Cursor's models call through OpenAI-compatible chat APIs; an MCP host prefixes names."""
    plans, _ = session("cursor")
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "mcp__plans__todo_write", "arguments": json.dumps(CREATE)},
    }
    output = await plans.handle(call)
    assert output is not None
    assert output["tool_call_id"] == "call_1"
    assert output["content"].startswith("Updated the todo list (4 items)")
    assert listed(plans)[0] == ("Find where sessions expire", "in_progress", "1")


@settings(max_examples=60)
@given(data=st.data())
def test_streamed_calls_end_as_the_same_call_sent_whole(data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(SCRIPT) - 1))
    before = data.draw(st.sampled_from([SCRIPT[:index], ()]))
    unicode = {"merge": True, "todos": [todo("ü", "Übersetze ✅"), todo("1", "翻訳を確認する")]}
    args = data.draw(st.sampled_from([SCRIPT[index], unicode, broken(SCRIPT[index], "todos")]))
    parts = data.draw(sent_parts(args))
    asyncio.run(streamed_as_plain("cursor", "todo_write", before, args, "todos", parts))


@settings(max_examples=200)
@given(args=mutated(CANCEL, "todos") | mutated(CREATE, "todos"))
def test_hostile_calls_are_answered_and_change_nothing(args: Any) -> None:
    async def run() -> None:
        plans, send = session("cursor")
        await plans.call("todo_write", CREATE)
        await answered_safely(plans, send, "todo_write", args, FIELDS)

    asyncio.run(run())


# ---- merges and replacements in any order, against a reference list ------------------------

IDS = st.sampled_from(["1", "2", "3", "a", "b"])
TEXTS = st.sampled_from(["Plan", "Build", "Test", "Ship", "Build"])


@st.composite
def sent_todos(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(IDS, max_size=4, unique=True))
    if ids and not draw(st.integers(0, 7)):
        ids.append(draw(st.sampled_from(ids)))  # now and then an id sent twice: rejected
    out = []
    for todo_id in ids:
        item: dict[str, Any] = {"id": todo_id}
        if draw(st.integers(0, 3)):
            item["content"] = draw(TEXTS)
        if draw(st.integers(0, 3)):
            item["status"] = draw(st.sampled_from(STATUSES))
        out.append(item)
    return out


MIXED = ["cursor", "write_todos", "claude_todos"]


@st.composite
def whole_lists(draw: st.DrawFn, with_ids: bool) -> list[dict[str, Any]]:
    """Todos of `write_todos` (no ids) or of Claude Code 2.0's TodoWrite (ids, repeats too)."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        item: dict[str, Any] = {"content": draw(TEXTS), "status": draw(st.sampled_from(STATUSES))}
        if with_ids and draw(st.integers(0, 3)):
            item["id"] = draw(st.sampled_from(["1", "2"]))  # repeats are Claude's to send
        out.append(item)
    return out


class MixedLists(RuleBasedStateMachine):
    """One session taking cursor, write_todos and TodoWrite calls in any order, restored at
    any point: the list is always the reference list (what each accepted call means, nothing
    from a rejected one). Cursor merges reach the todos of another dialect only by the ids
    that dialect kept, and leave the ones without an id where they are."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.send = RecordingSend()
        self.plans = PlanSession(self.send, session_id="s", dialects=MIXED)
        self.expected: list[dict[str, Any]] | None = None  # content, status, id (or None)

    def teardown(self) -> None:
        self.loop.close()

    def run(self, tool: str, args: dict[str, Any], valid: bool) -> bool:
        sent = len(self.send.sent)
        result = self.loop.run_until_complete(self.plans.call(tool, args))
        assert result.ok == valid, result.content
        if not valid:
            assert len(self.send.sent) == sent  # a rejected call sends nothing
        return valid

    def cursor(self, merge: bool, todos: list[dict[str, Any]]) -> None:
        current = self.expected or []
        ids = [t["id"] for t in todos]
        known: dict[str, int] = {}
        for position, item in enumerate(current):
            if item["id"] is not None:
                known.setdefault(item["id"], position)  # the first todo with an id answers
        valid = len(set(ids)) == len(ids) and all("content" in t or t["id"] in known for t in todos)
        if not self.run("todo_write", {"merge": merge, "todos": todos}, valid):
            return

        def written(t: dict[str, Any]) -> dict[str, Any]:
            old = current[known[t["id"]]] if t["id"] in known else {"status": "pending"}
            return {
                "content": t.get("content", old.get("content")),
                "status": t.get("status", old["status"]),
                "id": t["id"],
            }

        if merge:
            out = [dict(item) for item in current]
            for t in todos:
                if t["id"] in known:
                    out[known[t["id"]]] = written(t)
                else:
                    out.append(written(t))
            self.expected = out
        else:
            self.expected = [written(t) for t in todos]

    @rule(todos=sent_todos())
    def replace(self, todos: list[dict[str, Any]]) -> None:
        self.cursor(False, todos)

    @rule(todos=sent_todos())
    def merge(self, todos: list[dict[str, Any]]) -> None:
        self.cursor(True, todos)

    @rule(todos=whole_lists(with_ids=False))
    def write_todos(self, todos: list[dict[str, Any]]) -> None:
        self.run("write_todos", {"todos": todos}, True)
        self.expected = [{**t, "id": None} for t in todos]

    @rule(todos=whole_lists(with_ids=True))
    def todo_write_with_ids(self, todos: list[dict[str, Any]]) -> None:
        self.run("TodoWrite", {"todos": todos}, True)
        self.expected = [{"id": None, **t} for t in todos]

    @rule()
    def restore(self) -> None:
        again = PlanSession(self.send, session_id="s", dialects=MIXED)
        assert again.restore(self.plans.snapshot()) == []
        self.plans = again

    @invariant()
    def the_list_is_the_reference(self) -> None:
        if self.expected is None:
            assert "main" not in self.plans.plans
            return
        got = [{"content": c, "status": s, "id": i} for c, s, i in listed(self.plans)]
        assert got == self.expected
        if self.send.sent:  # a session without capabilities sends the legacy form
            check("legacy", self.send.sent[-1])


TestMixedLists = MixedLists.TestCase
TestMixedLists.settings = settings(max_examples=100, stateful_step_count=20)


async def test_a_strict_model_keeps_a_todos_text_with_null() -> None:
    """Strict mode sends every field: null content is how it leaves a text as it is."""
    schema = tools.schema("todo_write", all_required=True, dialect="cursor")
    assert schema["properties"]["todos"]["items"]["properties"]["content"]["type"] == [
        "string",
        "null",
    ]
    plans, _ = session("cursor")
    await plans.call("todo_write", CREATE)
    merge = {"merge": True, "todos": [{"id": "1", "content": None, "status": "completed"}]}
    assert (await plans.call("todo_write", merge)).ok
    first = plans.plans["main"].entries[0]  # type: ignore[union-attr]
    assert first.status == "completed"
    assert first.content == CREATE["todos"][0]["content"]
