"""What the session keeps under `_meta["llm_plans"]` is the session's, not the model's.

A model's call that sets it is refused on every path (call, handle for each provider,
streamed), changing nothing and never previewed; a snapshot's is held to the rules of the
field each key stands for; task numbers are never reused within a list.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from inline_snapshot import snapshot
from strategies import fragments

from llm_plans import ConfigurationError, Limits, PlanSession, ToolResult
from llm_plans.testing import RecordingSend

KEY = "llm_plans"
FORMS = ["schema", "legacy", "documents", "v2"]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
# Other `_meta` keys are the model's to send (any name but ours).
other_meta = st.dictionaries(
    st.text(max_size=6).filter(lambda k: k != KEY), json_values, max_size=3
)


def session(**kwargs: Any) -> tuple[PlanSession, RecordingSend]:
    send = RecordingSend()
    kwargs.setdefault("stream_interval", 0)
    return PlanSession(send, session_id="s", **kwargs), send


def kept_in(value: Any) -> Iterator[Any]:
    """Every `_meta["llm_plans"]` a notification carries, wherever it is."""
    if isinstance(value, dict):
        meta = value.get("_meta")
        if isinstance(meta, dict) and KEY in meta:
            yield meta[KEY]
        for inner in value.values():
            yield from kept_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from kept_in(inner)


# ---- a model's entries may not set it, on any path -----------------------------------------


@st.composite
def forged_call(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[int]]:
    """A create_plan or update_plan whose entries set `_meta["llm_plans"]` at some positions
    (any value, beside any other `_meta` keys), and those positions."""
    size = draw(st.integers(1, 5))
    forged = sorted(draw(st.sets(st.integers(0, size - 1), min_size=1)))
    entries: list[dict[str, Any]] = []
    for index in range(size):
        entry: dict[str, Any] = {"content": f"Step {index}"}
        if draw(st.booleans()):
            entry["status"] = draw(st.sampled_from(["pending", "in_progress", "completed"]))
        meta = draw(other_meta)
        if index in forged:
            # `llm_plans` anywhere among the other keys
            items = [*meta.items(), (KEY, draw(json_values))]
            meta = dict(draw(st.permutations(items)))
        if meta or index in forged:
            entry["_meta"] = meta
        entries.append(entry)
    if draw(st.booleans()):
        return "create_plan", {"type": "items", "id": "new", "entries": entries}, forged
    return "update_plan", {"id": "p", "entries": entries}, forged


def provider_call(provider: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(arguments)
    if provider == "anthropic":
        return {"type": "tool_use", "id": "c", "name": tool, "input": arguments}
    if provider == "openai_chat":
        return {"type": "function", "id": "c", "function": {"name": tool, "arguments": text}}
    if provider == "openai_responses":
        return {"type": "function_call", "call_id": "c", "name": tool, "arguments": text}
    return {"function": {"name": tool, "arguments": arguments}}  # ollama


PATHS = ["call", "call_text", "anthropic", "openai_chat", "openai_responses", "ollama", "stream"]


async def deliver(
    plans: PlanSession, path: str, tool: str, arguments: dict[str, Any], data: st.DataObject
) -> tuple[bool, str]:
    """The call sent by `path`: whether it was applied, and the text the model reads."""
    if path == "call":
        result = await plans.call(tool, arguments)
    elif path == "call_text":
        result = await plans.call(tool, json.dumps(arguments))
    elif path == "stream":
        for part in data.draw(fragments(json.dumps(arguments), most=12)):
            await plans.feed("s1", tool, part)
        result = await plans.finish("s1")
    else:
        handled = await plans.handle(provider_call(path, tool, arguments))
        assert handled is not None
        text = json.dumps(handled)
        return '"is_error": true' not in text and "was not applied" not in text, text
    assert isinstance(result, ToolResult)
    return result.ok, result.content


@settings(max_examples=150)
@given(call=forged_call(), path=st.sampled_from(PATHS), form=st.sampled_from(FORMS), data=st.data())
async def test_a_model_that_sets_llm_plans_is_refused_on_every_path(
    call: tuple[str, dict[str, Any], list[int]], path: str, form: str, data: st.DataObject
) -> None:
    tool, arguments, forged = call
    plans, send = session(form=form)
    first = {"type": "items", "id": "p", "entries": [{"content": "Keep", "_meta": {"x": 1}}]}
    assert (await plans.call("create_plan", first)).ok
    before, sent = plans.snapshot(), len(send.sent)
    ok, text = await deliver(plans, path, tool, arguments, data)
    assert not ok, text
    for index in forged:
        assert f"entries[{index}]._meta.llm_plans" in text, text
    assert plans.snapshot() == before
    # No preview or notification ever showed it; a streamed call's previews are taken back.
    assert [kept for params in send.sent for kept in kept_in(params)] == []
    if path != "stream":
        assert len(send.sent) == sent
    # ... and without it, the same call is applied: other `_meta` keys pass as before.
    for entry in arguments["entries"]:
        entry.get("_meta", {}).pop(KEY, None)
    ok, text = await deliver(plans, "call", tool, arguments, data)
    assert ok, text
    plan = plans.snapshot()["plans"][-1 if tool == "create_plan" else 0]
    assert [e.get("_meta") for e in plan["entries"]] == [
        e.get("_meta") for e in arguments["entries"]
    ]


async def test_the_refusal_names_the_path_what_was_sent_and_what_to_do() -> None:
    plans, _ = session()
    forged = {"content": "Run", "_meta": {"llm_plans": {"activeForm": "x" * 300_000}, "ui": 1}}
    result = await plans.call("create_plan", {"type": "items", "entries": ["Read", forged]})
    # (the 300,000 characters are cut to a cue, as every value shown back is)
    assert re.sub("x{20,}", "xx..", result.content).split("\n") == snapshot(
        [
            "create_plan was not applied (1 problem); no plan was changed.",
            '- entries[1]._meta.llm_plans: sent {"activeForm": "xx.....; the "llm_plans" key of '
            "an entry's _meta is where the session keeps its own records (task numbers, "
            "activeForm, a dialect's status), which no call may set. Leave it out; other _meta "
            "keys are kept as sent.",
            "Fix the errors and call create_plan again.",
        ]
    )
    assert plans.plans == {}


@pytest.mark.parametrize(
    ("dialect", "tool", "arguments", "path"),
    [
        (
            "llm_plans",
            "update_plan",
            {"id": "p", "changes": [{"step": 1, "_meta": {KEY: {}}}]},
            "changes[0]._meta",
        ),
        (
            "claude_todos",
            "TodoWrite",
            {
                "todos": [
                    {
                        "content": "a",
                        "status": "pending",
                        "activeForm": "A",
                        "_meta": {KEY: {"taskId": "1"}},
                    }
                ]
            },
            "todos[0]._meta",
        ),
        (
            "claude_tasks",
            "TaskCreate",
            {"subject": "a", "description": "", "_meta": {KEY: {"taskId": "1"}}},
            "_meta",
        ),
        ("claude_tasks", "TaskUpdate", {"taskId": "1", "_meta": {KEY: {"taskId": "9"}}}, "_meta"),
        (
            "cursor",
            "todo_write",
            {
                "merge": False,
                "todos": [{"id": "1", "content": "a", "status": "pending", "_meta": {KEY: {}}}],
            },
            "todos[0]._meta",
        ),
        (
            "write_todos",
            "write_todos",
            {"todos": [{"content": "a", "status": "pending", "_meta": {KEY: {}}}]},
            "todos[0]._meta",
        ),
        (
            "opencode",
            "todowrite",
            {
                "todos": [
                    {"content": "a", "status": "pending", "priority": "low", "_meta": {KEY: {}}}
                ]
            },
            "todos[0]._meta",
        ),
        (
            "vibe",
            "todo",
            {"action": "write", "todos": [{"id": "1", "content": "a", "_meta": {KEY: {}}}]},
            "todos[0]._meta",
        ),
        (
            "codex",
            "update_plan",
            {"plan": [{"step": "a", "status": "pending", "_meta": {KEY: {}}}]},
            "plan[0]._meta",
        ),
    ],
)
async def test_no_other_tool_takes_meta_from_the_model(
    dialect: str, tool: str, arguments: dict[str, Any], path: str
) -> None:
    plans, send = session(dialects=[dialect])
    if dialect == "llm_plans":
        assert (await plans.call("create_plan", {"type": "items", "id": "p", "entries": ["a"]})).ok
    if dialect == "claude_tasks":
        assert (await plans.call("TaskCreate", {"subject": "a", "description": ""})).ok
    before, sent = plans.snapshot(), len(send.sent)
    result = await plans.call(tool, arguments)
    assert not result.ok
    assert f"- {path}: " in result.content, result.content
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


# ---- a snapshot's is held to each key's rules ----------------------------------------------


async def honest_snapshot() -> dict[str, Any]:
    """A session's snapshot with numbered tasks (one deleted), activeForms, links and
    metadata in its list, a todo list of another id, and a markdown plan."""
    plans, _ = session(dialects=["llm_plans", "claude_tasks", "claude_todos"])
    for subject in ("A", "B", "C", "D"):
        args = {
            "subject": subject,
            "description": f"do {subject}",
            "activeForm": f"Doing {subject}",
        }
        assert (await plans.call("TaskCreate", args)).ok
    updates: list[tuple[str, dict[str, Any]]] = [
        ("2", {"status": "deleted"}),
        ("3", {"addBlockedBy": ["1"], "owner": "me", "metadata": {"k": [1]}}),
        ("4", {"status": "blocked"}),
    ]
    for task, fields in updates:
        assert (await plans.call("TaskUpdate", {"taskId": task, **fields})).ok
    todo = {"content": "Sub", "status": "pending", "activeForm": "Subbing"}
    assert (await plans.call("TodoWrite", {"todos": [todo]}, list_id="sub")).ok
    assert (
        await plans.call("create_plan", {"type": "markdown", "id": "m", "content": "- [ ] a"})
    ).ok
    honest: dict[str, Any] = json.loads(json.dumps(plans.snapshot()))
    return honest


MUTATIONS: dict[str, list[Any]] = {
    # (the honest list's last_task is 4; task 2 was deleted; 1, 3 and 4 are in the list)
    "taskId": ["5", "9" * 64, "2" + "0" * 5_000, "007", "0", "-1", 3, None, "", "copy"],
    "activeForm": ["x" * 1_001, "x" * 300_000, 5, None, ["Doing"]],
    "description": ["x" * 1_001, {"a": 1}],
    "owner": ["x" * 1_001, 7],
    "id": ["x" * 1_001, 1],
    "status": ["done", "pending", 1, None],
    "blocks": ["1", [1], ["1", "1"], ["5"], ["9" * 64], None],
    "blockedBy": [["0"], {}, "3"],
    "metadata": ["m", [1], {"big": "x" * 1_000}],
    "unknown": ["red"],
}


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, Any, int]:
    key = draw(st.sampled_from(sorted(MUTATIONS)))
    return key, draw(st.sampled_from(MUTATIONS[key])), draw(st.integers(0, 2))


@settings(max_examples=100)
@given(change=mutation(), whole=st.booleans())
async def test_a_snapshot_whose_kept_keys_break_their_rules_is_refused(
    change: tuple[str, Any, int], whole: bool
) -> None:
    key, value, index = change
    saved = await honest_snapshot()
    ids = [p["id"] for p in saved["plans"]]
    at = ids.index("main")
    entry = saved["plans"][at]["entries"][index]
    if whole:
        # not an object of keys at all
        entry["_meta"][KEY] = [value] if isinstance(value, dict) else value
    elif value == "copy":  # the number of an earlier task of the list (task 1's)
        index = max(index, 1)
        saved["plans"][at]["entries"][index]["_meta"][KEY]["taskId"] = "1"
    else:
        entry["_meta"][KEY]["color" if key == "unknown" else key] = value
    path = f"entries[{index}]._meta.llm_plans"
    plans, send = session(dialects=["llm_plans", "claude_tasks", "claude_todos"])
    with pytest.raises(ConfigurationError, match=rf"plans\[{at}\] \('main'\): .*{re.escape(path)}"):
        plans.restore(saved)
    assert (plans.plans, send.sent) == ({}, [])
    skipped = plans.restore(saved, partial=True)
    assert [(s.index, s.id) for s in skipped] == [(at, "main")]
    assert path in skipped[0].reason
    assert [p["id"] for p in plans.snapshot()["plans"]] == [i for i in ids if i != "main"]
    # and the session goes on numbering past what was issued
    result = await plans.call("TaskCreate", {"subject": "E", "description": ""})
    assert result.content == "Task #5 created successfully: E"


def test_task_numbers_past_what_python_reads_are_refused_not_raised() -> None:
    # A max_id_length in the thousands: int() refuses text of more than 4,300 digits.
    plans, _ = session(dialects=["claude_tasks"], limits=Limits(max_id_length=5_000))
    entry = {"content": "A", "_meta": {KEY: {"taskId": "1" * 4_400}}}
    main = {"type": "items", "id": "main", "entries": [entry]}
    saved = {"version": 1, "next_number": 1, "last_task": 10**4_400, "plans": [main]}
    [skipped] = plans.restore(saved, partial=True)
    assert "higher than every task number the session issued" in skipped.reason


async def test_an_honest_snapshot_restores_whole() -> None:
    saved = await honest_snapshot()
    plans, _ = session(dialects=["llm_plans", "claude_tasks", "claude_todos"])
    assert plans.restore(saved, partial=True) == []
    assert plans.snapshot() == saved


# ---- task numbers are never reused within a list -------------------------------------------


class Numbers(RuleBasedStateMachine):
    """TaskCreate, TaskUpdate (deleted), snapshot and restore in any order, and a model that
    tries to set task numbers itself through our tools (a deleted one, one a task has, one
    that would spend every number): each number is issued once, every TaskCreate succeeds,
    and TaskList shows exactly the tasks created and not deleted."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.plans, _ = session(dialects=["llm_plans", "claude_tasks"])
        self.issued: list[int] = []
        self.alive: list[str] = []
        self.deleted: list[str] = []

    def call(self, tool: str, args: Any) -> ToolResult:
        return self.loop.run_until_complete(self.plans.call(tool, args))

    @rule()
    def create(self) -> None:
        result = self.call("TaskCreate", {"subject": "Task", "description": ""})
        assert result.ok, result.content
        number = int(result.content.split("#")[1].split(" ")[0])
        assert all(number > old for old in self.issued), (number, self.issued)
        self.issued.append(number)
        self.alive.append(str(number))

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        number = data.draw(st.sampled_from(self.alive))
        assert self.call("TaskUpdate", {"taskId": number, "status": "deleted"}).ok
        self.alive.remove(number)
        self.deleted.append(number)

    @rule(data=st.data(), tool=st.sampled_from(["create_plan", "update_plan"]))
    def forge(self, data: st.DataObject, tool: str) -> None:
        choices = [*self.deleted, *self.alive, "9" * 64, str(max(self.issued, default=0) + 1)]
        number = data.draw(st.sampled_from(choices))
        entries = [
            {
                "content": e["content"],
                "status": e["status"],
                **({"_meta": e["_meta"]} if "_meta" in e else {}),
            }
            for p in self.plans.snapshot()["plans"]
            for e in p.get("entries", [])
        ]
        entries.append({"content": "Forged", "_meta": {KEY: {"taskId": number}}})
        args: dict[str, Any] = {"id": "main", "entries": entries}
        if tool == "create_plan":
            args["type"] = "items"
        result = self.call(tool, args)
        assert not result.ok, result.content

    @rule()
    def restart(self) -> None:
        saved = json.loads(json.dumps(self.plans.snapshot()))
        self.plans, _ = session(dialects=["llm_plans", "claude_tasks"])
        assert self.plans.restore(saved) == []

    @invariant()
    def listed(self) -> None:
        text = self.call("TaskList", {}).content
        lines = [] if text == "No tasks found" else text.split("\n")
        assert [line.split(" ")[0][1:] for line in lines] == self.alive

    def teardown(self) -> None:
        self.loop.close()


Numbers.TestCase.settings = settings(max_examples=40, stateful_step_count=20)
TestNumbers = Numbers.TestCase
