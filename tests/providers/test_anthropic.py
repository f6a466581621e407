"""Anthropic Messages: the real SDK client, HTTP mocked at the transport."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam
from pydantic import TypeAdapter
from wire_payloads import Recorder, anthropic_client, message, message_stream

from llm_plans import PlanSession, tools
from llm_plans.providers import AnthropicStream
from llm_plans.testing import Broken, RecordingSend, anthropic_events, sse
from providers.test_compat import assert_client_sees_session
from providers.test_openai import CAPS, CREATE, NOTE, Clocked, non_streamed_last


async def test_round_trip() -> None:
    http = Recorder(
        message(
            [("toolu_1", "create_plan", json.loads(CREATE)), ("toolu_2", "bash", {"command": "ls"})]
        ),
        message([], "end_turn"),
    )
    client = anthropic_client(http)
    session = PlanSession(RecordingSend(), session_id="s", client_capabilities=CAPS)
    messages: list[Any] = [{"role": "user", "content": "Fix the parser"}]
    response = await client.messages.create(
        model="claude-sonnet-5", max_tokens=1024, messages=messages, tools=tools.anthropic()
    )
    messages.append({"role": "assistant", "content": [b.model_dump() for b in response.content]})
    results = []
    for block in response.content:
        if block.type != "tool_use":
            continue
        result = await session.handle(block)
        results.append(
            result or {"type": "tool_result", "tool_use_id": block.id, "content": "a.py"}
        )
    messages.append({"role": "user", "content": results})
    await client.messages.create(
        model="claude-sonnet-5", max_tokens=1024, messages=messages, tools=tools.anthropic()
    )
    sent = http.requests[1]["messages"]
    TypeAdapter(list[MessageParam]).validate_python(sent)
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_1"
    assert sent[2]["content"][0]["is_error"] is False
    assert http.requests[0]["tools"][0]["strict"] is False


async def test_stream_shows_steps_before_the_stream_ends() -> None:
    client = anthropic_client(Recorder(message_stream([("toolu_1", "create_plan", CREATE)])))
    send = Clocked()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = AnthropicStream(session)
    async for event in await client.messages.create(
        model="m", max_tokens=99, messages=[], stream=True
    ):
        send.events += 1
        await adapter.on_event(event)
    assert send.at[0] < send.events / 2
    assert send.sent[-1] == await non_streamed_last(CREATE)
    assert adapter.results[0]["tool_use_id"] == "toolu_1"


async def test_stream_helper_with_parallel_tool_uses() -> None:
    calls = [("toolu_1", "create_plan", CREATE), ("toolu_2", "create_plan", NOTE)]
    client = anthropic_client(Recorder(message_stream(calls)))
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=None, stream_interval=0)
    adapter = AnthropicStream(session)
    async with client.messages.stream(model="m", max_tokens=99, messages=[]) as stream:
        async for event in stream:
            await adapter.on_event(event)
        final = await stream.get_final_message()
    assert [b.type for b in final.content] == ["tool_use", "tool_use"]
    results = await adapter.finish()
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    # The second plan's steps say whose they are (its markdown heading).
    assert [e["content"] for e in send.updates[-1]["entries"]][-2:] == [
        "[Notes] Check the parser",
        "[Notes] Ask about API",
    ]


async def test_truncated_tool_use_is_reported_as_cut_off() -> None:
    client = anthropic_client(
        Recorder(
            message_stream([("toolu_1", "create_plan", CREATE)], stop="max_tokens", cut_at=150),
            message([("toolu_1", "create_plan", {"type": "items"})], stop="max_tokens"),
        )
    )
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = AnthropicStream(session)
    async for event in await client.messages.create(
        model="m", max_tokens=99, messages=[], stream=True
    ):
        await adapter.on_event(event)
    [result] = await adapter.finish()
    assert result["is_error"] is True
    assert "cut off" in result["content"]
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}

    response = await client.messages.create(model="m", max_tokens=99, messages=[])
    block = response.content[1]
    handled = await session.handle(block, truncated=response.stop_reason == "max_tokens")
    assert handled is not None
    assert "cut off" in handled["content"]
    assert "required" not in handled["content"]


async def test_prefixed_tool_names_stream_and_keep_their_name() -> None:
    body = message_stream([("toolu_1", "mcp__plans__create_plan", CREATE)])
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    async with AnthropicStream(session) as adapter:
        async for event in await anthropic_client(Recorder(body)).messages.create(
            model="m", max_tokens=99, messages=[], stream=True
        ):
            await adapter.on_event(event)
        [result] = await adapter.finish()
    assert result["tool_use_id"] == "toolu_1"
    assert result["is_error"] is False
    assert list(session.plans) == ["plan-1"]
    assert_client_sees_session(send, session)


async def test_gateway_sends_the_whole_input_at_block_start() -> None:
    events = anthropic_events([("toolu_1", "create_plan", CREATE)])
    events = [e for e in events if e["type"] != "content_block_delta"]
    events[1]["content_block"]["input"] = json.loads(CREATE)
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = AnthropicStream(session)
    async for event in await anthropic_client(Recorder(sse(events))).messages.create(
        model="m", max_tokens=99, messages=[], stream=True
    ):
        await adapter.on_event(event)
    [result] = adapter.results
    assert result["is_error"] is False
    assert_client_sees_session(send, session)


async def test_broken_stream_rolls_back_and_the_retry_reuses_the_adapter() -> None:
    calls = [("toolu_1", "create_plan", CREATE)]
    http = Recorder(Broken(message_stream(calls, size=24), after=9), message_stream(calls))
    client = anthropic_client(http)
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = AnthropicStream(session)
    with pytest.raises(httpx2.RemoteProtocolError):  # the SDK does not wrap it mid-stream
        await consume(client, adapter)
    assert send.updates[0]["sessionUpdate"] == "plan_update"  # a preview showed
    await consume(client, adapter)  # message_start drops what the broken response left
    [result] = await adapter.finish()
    assert result["tool_use_id"] == "toolu_1"
    assert list(session.plans) == ["plan-1"]
    assert_client_sees_session(send, session)


async def consume(client: anthropic.AsyncAnthropic, adapter: AnthropicStream) -> None:
    async for event in await client.messages.create(
        model="m", max_tokens=99, messages=[], stream=True
    ):
        await adapter.on_event(event)


async def test_a_finish_cancelled_while_it_waits_for_the_session_is_rolled_back() -> None:
    # The turn is cancelled while the call's finish waits for the session (another call
    # holds it): the adapter's exit must still abort the call, or its preview stays shown
    # and the session keeps streaming it.
    send, holding, release = RecordingSend(), asyncio.Event(), asyncio.Event()

    async def slow(params: dict[str, Any]) -> None:
        await send(params)
        if params["update"]["plan"]["planId"] == "other":
            holding.set()
            await release.wait()

    session = PlanSession(slow, session_id="s", client_capabilities=CAPS, stream_interval=0)
    events = anthropic_events([("toolu_1", "create_plan", CREATE)], size=8)
    stop = next(k for k, e in enumerate(events) if e["type"] == "content_block_stop")
    reached_stop = asyncio.Event()

    async def turn() -> None:
        async with AnthropicStream(session) as adapter:
            for k, event in enumerate(events):
                if k == stop:
                    reached_stop.set()
                    await holding.wait()  # the other call holds the session meanwhile
                await adapter.on_event(event)

    streaming = asyncio.ensure_future(turn())
    await reached_stop.wait()
    other = asyncio.ensure_future(
        session.call("create_plan", {"type": "items", "id": "other", "entries": ["x"]})
    )
    await holding.wait()
    for _ in range(5):  # the finish now waits for the session
        await asyncio.sleep(0)
    streaming.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await streaming
    assert (await other).ok
    assert session._streams.ids() == []  # no call left streaming
    assert list(session.plans) == ["other"]
    assert_client_sees_session(send, session)
