from __future__ import annotations

import asyncio
import functools
import inspect
import json
import sys
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock, create_autospec

import pytest
from acp.schema import ClientCapabilities, PlanCapabilities
from plan_kinds import items_plan

from llm_plans import ConfigurationError, PlanSession, WireForm
from llm_plans.testing import RecordingSend

ITEMS = {
    "type": "items",
    "entries": [{"content": "Read"}, {"content": "Write"}, {"content": "Test", "priority": "low"}],
}


def plan_of(update: dict[str, Any]) -> dict[str, Any]:
    return dict(update["plan"])


@pytest.mark.parametrize(
    ("caps", "form"),
    [
        ({"planCapabilities": {}}, WireForm.DOCUMENTS),
        ({"planCapabilities": {}, "plan": {}}, WireForm.SCHEMA),  # the stable one wins
        ({"plan": {}}, WireForm.SCHEMA),
        (ClientCapabilities(plan=PlanCapabilities()), WireForm.SCHEMA),
        (ClientCapabilities(), WireForm.LEGACY),
        ({"plan": None, "planCapabilities": None}, WireForm.LEGACY),
        ({"fs": {"readTextFile": True}}, WireForm.LEGACY),
        (None, WireForm.LEGACY),
    ],
)
def test_form_follows_capabilities(caps: Any, form: WireForm, send: RecordingSend) -> None:
    assert PlanSession(send, session_id="s", client_capabilities=caps).form is form


def test_form_can_be_forced(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", client_capabilities=None, form="schema")
    assert session.form is WireForm.SCHEMA


def test_bad_setup_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="async callable"):
        PlanSession("not callable", session_id="s")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="use one of 'documents', 'schema', 'legacy'"):
        PlanSession(RecordingSend(), session_id="s", form="planId")
    with pytest.raises(ConfigurationError, match="clientCapabilities"):
        PlanSession(RecordingSend(), session_id="s", client_capabilities=42)


async def test_generated_ids_are_unique(session: PlanSession) -> None:
    await session.call("create_plan", {"type": "markdown", "id": "plan-2", "content": "x"})
    first = await session.call("create_plan", ITEMS)
    second = await session.call("create_plan", ITEMS)
    await session.call("remove_plan", {"id": first.plan_id})
    third = await session.call("create_plan", ITEMS)
    assert [first.plan_id, second.plan_id, third.plan_id] == ["plan-1", "plan-3", "plan-4"]
    assert list(session.plans) == ["plan-2", "plan-3", "plan-4"]


async def test_changes_expand_to_the_complete_list(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    await session.call("create_plan", ITEMS)
    result = await session.call(
        "update_plan",
        '{"id": "plan-1", "changes": [{"step": 2, "status": "completed"},'
        ' {"step": 3, "status": "in_progress", "priority": "high", "content": "Test it"}]}',
    )
    assert result.ok
    assert plan_of(send.updates[-1]) == {
        "type": "items",
        "planId": "plan-1",
        "entries": [
            {"content": "Read", "priority": "medium", "status": "pending"},
            {"content": "Write", "priority": "medium", "status": "completed"},
            {"content": "Test it", "priority": "high", "status": "in_progress"},
        ],
    }
    assert "step 2 completed, step 3 in_progress" in result.content
    assert 'In progress: step 3 "Test it"' in result.content


async def test_several_plans_at_once_by_id(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", client_capabilities={"planCapabilities": {}})
    await session.call("create_plan", {**ITEMS, "id": "work"})
    await session.call("create_plan", {"type": "markdown", "id": "design", "content": "# D"})
    await session.call(
        "update_plan", {"id": "work", "changes": [{"step": 1, "status": "completed"}]}
    )
    await session.call("remove_plan", {"id": "design"})
    kinds = [(u["sessionUpdate"], u.get("plan", u).get("id")) for u in send.updates]
    assert kinds == [
        ("plan_update", "work"),
        ("plan_update", "design"),
        ("plan_update", "work"),
        ("plan_removed", "design"),
    ]
    assert list(session.plans) == ["work"]


async def test_update_can_switch_kind_or_infer_it(session: PlanSession) -> None:
    await session.call("create_plan", ITEMS)
    assert (await session.call("update_plan", {"id": "plan-1", "content": "# Now prose"})).ok
    before = session.plans["plan-1"]  # (named: mypy would keep its narrowing past the call)
    assert before.type == "markdown"
    switched = await session.call(
        "update_plan", {"id": "plan-1", "type": "file", "uri": "file:///tmp/p.md"}
    )
    assert switched.ok
    assert session.plans["plan-1"].type == "file"


async def test_legacy_concatenates_every_plan_in_creation_order(
    send: RecordingSend, tmp_path: Path
) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("# Release\n1. Tag\n2. Publish\n")
    session = PlanSession(send, session_id="s")
    await session.call("create_plan", {"type": "items", "entries": [{"content": "A"}]})
    await session.call(
        "create_plan",
        {"type": "markdown", "content": "## Notes\n- [x] Done thing\n* Open thing\n```\n- no\n```"},
    )
    await session.call("create_plan", {"type": "markdown", "content": "\n## Just a title\nText"})
    await session.call("create_plan", {"type": "file", "uri": str(plan_file)})
    await session.call("create_plan", {"type": "file", "uri": "file:///nonexistent/x.md"})
    contents = [(e["content"], e["status"]) for e in send.updates[-1]["entries"]]
    # Every plan's steps but the first's say whose they are: a markdown plan's heading (a plan
    # shown by its heading alone is not labelled twice), else the plan's id.
    assert contents == [
        ("A", "pending"),
        ("[Notes] Done thing", "completed"),
        ("[Notes] Open thing", "pending"),
        ("Just a title", "pending"),
        ("[plan-4] Tag", "pending"),
        ("[plan-4] Publish", "pending"),
        ("[plan-5] Plan file: /nonexistent/x.md", "pending"),
    ]
    assert all(u["sessionUpdate"] == "plan" for u in send.updates)
    assert len(send.updates) == 5
    for plan_id in list(session.plans):
        await session.call("remove_plan", {"id": plan_id})
    assert send.updates[-1] == {"sessionUpdate": "plan", "entries": []}


async def test_legacy_skips_oversized_plan_files(send: RecordingSend, tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("- step\n" * 200_000)  # > 1 MiB
    session = PlanSession(send, session_id="s")
    await session.call("create_plan", {"type": "file", "uri": big.as_uri()})
    assert send.updates[-1]["entries"] == [
        {"content": f"Plan file: {big}", "priority": "medium", "status": "pending"}
    ]


BAD_CALLS: list[tuple[str, Any, str]] = [
    ("create_plan", "{not json", "not valid JSON"),
    ("create_plan", '{"type": "items", "entries": [{"content": "a"', "cut off"),
    ("create_plan", "[1, 2]", "must be a JSON object"),
    ("create_plan", {"type": "items", "entries": 5}, "entries: sent 5; expected an array"),
    ("create_plan", {"type": "list", "entries": []}, 'type: sent "list"; accepted values'),
    (
        "create_plan",
        {"type": "items", "entries": [{"content": "a", "status": "blocked"}]},
        'entries[0].status: sent "blocked"',
    ),
    ("create_plan", {"type": "items"}, 'entries: type "items" requires entries'),
    ("create_plan", {"type": "markdown", "content": "x", "uri": "/a"}, "uri: sent"),
    ("create_plan", {"type": "items", "entries": []}, "at least one step"),
    (
        "create_plan",
        {"type": "items", "id": "p", "entries": [{"content": "a"}]},
        "a plan with this id exists",
    ),
    (
        "create_plan",
        {"type": "items", "entries": [{"content": "a"}], "steps": 1},
        "steps: sent 1; not a known field",
    ),
    ("create_plan", {"type": "items", "entries": [{"content": "   "}]}, "entries[0].content"),
    ("update_plan", {"id": "nope", "content": "x"}, 'Existing plan ids: "p", "m"'),
    (
        "update_plan",
        {"id": "p", "changes": [{"step": 4, "status": "completed"}]},
        'changes[0].step: sent 4; plan "p" has steps 1 to 3',
    ),
    ("update_plan", {"id": "p", "changes": [{"step": 0}]}, "must be at least 1"),
    ("update_plan", {"id": "p", "changes": [{"step": 1}]}, "sets nothing"),
    (
        "update_plan",
        {"id": "m", "changes": [{"step": 1, "status": "completed"}]},
        "changes only edit items plans",
    ),
    ("update_plan", {"id": "p"}, "nothing to update"),
    (
        "update_plan",
        {"id": "p", "content": "x", "entries": [{"content": "y"}]},
        "send one of entries, content or uri",
    ),
    (
        "update_plan",
        {"id": "p", "changes": [{"step": 1, "status": "completed"}], "entries": [{"content": "y"}]},
        "not both",
    ),
    ("update_plan", {"id": "p", "type": "markdown"}, "requires content"),
    ("remove_plan", {"id": "gone"}, "no plan has this id"),
    ("remove_plan", {}, "id: this field is required"),
    ("delete_plan", {"id": "p"}, "not a plan tool"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD_CALLS)
async def test_rejected_calls_send_nothing_and_change_nothing(
    session: PlanSession, send: RecordingSend, tool: str, arguments: Any, message: str
) -> None:
    await session.call("create_plan", {**ITEMS, "id": "p"})
    await session.call("create_plan", {"type": "markdown", "id": "m", "content": "# M"})
    before = dict(session.plans)
    send.clear()
    result = await session.call(tool, arguments)
    assert not result.ok
    assert message in result.content
    assert result.content.rstrip().endswith("again.") or "not a plan tool" in result.content
    assert send.sent == []
    assert dict(session.plans) == before
    # and the next good call still works, with generated ids unaffected by the failure
    created = await session.call("create_plan", ITEMS)
    assert created.plan_id == "plan-1"


async def test_arguments_may_be_a_dict_or_json_text(session: PlanSession) -> None:
    assert (await session.call("create_plan", json.dumps(ITEMS))).ok
    assert (await session.call("create_plan", ITEMS)).ok
    assert (await session.call("create_plan", json.dumps(ITEMS).encode())).ok


async def test_success_text_gives_id_and_numbered_steps(session: PlanSession) -> None:
    result = await session.call("create_plan", ITEMS)
    assert result.content.splitlines()[:4] == [
        'Created plan "plan-1" (items, 3 steps):',
        "1. [pending] Read",
        "2. [pending] Write",
        "3. [pending] Test (low priority)",
    ]


async def test_prefixed_names_resolve_to_the_plan_tools(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", tool_prefixes=("", "ns."))
    assert session.plan_tool("ns.create_plan") == "create_plan"
    assert session.plan_tool("mcp__plans__create_plan") is None  # not among this session's
    assert PlanSession(send, session_id="s").plan_tool("mcp__plans__remove_plan") == "remove_plan"


async def test_abort_rolls_back_a_streamed_preview(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    await session.feed(
        "c1", "create_plan", '{"type": "items", "id": "p", "entries": [{"content": "a"}, {"c'
    )
    assert session.is_streaming("c1")
    assert send.updates[-1]["sessionUpdate"] == "plan_update"
    assert await session.abort("c1") is True
    assert not session.is_streaming("c1")
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "p"}
    assert await session.abort("c1") is False
    assert await session.abort_all() == []


# ---- send must be async -------------------------------------------------------------------


def plain_send(params: dict[str, Any]) -> None:
    """What a synchronous send looks like: it runs, and returns None."""


class SyncCallable:
    def __call__(self, params: dict[str, Any]) -> None:
        pass


class AsyncCallable:
    async def __call__(self, params: dict[str, Any]) -> None:
        pass


async def async_send(params: dict[str, Any], *, label: str = "") -> None:
    pass


@pytest.mark.parametrize(
    "send",
    [plain_send, SyncCallable(), lambda params: None, print, functools.partial(plain_send)],
    ids=["function", "callable-object", "lambda", "builtin", "partial"],
)
def test_a_synchronous_send_is_refused_at_construction(send: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"send must be an async function \(async def"):
        PlanSession(send, session_id="s")


class TwoArgumentClient:
    """The ACP SDK's connection: `session_update(session_id, update)` is async but is no send."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        raise AssertionError("never called")


async def no_arguments() -> None:
    raise AssertionError("never called")


@pytest.mark.parametrize(
    "send", [TwoArgumentClient().session_update, no_arguments], ids=["sdk-method", "no-arguments"]
)
def test_an_async_send_that_cannot_take_the_params_is_refused(send: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"send must take one argument.*acp_send\(conn\)"):
        PlanSession(send, session_id="s")


@pytest.mark.parametrize(
    "send",
    [
        async_send,
        functools.partial(async_send, label="x"),
        AsyncCallable(),
        functools.partial(AsyncCallable()),
        AsyncMock(),
        create_autospec(async_send),
        RecordingSend(),
    ],
    ids=[
        "function",
        "partial",
        "callable-object",
        "partial-object",
        "AsyncMock",
        "autospec",
        "rec",
    ],
)
async def test_async_sends_of_every_shape_are_accepted(send: Any) -> None:
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    result = await session.call("create_plan", ITEMS)
    assert result.ok
    assert result.failure is None


async def test_a_send_that_returns_no_awaitable_fails_clearly_once() -> None:
    sent: list[dict[str, Any]] = []

    def lying(params: dict[str, Any]) -> None:
        sent.append(params)

    # Marked as a coroutine function (as a careless decorator might), so the check at
    # construction passes, yet it returns None.
    if sys.version_info >= (3, 12):
        inspect.markcoroutinefunction(lying)
    else:
        lying._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]
    # A send of the wrong type, on purpose: the check at the first send is what this tests.
    session = PlanSession(lying, session_id="s", client_capabilities={"plan": {}})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="returned NoneType, not an awaitable"):
        await session.call("create_plan", ITEMS)
    assert len(sent) == 1  # it ran once
    # Nothing is marked stale and re-sent: the next call sends only its own change.
    change = {"id": "plan-1", "changes": [{"step": 1, "status": "done"}]}
    with pytest.raises(ConfigurationError):
        await session.call("update_plan", change)
    assert len(sent) == 2


async def test_plans_are_a_copy_the_caller_may_keep_and_change(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    meta = {"llm_plans": {"activeForm": "Reading"}, "tags": ["a"]}
    step = {"content": "Read", "status": "in_progress", "_meta": meta}
    # (`_meta["llm_plans"]` is the session's: a snapshot brings it, no model's call may)
    items = {"type": "items", "id": "p", "entries": [step]}
    assert session.restore({"version": 1, "next_number": 1, "plans": [items]}) == []
    await session.call("create_plan", {"type": "markdown", "id": "m", "content": "# M"})
    snapshot = json.dumps(session.snapshot())
    plans = session.plans
    assert plans["p"] is plans["p"]
    items_plan(plans["p"]).entries[0].meta["tags"].append("changed")  # type: ignore[index]
    items_plan(plans["p"]).entries[0].meta["llm_plans"]["activeForm"] = "Changed"  # type: ignore[index]
    assert json.dumps(session.snapshot()) == snapshot
    assert items_plan(session.plans["p"]).entries[0].meta == meta
    send.clear()
    await session.replay()
    [update] = send.updates[:1]
    assert update["plan"]["entries"][0] == {**step, "priority": "medium", "content": "Reading"}
    # and later calls leave the copy as it was
    await session.call("remove_plan", {"id": "m"})
    assert list(plans) == ["p", "m"]
    assert list(session.plans) == ["p"]
    assert "m" in plans
    assert repr(plans).startswith("{'p': ItemsPlan(")
