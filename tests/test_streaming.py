"""feed/finish: previews of complete steps only, coalescing, rollback, parallel calls."""

from __future__ import annotations

import asyncio
import json

import pytest

from llm_plans import PlanSession, StreamError
from llm_plans.testing import RecordingSend

ENTRIES = [
    {"content": f"Step {n}", "priority": "high", "status": "in_progress"} for n in range(1, 5)
]
CREATE = json.dumps({"type": "items", "id": None, "entries": ENTRIES})


async def stream(session: PlanSession, call_id: str, text: str, size: int = 3) -> None:
    for start in range(0, len(text), size):
        await session.feed(call_id, "create_plan", text[start : start + size])


async def test_previews_carry_only_complete_entries() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    await stream(session, "c1", CREATE, size=1)
    counts = [len(u["plan"]["entries"]) for u in send.updates]
    assert counts == [1, 2, 3, 4]  # each step as soon as its closing brace arrives
    for update in send.updates:
        for entry in update["plan"]["entries"]:
            assert entry in [{**e} for e in ENTRIES]  # never a half-written status
    result = await session.finish("c1")
    assert result.ok
    assert len(send.updates) == 4  # the last preview was the final plan: not sent twice


async def test_markdown_previews_whole_lines() -> None:
    send = RecordingSend()
    session = PlanSession(
        send, session_id="s", client_capabilities={"planCapabilities": {}}, stream_interval=0
    )
    text = json.dumps({"type": "markdown", "id": "d", "content": "# T\n- [ ] one\n- [ ] two"})
    await stream(session, "c1", text, size=2)
    contents = [u["plan"]["content"] for u in send.updates]
    assert contents == ["# T", "# T\n- [ ] one", "# T\n- [ ] one\n- [ ] two"]
    await session.finish("c1")
    assert len(send.updates) == 3  # the complete text was shown already


async def test_coalescing_sends_at_most_one_update_per_interval() -> None:
    send = RecordingSend()
    session = PlanSession(
        send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0.05
    )
    many = json.dumps({"type": "items", "entries": [{"content": f"S{n}"} for n in range(40)]})
    await stream(session, "c1", many, size=50)  # all fragments within one interval
    assert len(send.sent) == 1  # the first preview went out at once; the rest are coalesced
    await asyncio.sleep(0.1)
    assert len(send.sent) == 2  # the latest preview went out when the interval passed
    await session.finish("c1")
    assert len(send.updates[-1]["plan"]["entries"]) == 40


async def test_invalid_stream_rolls_back_an_update() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    await session.call("create_plan", {"type": "items", "entries": ["Old"]})
    before = send.updates[-1]
    text = '{"id": "plan-1", "entries": [{"content": "New"}, {"content": "Bad", "status": 7}]}'
    for char in text:
        await session.feed("c1", "update_plan", char)
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "New"
    result = await session.finish("c1")
    assert not result.ok
    assert send.updates[-1] == before
    assert session.plans["plan-1"].entries[0].content == "Old"


async def test_legacy_rollback_resends_the_list_without_the_plan() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", stream_interval=0)
    await session.call("create_plan", {"type": "items", "entries": ["Kept"]})
    await stream(session, "c1", CREATE[:-20])
    assert len(send.updates[-1]["entries"]) > 1
    result = await session.finish("c1")
    assert not result.ok
    assert "cut off" in result.content
    assert send.updates[-1] == {
        "sessionUpdate": "plan",
        "entries": [{"content": "Kept", "priority": "medium", "status": "pending"}],
    }


async def test_parallel_streams_get_distinct_ids() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    for start in range(0, len(CREATE), 4):
        await session.feed("a", "create_plan", CREATE[start : start + 4])
        await session.feed("b", "create_plan", CREATE[start : start + 4])
    second = await session.finish("b")
    first = await session.finish("a")
    assert (first.plan_id, second.plan_id) == ("plan-1", "plan-2")
    shown = {u["plan"]["planId"] for u in send.updates}
    assert shown == {"plan-1", "plan-2"}
    assert list(session.plans) == ["plan-2", "plan-1"]


async def test_misuse_raises_stream_error(send: RecordingSend) -> None:
    session = PlanSession(send, session_id="s")
    with pytest.raises(StreamError, match="not a plan tool"):
        await session.feed("c", "bash", "{}")
    with pytest.raises(StreamError, match="feed it before"):
        await session.finish("never")
    await session.feed("c", "create_plan", "{")
    with pytest.raises(StreamError, match="started as create_plan"):
        await session.feed("c", "remove_plan", "}")


async def test_bytes_fragments_may_split_a_character() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    data = json.dumps(
        {"type": "items", "entries": ["Café ☕ first", "Zweiter Schritt"]}, ensure_ascii=False
    ).encode()
    for index in range(len(data)):
        await session.feed("c", "create_plan", data[index : index + 1])
    result = await session.finish("c")
    assert result.ok
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Café ☕ first"
