"""feed/finish: previews of complete steps only, coalescing, rollback, parallel calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st
from plan_kinds import items_plan

import llm_plans._core.apply
import llm_plans._streaming.preview
from llm_plans import Limits, PlanSession, StreamError, ToolResult
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


async def test_previews_after_the_first_are_worked_out_from_their_new_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The usual stream's previews are the last one grown: the core's decisions for the whole
    # call (ids, limits, the book) are asked for at the first preview, and again only when
    # more than steps became final (the list's `]`, the call's `}`, which show nothing new).
    # The client gets what it got before (test_previews_carry_only_complete_entries).
    asked: list[str] = []
    decide = llm_plans._core.apply.run  # what llm_plans._streaming.preview.run is

    def counted(call: Any) -> Any:
        asked.append(call.tool.name)
        return decide(call)

    monkeypatch.setattr(llm_plans._streaming.preview, "run", counted)
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    await stream(session, "c1", CREATE, size=1)
    assert [len(u["plan"]["entries"]) for u in send.updates] == [1, 2, 3, 4]
    assert asked == ["create_plan"] * 3
    assert (await session.finish("c1")).ok
    assert len(send.updates) == 4


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
    assert items_plan(session.plans["plan-1"]).entries[0].content == "Old"


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


class WithoutQuickPreviews(PlanSession):
    """A session that works out every preview the general way and shows it, as every other
    change, the whole way (`show` without its quick way for one items plan)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._outbox._show_one = lambda *args, **kwargs: None  # type: ignore[method-assign]

    def _grown(self, flight: Any) -> None:
        return None


class CountingQuickPreviews(PlanSession):
    """A session that counts the previews it worked out the quick way."""

    quick = 0

    def _grown(self, flight: Any) -> Any:
        plan = super()._grown(flight)
        self.quick += plan is not None
        return plan


OTHER = '{"type": "items", "id": "p", "entries": [{"content": "Other", "priority": "low"}'
usual_step = st.fixed_dictionaries(
    {
        # Words with the characters that end steps and strings in JSON, or any text at all.
        "content": st.one_of(
            *[st.from_regex(r"[A-Za-z0-9][ -~]{0,8}", fullmatch=True)] * 5, st.text(max_size=9)
        ),
        "priority": st.sampled_from(["high", "medium", "low"]),
        "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled"]),
    }
)
odd_step = st.sampled_from(
    [{"content": "x", "status": "done"}, {"content": "x"}, "as text", {"content": ""}]
)


@given(
    form=st.sampled_from(["legacy", "schema", "documents", "v2"]),
    budget=st.sampled_from([1, 2, 8, 8, 8]),
    tool=st.sampled_from(["create_plan", "update_plan"]),
    steps=st.lists(st.one_of(*[usual_step] * 19, odd_step), min_size=1, max_size=12),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    events=st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["call", "fail", "mend", "other"])),
        max_size=4,
    ),
    limit=st.sampled_from([200, 6]),
)
# Another call shows a step of the same plan while this one streams.
@example(
    "schema",
    8,
    "create_plan",
    [{"content": "a", "priority": "low", "status": "pending"}] * 4,
    [10],
    [(2, "other")],
    200,
)
async def test_quick_previews_send_what_the_general_way_sends(
    form: str,
    budget: int,
    tool: str,
    steps: list[Any],
    sizes: list[int],
    events: list[tuple[int, str]],
    limit: int,
) -> None:
    # The same stream, the same calls in between (another plan created, this plan changed,
    # sends failing and mending, a second call streaming for a while) to a session that
    # takes the quick way and one that never does: the client gets the same notifications,
    # the model the same results, and the plans end the same.
    sends = RecordingSend(), RecordingSend()
    options: dict[str, Any] = {
        "session_id": "s",
        "form": form,
        "stream_interval": 0,
        "preview_budget": budget,
        "limits": Limits(max_entries=limit),
    }
    quick = CountingQuickPreviews(sends[0], **options)
    sessions: tuple[PlanSession, PlanSession] = quick, WithoutQuickPreviews(sends[1], **options)
    args: dict[str, Any] = {"type": "items", "id": "p", "entries": steps}
    for session in sessions:
        assert (await session.call("create_plan", {"type": "items", "entries": ["Old"]})).ok
        if tool == "update_plan":
            assert (await session.call("create_plan", {**args, "entries": ["Before"]})).ok
    text = json.dumps(args)
    at, turn = 0, 0
    results: tuple[list[ToolResult], list[ToolResult]] = [], []
    while at < len(text):
        fragment = text[at : at + sizes[turn % len(sizes)]]
        at, turn = at + len(fragment), turn + 1
        for (session, send), got in zip(zip(sessions, sends, strict=True), results, strict=True):
            for moment, happening in events:
                if moment != turn:
                    continue
                if happening == "call":
                    got.append(
                        await session.call("update_plan", {"id": "plan-1", "entries": ["X"]})
                    )
                elif happening == "fail":
                    send.fail_with = ConnectionError("down")
                elif happening == "mend":
                    send.fail_with = None
                elif session.is_streaming("other"):
                    got.append(await session.finish("other"))
                else:  # another call showing a step of the same plan
                    await session.feed("other", tool, OTHER)
            await session.feed("c", tool, fragment)
    for (session, send), got in zip(zip(sessions, sends, strict=True), results, strict=True):
        send.fail_with = None
        got.append(await session.finish("c"))
        await session.abort_all()
    assert sends[0].sent == sends[1].sent
    assert [(r.ok, r.content) for r in results[0]] == [(r.ok, r.content) for r in results[1]]
    assert sessions[0].snapshot() == sessions[1].snapshot()
    event(f"previews worked out the quick way: {min(quick.quick, 3)}")
