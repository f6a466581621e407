"""OpenAI Chat Completions and Responses: real SDK clients, HTTP mocked at the transport."""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter
from wire_payloads import (
    Recorder,
    chat_completion,
    chat_stream,
    openai_client,
    responses_response,
    responses_stream,
)

from llm_plans import PlanSession, tools
from llm_plans.providers import OpenAIChatStream, OpenAIResponsesStream
from llm_plans.testing import RecordingSend

STEPS = [f"Step number {n} of the work" for n in range(1, 6)]
CREATE = json.dumps(
    {
        "type": "items",
        "id": None,
        "entries": [{"content": s, "priority": None, "status": None} for s in STEPS],
        "content": None,
        "uri": None,
    }
)
NOTE = json.dumps(
    {
        "type": "markdown",
        "id": "notes",
        "entries": None,
        "content": "## Notes\n- [ ] Check the parser\n- [ ] Ask about API",
        "uri": None,
    }
)
CAPS: dict[str, Any] = {"plan": {}}


class Clocked(RecordingSend):
    """Records, with each notification, how many stream events had been consumed."""

    def __init__(self) -> None:
        super().__init__()
        self.events = 0
        self.at: list[int] = []

    async def __call__(self, params: dict[str, Any]) -> None:
        await super().__call__(params)
        self.at.append(self.events)


async def non_streamed_last(arguments: str) -> dict[str, Any]:
    send = RecordingSend()
    await PlanSession(send, session_id="s", client_capabilities=CAPS).call("create_plan", arguments)
    return send.sent[-1]


async def test_chat_round_trip() -> None:
    done = chat_completion([], "stop")
    done["choices"][0]["message"]["content"] = "All set."
    http = Recorder(
        chat_completion(
            [("call_1", "create_plan", CREATE), ("call_2", "read_file", '{"path": "a.py"}')]
        ),
        done,
    )
    client = openai_client(http)
    session = PlanSession(RecordingSend(), session_id="s", client_capabilities=CAPS)
    messages: list[Any] = [{"role": "user", "content": "Fix the parser"}]
    response = await client.chat.completions.create(
        model="gpt-4.1", messages=messages, tools=tools.openai_chat()
    )
    message = response.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    assert message.tool_calls is not None
    for call in message.tool_calls:
        if session.handles(call):
            messages.append(await session.handle(call))
        else:
            assert await session.handle(call) is None  # not ours: the agent runs it
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "x = 1"})
    await client.chat.completions.create(
        model="gpt-4.1", messages=messages, tools=tools.openai_chat()
    )
    sent = http.requests[1]
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(sent["messages"])
    assert sent["messages"][2]["role"] == "tool"
    assert sent["messages"][2]["tool_call_id"] == "call_1"
    assert sent["messages"][2]["content"].startswith('Created plan "plan-1"')
    assert sent["tools"][0]["function"]["strict"] is True
    assert list(session.plans) == ["plan-1"]


async def test_chat_stream_shows_steps_before_the_stream_ends() -> None:
    client = openai_client(Recorder(chat_stream([("call_1", "create_plan", CREATE)])))
    send = Clocked()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = OpenAIChatStream(session)
    stream = await client.chat.completions.create(
        model="gpt-4.1", messages=[], stream=True, tools=tools.openai_chat()
    )
    async for chunk in stream:
        send.events += 1
        await adapter.on_event(chunk)
    results = adapter.results
    assert send.at[0] < send.events / 2  # the first step showed early in the stream
    assert len(send.sent) >= 5  # one per completed step, then the final
    assert send.sent[-1] == await non_streamed_last(CREATE)
    assert results[0]["role"] == "tool"
    assert results[0]["tool_call_id"] == "call_1"


async def test_chat_stream_helper_and_parallel_calls() -> None:
    calls = [("call_1", "create_plan", CREATE), ("call_2", "create_plan", NOTE)]
    client = openai_client(Recorder(chat_stream(calls)))
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = OpenAIChatStream(session)
    async with client.chat.completions.stream(
        model="gpt-4.1", messages=[], tools=tools.openai_chat()
    ) as stream:
        async for event in stream:
            await adapter.on_event(event)
    results = await adapter.finish()
    assert [r["tool_call_id"] for r in results] == ["call_1", "call_2"]
    assert list(session.plans) == ["plan-1", "notes"]
    ids = {u["plan"]["planId"] for u in send.updates}
    assert ids == {"plan-1", "notes"}


async def test_chat_truncated_call_is_reported_as_cut_off() -> None:
    cut = CREATE[: len(CREATE) // 2]
    client = openai_client(
        Recorder(
            chat_stream([("call_1", "create_plan", cut)], finish="length"),
            chat_completion([("call_1", "create_plan", cut)], "length"),
        )
    )
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = OpenAIChatStream(session)
    async for chunk in await client.chat.completions.create(model="m", messages=[], stream=True):
        await adapter.on_event(chunk)
    [result] = adapter.results
    assert "cut off" in result["content"]
    assert "missing" not in result["content"]
    assert session.plans == {}
    # the previews of the cut call are rolled back
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    response = await client.chat.completions.create(model="m", messages=[])
    [call] = response.choices[0].message.tool_calls or []
    handled = await session.handle(call, truncated=response.choices[0].finish_reason == "length")
    assert handled is not None
    assert "cut off" in handled["content"]


async def test_responses_round_trip_and_parallel_calls() -> None:
    http = Recorder(
        responses_response(
            [
                ("call_1", "create_plan", CREATE),
                (
                    "call_2",
                    "update_plan",
                    json.dumps(
                        {
                            "id": "plan-1",
                            "type": None,
                            "entries": None,
                            "content": None,
                            "uri": None,
                            "changes": [
                                {
                                    "step": 1,
                                    "status": "in_progress",
                                    "priority": None,
                                    "content": None,
                                }
                            ],
                        }
                    ),
                ),
            ]
        ),
        responses_response([]),
    )
    client = openai_client(http)
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS)
    items: list[Any] = [{"role": "user", "content": "Fix the parser"}]
    response = await client.responses.create(
        model="gpt-4.1", input=items, tools=tools.openai_responses()
    )
    for item in response.output:
        items.append(item.model_dump(exclude_none=True))
        result = await session.handle(item)
        assert result is not None
        items.append(result)
    await client.responses.create(model="gpt-4.1", input=items, tools=tools.openai_responses())
    sent = http.requests[1]["input"]
    TypeAdapter(ResponseInputParam).validate_python(sent)
    assert [i.get("type") for i in sent[1:]] == ["function_call", "function_call_output"] * 2
    assert sent[4]["call_id"] == "call_2"
    assert sent[4]["output"].startswith('Updated plan "plan-1"')
    assert "in_progress" in sent[4]["output"]
    assert send.updates[-1]["plan"]["entries"][0]["status"] == "in_progress"


async def test_responses_stream_and_truncation() -> None:
    client = openai_client(
        Recorder(
            responses_stream([("call_1", "create_plan", CREATE)]),
            responses_stream([("call_2", "create_plan", NOTE)], cut_at=40),
        )
    )
    send = Clocked()
    session = PlanSession(send, session_id="s", client_capabilities=CAPS, stream_interval=0)
    adapter = OpenAIResponsesStream(session)
    async for event in await client.responses.create(model="m", input="x", stream=True):
        send.events += 1
        await adapter.on_event(event)
    assert send.at[0] < send.events / 2
    assert send.sent[-1] == await non_streamed_last(CREATE)
    assert adapter.results[0]["type"] == "function_call_output"

    cut = OpenAIResponsesStream(session)
    async for event in await client.responses.create(model="m", input="x", stream=True):
        await cut.on_event(event)
    [result] = await cut.finish()
    assert "cut off" in result["output"]
    assert list(session.plans) == ["plan-1"]
