"""`llm_plans.testing` itself: what it builds is what the real SDKs parse and accept."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx2
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

import llm_plans.providers
import llm_plans.testing
from llm_plans.testing import (
    Broken,
    FakeModelAPI,
    anthropic_client,
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    client_view,
    openai_client,
    responses_events,
    responses_response,
    sse,
)

CALLS = [("call_1", "create_plan", '{"type": "items", "entries": []}')]


def test_payloads_validate_as_the_sdk_models() -> None:
    ChatCompletion.model_validate(chat_completion(CALLS))
    for chunk in chat_chunks(CALLS):
        ChatCompletionChunk.model_validate(chunk)
    Response.model_validate(responses_response(CALLS))
    adapter: TypeAdapter[ResponseStreamEvent] = TypeAdapter(ResponseStreamEvent)
    for event in responses_events(CALLS) + responses_events(CALLS, cut_at=5):
        adapter.validate_python(event)
    Message.model_validate(anthropic_message([("toolu_1", "create_plan", {"type": "items"})]))
    stream: TypeAdapter[RawMessageStreamEvent] = TypeAdapter(RawMessageStreamEvent)
    for event in anthropic_events(CALLS):
        stream.validate_python(event)


def test_sse_framing() -> None:
    assert sse([{"object": "chat.completion.chunk"}]).endswith(b"data: [DONE]\n\n")
    named = sse([{"type": "message_stop"}])
    assert named == b'event: message_stop\ndata: {"type": "message_stop"}\n\n'


async def test_fake_api_serves_in_order_and_records_requests() -> None:
    api = FakeModelAPI(chat_completion(CALLS), sse(chat_chunks(CALLS)))
    client = openai_client(api)
    response = await client.chat.completions.create(model="m", messages=[])
    assert (response.choices[0].message.tool_calls or [])[0].id == "call_1"
    chunks = [
        c async for c in await client.chat.completions.create(model="m", messages=[], stream=True)
    ]
    assert len(chunks) == len(chat_chunks(CALLS))
    assert [r["stream"] for r in api.requests if "stream" in r] == [True]


async def test_broken_stream_fails_after_the_events_it_serves() -> None:
    api = FakeModelAPI(Broken(sse(anthropic_events(CALLS)), after=2))
    seen: list[str] = []

    async def consume() -> None:
        async for event in await anthropic_client(api).messages.create(
            model="m", max_tokens=9, messages=[], stream=True
        ):
            seen.append(event.type)

    with pytest.raises(httpx2.RemoteProtocolError):
        await consume()
    assert seen == ["message_start", "content_block_start"]


def test_client_view_follows_updates_in_either_id_form() -> None:
    plan = {"type": "markdown", "content": "x"}
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "plan_update", "plan": {**plan, "planId": "a"}},
        {"sessionUpdate": "plan_update", "plan": {**plan, "id": "b"}},
        {"sessionUpdate": "plan_removed", "planId": "a"},
    ]
    assert client_view(updates) == {"b": {"id": "b", **plan}}


def test_importing_needs_no_optional_package() -> None:
    code = (
        "import sys; sys.modules.update(openai=None, anthropic=None, httpx2=None)\n"
        "import llm_plans.testing, llm_plans.providers"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_names() -> None:
    assert sorted(llm_plans.testing.__all__) == [
        "Broken",
        "FakeModelAPI",
        "RecordingSend",
        "anthropic_client",
        "anthropic_events",
        "anthropic_message",
        "chat_chunk",
        "chat_chunks",
        "chat_completion",
        "client_view",
        "openai_client",
        "pieces",
        "responses_events",
        "responses_response",
        "sdk_stream",
        "sse",
    ]
    assert sorted(llm_plans.providers.__all__) == [
        "AnthropicStream",
        "Arguments",
        "OpenAIChatStream",
        "OpenAIResponsesStream",
        "ProviderCall",
        "StreamAdapter",
        "parse",
    ]


async def test_sdk_stream_gives_what_each_sdk_client_yields() -> None:
    from anthropic.types import RawMessageStartEvent
    from openai.types.responses import ResponseCompletedEvent

    from llm_plans.testing import sdk_stream

    calls = [("call_1", "create_plan", '{"type": "markdown", "content": "- [ ] a"}')]
    chat = await sdk_stream("chat", llm_plans.testing.chat_chunks(calls))
    assert all(isinstance(c, ChatCompletionChunk) for c in chat)
    assert (
        "".join(
            c.choices[0].delta.tool_calls[0].function.arguments or ""
            for c in chat
            if c.choices and c.choices[0].delta.tool_calls
        )
        == calls[0][2]
    )
    responses = await sdk_stream("responses", llm_plans.testing.responses_events(calls))
    assert isinstance(responses[-1], ResponseCompletedEvent)
    messages = await sdk_stream("anthropic", llm_plans.testing.anthropic_events(calls))
    assert isinstance(messages[0], RawMessageStartEvent)
    with pytest.raises(ValueError, match="chat, responses or anthropic"):
        await sdk_stream("gemini", [])


def test_client_view_reads_the_stable_forms_and_the_draft() -> None:
    updates: list[dict[str, Any]] = [
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "a", "content": "# A", "path": "/w/a.md"},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "file", "id": "b", "uri": "file:///b"}},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "c", "entries": []}},
        {"sessionUpdate": "plan_removed", "planId": "c"},
    ]
    assert client_view(updates) == {
        "a": {"id": "a", "type": "markdown", "content": "# A", "path": "/w/a.md"},
        "b": {"id": "b", "type": "file", "uri": "file:///b"},
    }


def test_client_view_of_whole_notifications_keeps_each_session_apart() -> None:
    items = {"type": "items", "planId": "plan-1", "entries": []}
    sent = [
        {"sessionId": "parent", "update": {"sessionUpdate": "plan_update", "plan": items}},
        {
            "sessionId": "parent",
            "update": {"sessionUpdate": "subagent_update", "sessionId": "child"},
        },
        {"sessionId": "child", "update": {"sessionUpdate": "plan_update", "plan": items}},
    ]
    assert client_view(sent) == {
        "parent": {"plan-1": {"id": "plan-1", "type": "items", "entries": []}},
        "child": {"plan-1": {"id": "plan-1", "type": "items", "entries": []}},
    }


def test_client_view_reads_a_v1_cancelled_step_as_cancelled() -> None:
    entries = [
        {"content": "Cancelled: Try the old parser", "priority": "low", "status": "completed"},
        {"content": "Cancelled: but pending", "priority": "low", "status": "pending"},
    ]
    update = {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "id": "p", "entries": entries},
    }
    [first, second] = client_view([update])["p"]["entries"]
    assert first == {"content": "Try the old parser", "priority": "low", "status": "cancelled"}
    assert second == entries[1]
