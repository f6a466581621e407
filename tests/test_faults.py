"""A client that goes away, concurrent calls, isolation, and restarts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from spec_shapes import check

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

ITEMS = {"type": "items", "entries": ["Read", "Write", "Test"]}


async def test_send_failure_is_reported_and_the_next_call_resynchronises() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    await session.call("create_plan", {**ITEMS, "id": "a"})
    await session.call("create_plan", {**ITEMS, "id": "b"})
    send.fail_with = BrokenPipeError("client went away")
    updated = await session.call(
        "update_plan", {"id": "a", "changes": [{"step": 1, "status": "completed"}]}
    )
    removed = await session.call("remove_plan", {"id": "b"})
    for result in (updated, removed):
        assert result.ok  # state commits before sending: the call counts
        assert "could not be notified (BrokenPipeError: client went away)" in result.content
    assert list(session.plans) == ["a"]
    send.fail_with = None
    send.clear()
    await session.call("create_plan", {**ITEMS, "id": "c"})
    updates = send.updates
    assert {"sessionUpdate": "plan_removed", "planId": "b"} in updates
    assert any(
        u.get("plan", {}).get("planId") == "a" and u["plan"]["entries"][0]["status"] == "completed"
        for u in updates
    )
    assert updates[-1]["plan"]["planId"] == "c"
    send.clear()
    await session.call("remove_plan", {"id": "c"})
    assert send.updates == [{"sessionUpdate": "plan_removed", "planId": "c"}]  # in sync again


async def test_cancellation_during_send_propagates_and_marks_stale() -> None:
    class Hanging(RecordingSend):
        async def __call__(self, params: dict[str, Any]) -> None:
            await asyncio.sleep(10)

    session = PlanSession(Hanging(), session_id="s", client_capabilities={"plan": {}})
    task = asyncio.create_task(session.call("create_plan", ITEMS))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert list(session.plans) == ["plan-1"]


async def test_concurrent_calls_apply_in_arrival_order() -> None:
    order: list[str] = []

    class Slow(RecordingSend):
        async def __call__(self, params: dict[str, Any]) -> None:
            await asyncio.sleep(0.001)
            await super().__call__(params)
            order.append(json.dumps(params["update"]))

    send = Slow()
    session = PlanSession(send, session_id="s", client_capabilities={"planCapabilities": {}})
    await session.call(
        "create_plan", {"type": "items", "id": "p", "entries": [f"S{n}" for n in range(1, 21)]}
    )
    calls = [
        session.call("update_plan", {"id": "p", "changes": [{"step": n, "status": "completed"}]})
        for n in range(1, 21)
    ]
    results = await asyncio.gather(*calls)
    assert all(r.ok for r in results)
    for n, update in enumerate(send.updates[1:], 1):
        statuses = [e["status"] for e in update["plan"]["entries"]]
        assert statuses == ["completed"] * n + ["pending"] * (20 - n)  # its own call's state
        check("documents", send.sent[n])


async def test_sessions_are_isolated() -> None:
    first, second = RecordingSend(), RecordingSend()
    one = PlanSession(first, session_id="one", client_capabilities={"plan": {}})
    two = PlanSession(second, session_id="two")
    await asyncio.gather(
        one.call("create_plan", ITEMS),
        two.call("create_plan", ITEMS),
        one.call("create_plan", ITEMS),
    )
    assert {p["sessionId"] for p in first.sent} == {"one"}
    assert {p["sessionId"] for p in second.sent} == {"two"}
    assert list(one.plans) == ["plan-1", "plan-2"]
    assert list(two.plans) == ["plan-1"]


async def test_snapshot_restore_and_replay(form: str) -> None:
    caps: dict[str, Any] | None = {
        "documents": {"planCapabilities": {}},
        "schema": {"plan": {}},
        "legacy": None,
    }[form]
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=caps)
    await session.call("create_plan", ITEMS)
    await session.call("create_plan", {"type": "markdown", "id": "m", "content": "- [x] a"})
    await session.call("create_plan", {"type": "file", "id": "f", "uri": "/tmp/plan.md"})
    await session.call(
        "update_plan", {"id": "plan-1", "changes": [{"step": 1, "status": "in_progress"}]}
    )
    snapshot = json.loads(json.dumps(session.snapshot()))  # JSON-ready

    again = RecordingSend()
    restored = PlanSession(again, session_id="s", client_capabilities=caps)
    restored.restore(snapshot)
    assert dict(restored.plans) == dict(session.plans)
    assert again.sent == []
    await restored.replay()
    if form == "legacy":
        assert again.sent == [send.sent[-1]]
    else:
        assert len(again.sent) == 3
        latest = {json.dumps(u, sort_keys=True) for u in send.updates[1:]}
        assert {json.dumps(u, sort_keys=True) for u in again.updates} <= latest
    for params in again.sent:
        check(form, params)
    created = await restored.call("create_plan", ITEMS)
    assert created.plan_id == "plan-2"  # generated ids continue, never reused


async def test_a_failing_on_commit_still_tells_the_client_and_the_caller(form: str) -> None:
    caps: dict[str, Any] | None = {
        "documents": {"planCapabilities": {}},
        "schema": {"plan": {}},
        "legacy": None,
    }[form]
    send = RecordingSend()
    failures = [OSError("disk full")]

    def save(_: PlanSession) -> None:
        if failures:
            raise failures.pop()

    session = PlanSession(send, session_id="s", client_capabilities=caps, on_commit=save)
    result = await session.call("create_plan", ITEMS)
    assert result.ok
    assert isinstance(result.failure, OSError)
    assert len(send.sent) == 1  # the change stands, and the client sees it
    assert (await session.call("remove_plan", {"id": "plan-1"})).failure is None


async def test_legacy_replay_resends_an_emptied_list_that_did_not_arrive() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s")
    await session.call("create_plan", ITEMS)
    send.fail_with = ConnectionError("gone")
    removed = await session.call("remove_plan", {"id": "plan-1"})
    assert removed.ok
    assert isinstance(removed.failure, ConnectionError)
    send.fail_with = None
    await session.replay()
    assert send.updates[-1] == {"sessionUpdate": "plan", "entries": []}


async def test_calls_from_inside_send_fail_fast() -> None:
    seen: list[BaseException] = []

    class Reentrant(RecordingSend):
        async def __call__(self, params: dict[str, Any]) -> None:
            await super().__call__(params)
            for attempt in (
                session.call("remove_plan", {"id": "plan-1"}),
                asyncio.ensure_future(session.replay()),
            ):
                try:
                    await asyncio.wait_for(attempt, 1)
                except Exception as exc:
                    seen.append(exc)

    session = PlanSession(Reentrant(), session_id="s")
    result = await asyncio.wait_for(session.call("create_plan", ITEMS), 5)
    assert result.ok
    assert [type(e).__name__ for e in seen] == ["ReentrancyError", "ReentrancyError"]
