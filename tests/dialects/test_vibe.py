"""`vibe`: Mistral Vibe's todo calls, as its models send them and as Vibe's ACP agent reports
them (`rawInput`), into one ACP list: `action: "write"` replaces it (ids and priorities kept),
`action: "read"` answers with it and changes nothing."""

from __future__ import annotations

import asyncio
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

FIELDS = {"todos": {"id", "content", "status", "priority"}, "action": set()}


def todo(todo_id: str, content: str, status: str, priority: str = "medium") -> dict[str, str]:
    return {"id": todo_id, "content": content, "status": status, "priority": priority}


def write(*todos: dict[str, Any]) -> dict[str, Any]:
    return {"action": "write", "todos": list(todos)}


READ = {"action": "read"}

# Written from Mistral Vibe 3.0.3's `todo` (vibe/core/tools/builtins/todo.py): the model's own
# ids, the whole list on each write, status and priority per todo.
CREATE = write(
    todo("1", "Read the failing test", "in_progress", "high"),
    todo("2", "Fix the date parsing", "pending", "high"),
    todo("3", "Run the whole suite", "pending"),
    todo("4", "Tidy the imports", "pending", "low"),
)
PROGRESS = write(
    todo("1", "Read the failing test", "completed", "high"),
    todo("2", "Fix the date parsing", "in_progress", "high"),
    todo("3", "Run the whole suite", "pending"),
    todo("4", "Tidy the imports", "pending", "low"),
)
CANCEL = write(
    todo("1", "Read the failing test", "completed", "high"),
    todo("2", "Fix the date parsing", "completed", "high"),
    todo("3", "Run the whole suite", "in_progress", "high"),  # raised now
    todo("4", "Tidy the imports", "cancelled", "low"),
)
COMPLETE = write(
    todo("1", "Read the failing test", "completed", "high"),
    todo("2", "Fix the date parsing", "completed", "high"),
    todo("3", "Run the whole suite", "completed", "high"),
    todo("4", "Tidy the imports", "cancelled", "low"),
)
SCRIPT: tuple[dict[str, Any], ...] = (CREATE, PROGRESS, READ, CANCEL, COMPLETE)

# A todo `tool_call(_update)`'s `rawInput` as Vibe's ACP agent sends it (the effect's input,
# `model_dump`ed: every field present, `todos` null for a read).
RAW_WRITE = {
    "action": "write",
    "todos": [{"id": "1", "content": "Read the code", "status": "in_progress", "priority": "high"}],
}
RAW_READ = {"action": "read", "todos": None}


def listed(plans: PlanSession) -> list[tuple[str, str, str, Any]]:
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    return [
        (e.content, e.status, e.priority, (e.meta or {}).get("llm_plans", {}).get("id"))
        for e in entries
    ]


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    assert await scripted_updates("vibe", form, "todo", SCRIPT) == GOLDEN[form]


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "high",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Fix the date parsing",
                        "priority": "high",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Run the whole suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Tidy the imports",
                        "priority": "low",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Fix the date parsing",
                        "priority": "high",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Run the whole suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Tidy the imports",
                        "priority": "low",
                        "status": "pending",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Fix the date parsing",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Run the whole suite",
                        "priority": "high",
                        "status": "in_progress",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Cancelled: Tidy the imports",
                        "priority": "low",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "4"}},
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "1"}},
                    },
                    {
                        "content": "Fix the date parsing",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "2"}},
                    },
                    {
                        "content": "Run the whole suite",
                        "priority": "high",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "3"}},
                    },
                    {
                        "content": "Cancelled: Tidy the imports",
                        "priority": "low",
                        "status": "completed",
                        "_meta": {"llm_plans": {"id": "4"}},
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
                            "content": "Read the failing test",
                            "priority": "high",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Fix the date parsing",
                            "priority": "high",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Run the whole suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Tidy the imports",
                            "priority": "low",
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
                            "content": "Read the failing test",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Fix the date parsing",
                            "priority": "high",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Run the whole suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Tidy the imports",
                            "priority": "low",
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
                            "content": "Read the failing test",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Fix the date parsing",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Run the whole suite",
                            "priority": "high",
                            "status": "in_progress",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Cancelled: Tidy the imports",
                            "priority": "low",
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
                            "content": "Read the failing test",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "1"}},
                        },
                        {
                            "content": "Fix the date parsing",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "2"}},
                        },
                        {
                            "content": "Run the whole suite",
                            "priority": "high",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "3"}},
                        },
                        {
                            "content": "Cancelled: Tidy the imports",
                            "priority": "low",
                            "status": "completed",
                            "_meta": {"llm_plans": {"id": "4"}},
                        },
                    ],
                },
            },
        ]
    ),
}


async def test_results_say_what_the_list_is_now() -> None:
    plans, _ = session("vibe")
    texts = [(await plans.call("todo", args)).content for args in SCRIPT]
    assert texts == snapshot(
        [
            """\
Updated the todo list (4 items): 1 in progress, 3 pending.
In progress: "Read the failing test".
Next: "Fix the date parsing".\
""",
            """\
Updated the todo list (4 items): 1 completed, 1 in progress, 2 pending.
In progress: "Fix the date parsing".
Next: "Run the whole suite".\
""",
            """\
Retrieved 4 todos:
{"id": "1", "content": "Read the failing test", "status": "completed", "priority": "high"}
{"id": "2", "content": "Fix the date parsing", "status": "in_progress", "priority": "high"}
{"id": "3", "content": "Run the whole suite", "status": "pending", "priority": "medium"}
{"id": "4", "content": "Tidy the imports", "status": "pending", "priority": "low"}\
""",
            """\
Updated the todo list (4 items): 2 completed, 1 in progress, 1 cancelled.
In progress: "Run the whole suite".\
""",
            "Updated the todo list (4 items): 3 completed, 1 cancelled.",
        ]
    )


async def test_vibes_raw_input_becomes_the_plan_with_its_ids_and_priorities() -> None:
    """What the ACP proxy does with a todo call Vibe reports: `rawInput` as sent, through
    `call` and through `mirror` alike; a read changes and sends nothing."""
    for how in ("call", "mirror"):
        plans, send = session("vibe")
        result = await getattr(plans, how)("todo", RAW_WRITE)
        assert result.ok, result.content
        assert plans.snapshot()["plans"][0]["entries"] == [
            {
                "content": "Read the code",
                "priority": "high",
                "status": "in_progress",
                "_meta": {"llm_plans": {"id": "1"}},
            }
        ]
        (params,) = send.sent
        check("schema", params)
        before = plans.snapshot()
        read = await getattr(plans, how)("todo", RAW_READ)
        assert (read.ok, read.content) == (
            True,
            'Retrieved 1 todo:\n{"id": "1", "content": "Read the code", "status": '
            '"in_progress", "priority": "high"}',
        )
        assert (plans.snapshot(), len(send.sent)) == (before, 1)


async def test_a_read_shows_each_todo_as_a_write_restates_it() -> None:
    plans, send = session("vibe", dialects=["vibe", "write_todos"])
    assert (await plans.call("todo", READ)).content == "Retrieved 0 todos: the list is empty."
    assert (await plans.call("todo", CANCEL)).ok
    assert (await plans.call("todo", READ)).content == snapshot("""\
Retrieved 4 todos:
{"id": "1", "content": "Read the failing test", "status": "completed", "priority": "high"}
{"id": "2", "content": "Fix the date parsing", "status": "completed", "priority": "high"}
{"id": "3", "content": "Run the whole suite", "status": "in_progress", "priority": "high"}
{"id": "4", "content": "Tidy the imports", "status": "cancelled", "priority": "low"}\
""")
    # Items another tool wrote have no id; a blocked one says so.
    others = {"todos": [{"content": "Wait for CI", "status": "blocked"}]}
    assert (await plans.call("write_todos", others)).ok
    sent = len(send.sent)
    ignored = [{"id": "x", "content": "Not written"}]
    assert (await plans.call("todo", {"action": "read", "todos": ignored})).content == snapshot("""\
Retrieved 1 todo:
{"content": "Wait for CI", "status": "blocked", "priority": "medium"}
Todos without an id were written by another tool: give each one an id when you write the list.
The todos sent were not written: action "read" only reads. Send action "write" to replace the list.\
""")
    assert len(send.sent) == sent


async def test_the_priority_sent_wins_over_the_one_the_entry_had() -> None:
    plans, _ = session("vibe", dialects=["llm_plans", "vibe"])
    assert (await plans.call("todo", CREATE)).ok
    await plans.call("update_plan", {"id": "main", "changes": [{"step": 1, "priority": "low"}]})
    assert listed(plans)[0][2] == "low"
    assert (await plans.call("todo", PROGRESS)).ok
    assert [p for _, _, p, _ in listed(plans)] == ["high", "high", "medium", "low"]


async def test_status_and_priority_default_as_vibes_do() -> None:
    plans, _ = session("vibe")
    bare = write({"id": "a", "content": "Plain"}, {"id": "b", "content": "Nulls", "status": None})
    assert (await plans.call("todo", bare)).ok
    assert listed(plans) == [
        ("Plain", "pending", "medium", "a"),
        ("Nulls", "pending", "medium", "b"),
    ]


async def test_cancelled_todos_keep_their_place_and_ids_survive_a_restore() -> None:
    plans, _ = session("vibe")
    assert (await plans.call("todo", CANCEL)).ok
    again, _ = session("vibe")
    assert again.restore(plans.snapshot()) == []
    assert listed(again) == [
        ("Read the failing test", "completed", "high", "1"),
        ("Fix the date parsing", "completed", "high", "2"),
        ("Run the whole suite", "in_progress", "high", "3"),
        ("Tidy the imports", "cancelled", "low", "4"),
    ]


async def test_slips_are_repaired() -> None:
    plans, _ = session("vibe")
    sent = {
        "action": " Write",
        "todos": [
            {"id": 7, "content": "Number id", "status": "done", "priority": "High"},
            {"id": "b", "content": "Blocked", "status": "Blocked", "priority": "med"},
        ],
    }
    assert (await plans.call("todo", sent)).ok
    entries = plans.plans["main"].entries  # type: ignore[union-attr]
    assert [(e.content, e.status, e.priority, e.meta) for e in entries] == [
        ("Number id", "completed", "high", {"llm_plans": {"id": "7"}}),
        ("Blocked", "pending", "medium", {"llm_plans": {"id": "b", "status": "blocked"}}),
    ]


async def test_a_write_without_todos_is_refused_but_its_mirror_empties_the_list() -> None:
    """Vibe runs `todos or []`: a write without todos empties its list. A model is told to
    send the list (or []); a mirror of the call Vibe ran empties the list as Vibe did."""
    plans, send = session("vibe")
    await plans.call("todo", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    for args in ({"action": "write"}, {"action": "write", "todos": None}):
        assert (await plans.call("todo", args)).content == snapshot("""\
todo was not applied (1 problem); no plan was changed.
- todos: required when action is "write": the whole todo list, which replaces the list (send [] to empty it). To see the list, send action "read".
Fix the errors and call todo again.\
""")
    assert (plans.snapshot(), len(send.sent)) == (before, sent)
    result = await plans.mirror("todo", {"action": "write", "todos": None})
    assert result.content == "Updated the todo list: it is empty now."
    assert send.updates[-1]["plan"]["entries"] == []
    assert (await plans.call("todo", write())).ok


async def test_bad_arguments_name_the_todos_paths_and_change_nothing() -> None:
    plans, send = session("vibe")
    await plans.call("todo", CREATE)
    before, sent = plans.snapshot(), len(send.sent)
    bad = {
        "action": "update",
        "todos": [
            {"id": "1", "content": " ", "status": "waiting"},
            {"content": "No id", "priority": "urgent"},
            {"id": True, "content": "x", "done": 1},
        ],
    }
    assert (await plans.call("todo", bad)).content == snapshot("""\
todo was not applied (7 problems); no plan was changed.
- action: sent "update"; accepted values: "read" or "write".
- todos[0].content: sent " "; must not be empty.
- todos[0].status: sent "waiting"; accepted values: "pending", "in_progress", "completed", "cancelled" or "blocked".
- todos[1].id: this field is required.
- todos[1].priority: sent "urgent"; accepted values: "high", "medium" or "low".
- todos[2].id: sent true; expected a string.
- todos[2].done: sent 1; not a known field. Accepted fields: id, content, status, priority.
Fix the errors and call todo again.\
""")
    twice = write(todo("1", "A", "pending"), todo("2", "B", "pending"), todo("1", "C", "pending"))
    assert (await plans.call("todo", twice)).content == snapshot("""\
todo was not applied (1 problem); no plan was changed.
- todos[2].id: sent "1"; todos[0] has this id too; give each todo its own id.
Fix the errors and call todo again.\
""")
    long_id = "i" * (plans.limits.max_id_length + 1)
    result = await plans.call("todo", write(todo(long_id, "A", "pending")))
    assert f'- todos[0].id: sent "{long_id}"; at most' in result.content
    assert "- action: this field is required." in (await plans.call("todo", {"todos": []})).content
    limit = plans.limits.max_entries
    too_many = write(*(todo(str(n), f"Step {n}", "pending") for n in range(limit + 1)))
    result = await plans.call("todo", too_many)
    assert f"- todos: {limit + 1} steps; at most {limit}" in result.content
    long = "x" * (plans.limits.max_entry_chars + 1)
    result = await plans.call("todo", write(todo("a", "A", "pending"), todo("b", long, "pending")))
    assert f"- todos[1].content: {len(long)} characters" in result.content
    assert "- colour: " in (await plans.call("todo", {**CREATE, "colour": 1})).content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


async def test_the_definition_is_vibes() -> None:
    for strict in (True, False):
        schema = tools.schema("todo", all_required=strict, dialect="vibe")
        assert schema["properties"]["action"]["enum"] == ["read", "write"]
        assert schema["properties"]["todos"]["type"] == ["array", "null"]
        item = schema["properties"]["todos"]["items"]
        assert list(item["properties"]) == ["id", "content", "status", "priority"]
        assert item["required"] == (
            ["id", "content", "status", "priority"] if strict else ["id", "content"]
        )
    assert tools.schema("todo", dialect="vibe")["required"] == ["action"]


@settings(max_examples=60)
@given(data=st.data())
def test_streamed_calls_end_as_the_same_call_sent_whole(data: st.DataObject) -> None:
    writes = [c for c in SCRIPT if c["action"] == "write"]
    index = data.draw(st.integers(0, len(writes) - 1))
    before = data.draw(st.sampled_from([tuple(writes[:index]), ()]))
    unicode = write(
        todo("ü", "Übersetze die Meldung ✅", "in_progress", "high"), todo("2", "翻訳", "pending")
    )
    args = data.draw(st.sampled_from([writes[index], unicode, broken(writes[index], "todos")]))
    parts = data.draw(sent_parts(args))
    asyncio.run(streamed_as_plain("vibe", "todo", before, args, "todos", parts))


@settings(max_examples=60)
@given(data=st.data())
def test_a_streamed_read_shows_nothing_and_ends_as_a_read(data: st.DataObject) -> None:
    """A read that also sends todos (which it does not write): no preview ever shows them."""

    async def run(parts: list[Any]) -> None:
        plans, send = session("vibe")
        await plans.call("todo", CREATE)
        before, sent = plans.snapshot(), len(send.sent)
        for part in parts:
            await plans.feed("c1", "todo", part)
        result = await plans.finish("c1")
        assert result.ok
        assert result.content.startswith("Retrieved 4 todos:")
        assert (plans.snapshot(), len(send.sent)) == (before, sent)

    args = {"action": "read", "todos": PROGRESS["todos"]}
    asyncio.run(run(data.draw(sent_parts(args))))


@settings(max_examples=200)
@given(args=mutated(CANCEL, "todos") | mutated(CREATE, "todos"))
def test_hostile_calls_are_answered_and_change_nothing(args: Any) -> None:
    async def run() -> None:
        plans, send = session("vibe")
        await plans.call("todo", CREATE)
        before, sent = plans.snapshot(), len(send.sent)
        if await answered_safely(plans, send, "todo", args, FIELDS):
            if plans.snapshot() == before:  # a read
                assert len(send.sent) == sent
            for entry in plans.plans["main"].entries:  # type: ignore[union-attr]
                assert entry.priority in ("high", "medium", "low")
                assert isinstance((entry.meta or {})["llm_plans"]["id"], str)

    asyncio.run(run())


# ---- writes and reads in any order, against a reference list --------------------------------

IDS = st.sampled_from(["1", "2", "3", "a", "b"])
TEXTS = st.sampled_from(["Plan", "Build", "Test", "Ship", "Build"])


@st.composite
def sent_todos(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(IDS, max_size=4, unique=True))
    if ids and not draw(st.integers(0, 7)):
        ids.append(draw(st.sampled_from(ids)))  # now and then an id sent twice: rejected
    out = []
    for todo_id in ids:
        item: dict[str, Any] = {"id": todo_id, "content": draw(TEXTS)}
        if draw(st.integers(0, 3)):
            item["status"] = draw(st.sampled_from(STATUSES))
        if draw(st.integers(0, 3)):
            item["priority"] = draw(st.sampled_from(["high", "medium", "low"]))
        out.append(item)
    return out


MIXED = ["vibe", "opencode", "write_todos"]


class MixedLists(RuleBasedStateMachine):
    """One session taking Vibe's writes and reads, opencode's and write_todos' lists in any
    order, restored at any point: the list is always the reference list (each accepted
    write's todos, with Vibe's defaults; nothing from a read or a rejected call)."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.send = RecordingSend()
        self.plans = PlanSession(self.send, session_id="s", dialects=MIXED)
        self.expected: list[tuple[str, str, str, Any]] | None = None

    def teardown(self) -> None:
        self.loop.close()

    def run(self, tool: str, args: dict[str, Any]) -> str:
        result = self.loop.run_until_complete(self.plans.call(tool, args))
        return result.content if result.ok else ""

    @rule(todos=sent_todos())
    def vibe_write(self, todos: list[dict[str, Any]]) -> None:
        ids = [t["id"] for t in todos]
        sent = len(self.send.sent)
        if not self.run("todo", write(*todos)):
            assert len(set(ids)) < len(ids)
            assert len(self.send.sent) == sent
            return
        self.expected = [
            (t["content"], t.get("status", "pending"), t.get("priority", "medium"), t["id"])
            for t in todos
        ]

    @rule(todos=sent_todos())
    def opencode_write(self, todos: list[dict[str, Any]]) -> None:
        plain = [
            {"content": t["content"], "status": t.get("status", "pending"), "priority": "low"}
            for t in todos
        ]
        assert self.run("todowrite", {"todos": plain})
        self.expected = [(t["content"], t["status"], "low", None) for t in plain]

    @rule(todos=sent_todos())
    def write_todos(self, todos: list[dict[str, Any]]) -> None:
        plain = [{"content": t["content"], "status": t.get("status", "pending")} for t in todos]
        assert self.run("write_todos", {"todos": plain})
        # No priority: an unchanged text keeps the one it had (the first such, once each).
        old: dict[str, list[str]] = {}
        for content, _, priority, _ in self.expected or []:
            old.setdefault(content, []).append(priority)
        out = []
        for t in plain:
            kept = old.get(t["content"])
            out.append((t["content"], t["status"], kept.pop(0) if kept else "medium", None))
        self.expected = out

    @rule()
    def read(self) -> None:
        before, sent = self.plans.snapshot(), len(self.send.sent)
        text = self.run("todo", READ)
        assert text.startswith("Retrieved ")
        assert (self.plans.snapshot(), len(self.send.sent)) == (before, sent)
        assert len(text.splitlines()) >= len(self.expected or [])

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
        assert listed(self.plans) == self.expected
        if self.send.sent:  # a session without capabilities sends the legacy form
            check("legacy", self.send.sent[-1])


TestMixedLists = MixedLists.TestCase
TestMixedLists.settings = settings(max_examples=100, stateful_step_count=20)
