"""feed_nowait/flush: fragments handed over without an await each, and the preview budget."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_kinds import items_plan

from llm_plans import ConfigurationError, PlanSession
from llm_plans.testing import RecordingSend

ENTRIES = [{"content": f"Step {n}", "priority": "high", "status": "pending"} for n in range(6)]
CREATE = json.dumps({"type": "items", "id": None, "entries": ENTRIES})
CAPS: dict[str, Any] = {"plan": {}}


def session_for(send: RecordingSend, **options: Any) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities=CAPS, **options)


def cuts(text: str) -> st.SearchStrategy[list[str]]:
    """Every way of cutting `text` into fragments."""
    points = st.lists(st.integers(1, max(1, len(text) - 1)), max_size=len(text)).map(
        lambda ps: sorted(set(ps))
    )
    return points.map(
        lambda ps: [text[a:b] for a, b in zip([0, *ps], [*ps, len(text)], strict=True)]
    )


async def hand_over(session: PlanSession, call_id: str, fragments: list[str]) -> int:
    """Feeds as an adapter does: flushes only when told a preview is due; the flushes."""
    flushes = 0
    for fragment in fragments:
        if session.feed_nowait(call_id, "create_plan", fragment):
            flushes += 1
            await session.flush()
    return flushes


async def test_feed_nowait_sends_nothing_and_starts_no_task() -> None:
    send = RecordingSend()
    session = session_for(send, stream_interval=0)
    before = asyncio.all_tasks()
    due = [session.feed_nowait("c", "create_plan", ch) for ch in CREATE]
    assert asyncio.all_tasks() == before
    assert send.sent == []
    assert any(due)
    await session.flush()
    assert [len(u["plan"]["entries"]) for u in send.updates] == [6]  # the latest, once


FIRST_STEP = CREATE.index("}") + 1  # where the first step's closing brace ends


def two_due(send: RecordingSend) -> PlanSession:
    """A session where calls "a" and "b" were each handed their first step: both due."""
    session = session_for(send, stream_interval=0)
    assert session.feed_nowait("a", "create_plan", CREATE[:FIRST_STEP])
    assert session.feed_nowait("b", "create_plan", CREATE[:FIRST_STEP])
    return session


async def test_due_previews_go_out_at_the_next_awaited_feed_in_order() -> None:
    send = RecordingSend()
    session = two_due(send)
    assert send.sent == []
    await session.feed("c", "create_plan", "{")  # another call's awaited feed flushes both
    assert [u["plan"]["planId"] for u in send.updates] == ["plan-1", "plan-2"]


async def test_a_due_preview_gives_way_to_finish() -> None:
    send = RecordingSend()
    session = session_for(send, stream_interval=0)
    for ch in CREATE:
        session.feed_nowait("c", "create_plan", ch)
    result = await session.finish("c")
    assert result.ok
    assert [len(u["plan"]["entries"]) for u in send.updates] == [6]


async def test_a_flush_cut_off_by_cancellation_leaves_the_rest_due() -> None:
    # A send cancelled mid-flush (a timeout around the adapter) must not strand the other
    # due previews: they stay queued, and the stream goes on previewing as before.
    send = RecordingSend()
    session = two_due(send)
    send.fail_with = asyncio.CancelledError()
    with pytest.raises(asyncio.CancelledError):
        await session.flush()
    send.fail_with = None
    await session.flush()  # b's preview, and a's, whose send was cut off, again
    assert sorted(u["plan"]["planId"] for u in send.updates) == ["plan-1", "plan-2"]
    rest = CREATE[FIRST_STEP:]
    second = rest.index("}") + 1
    assert session.feed_nowait("b", "create_plan", rest[:second])
    await session.flush()
    shown = [len(u["plan"]["entries"]) for u in send.updates if u["plan"]["planId"] == "plan-2"]
    assert shown == [1, 2]
    for call_id, text in (("b", rest[second:]), ("a", rest)):
        session.feed_nowait(call_id, "create_plan", text)
        assert (await session.finish(call_id)).ok


async def test_a_failed_preview_send_is_rolled_back_by_the_rejected_finish() -> None:
    send = RecordingSend()
    session = session_for(send, stream_interval=0)
    await session.call("create_plan", {"type": "items", "id": "p", "entries": ["Old"]})
    before = send.updates[-1]
    text = '{"id": "p", "entries": [{"content": "New"}, {"content": "Bad", "status": 7}]}'
    send.fail_with = ConnectionError("pipe")
    for char in text:
        if session.feed_nowait("u", "update_plan", char):
            await session.flush()
    send.fail_with = None
    result = await session.finish("u")
    assert not result.ok
    assert send.updates[-1] == before
    assert items_plan(session.plans["p"]).entries[0].content == "Old"


@settings(max_examples=60, deadline=None)
@given(fragments=cuts(CREATE))
def test_handed_over_streams_end_as_the_whole_call(fragments: list[str]) -> None:
    async def run() -> None:
        plain, streamed = RecordingSend(), RecordingSend()
        whole = await session_for(plain).call("create_plan", CREATE)
        session = session_for(streamed, stream_interval=0)
        await hand_over(session, "c", fragments)
        done = await session.finish("c")
        assert (done.ok, done.content, done.plan_id) == (whole.ok, whole.content, whole.plan_id)
        assert streamed.updates[-1] == plain.updates[-1]
        for update in streamed.updates:  # previews carry whole entries only, in order
            shown = update["plan"]["entries"]
            assert shown == plain.updates[-1]["plan"]["entries"][: len(shown)]

    asyncio.run(run())


@pytest.mark.parametrize("budget", [0, 0.5, float("inf"), float("nan"), "8", True, None])
def test_a_preview_budget_that_is_not_a_number_of_at_least_one_is_refused(
    budget: Any,
) -> None:
    with pytest.raises(ConfigurationError, match="preview_budget"):
        PlanSession(RecordingSend(), session_id="s", preview_budget=budget)


@pytest.mark.parametrize("budget", [1, 2, 4, 8, 16])
async def test_previews_stay_within_the_budget(budget: float) -> None:
    send = RecordingSend()
    session = session_for(send, stream_interval=0, preview_budget=budget)
    many = json.dumps({"type": "items", "entries": [f"Step number {n}" for n in range(60)]})
    for start in range(0, len(many), 4):
        await session.feed("c", "create_plan", many[start : start + 4])
    previews = [len(json.dumps(p)) for p in send.sent]
    await session.finish("c")
    final = len(json.dumps(send.sent[-1]))
    assert sum(previews) <= budget * final
    assert len(previews) >= 1
