"""OpenAI-compatible servers: every shape of issue 11's table, through the real `openai`
client on a mocked transport, streamed and not. Each test checks the result the model
reads, the notifications, and that the client's final view equals `session.plans`."""

from __future__ import annotations

import copy
import json
from typing import Any

import openai
import pytest

from llm_plans import PlanSession
from llm_plans.providers import OpenAIChatStream, OpenAIResponsesStream
from llm_plans.testing import (
    Broken,
    FakeModelAPI,
    RecordingSend,
    chat_chunk,
    chat_chunks,
    chat_completion,
    client_view,
    openai_client,
    responses_events,
    sse,
)

STEPS = ["Reproduce the bug", "Fix the parser", "Run the tests"]
PLAN: dict[str, Any] = {
    "type": "items",
    "id": None,
    "entries": [{"content": s, "priority": None, "status": None} for s in STEPS],
}
CREATE = json.dumps(PLAN)
NOTE = json.dumps({"type": "markdown", "id": "notes", "content": "## Notes\n- [ ] Ask"})


def new_session() -> tuple[PlanSession, RecordingSend]:
    send = RecordingSend()
    return PlanSession(
        send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0
    ), send


def assert_client_sees_session(send: RecordingSend, session: PlanSession) -> None:
    plans = {
        plan_id: plan.model_dump(mode="json", by_alias=True, exclude_none=True)
        for plan_id, plan in session.plans.items()
    }
    assert client_view(send.updates) == plans


async def chat_stream(session: PlanSession, chunks: list[dict[str, Any]], **kw: Any) -> Any:
    client = openai_client(FakeModelAPI(sse(chunks)))
    async with OpenAIChatStream(session, **kw) as plans:
        async for chunk in await client.chat.completions.create(
            model="m", messages=[], stream=True
        ):
            await plans.on_event(chunk)
        await plans.finish()
    return plans


def tool_delta(chunk: dict[str, Any]) -> dict[str, Any]:
    return chunk["choices"][0]["delta"]["tool_calls"][0]  # type: ignore[no-any-return]


# ---- tool calls without "type" (Mistral, Ollama native) -------------------------------------


async def test_chat_calls_without_type_are_plan_calls() -> None:
    body = chat_completion([("gSIMJiOkT", "create_plan", CREATE), ("x1", "read_file", "{}")])
    for call in body["choices"][0]["message"]["tool_calls"]:
        del call["type"]
    session, send = new_session()
    response = await openai_client(FakeModelAPI(body)).chat.completions.create(
        model="m", messages=[]
    )
    plan_call, other = response.choices[0].message.tool_calls or []
    assert session.handles(plan_call)
    assert not session.handles(other)
    result = await session.handle(plan_call)
    assert result == {
        "role": "tool",
        "tool_call_id": "gSIMJiOkT",
        "content": result and result["content"],
    }
    assert result["content"].startswith('Created plan "plan-1"')
    assert await session.handle(other) is None
    assert_client_sees_session(send, session)


async def test_ollama_native_calls_and_prefixed_names() -> None:
    session, send = new_session()
    call = {"function": {"name": "mcp__plans__create_plan", "arguments": PLAN}}
    assert session.handles(call)
    result = await session.handle(call)
    assert result is not None
    assert result["role"] == "tool"
    assert result["tool_name"] == "mcp__plans__create_plan"
    assert result["content"].startswith('Created plan "plan-1"')
    assert send.updates[-1]["plan"]["entries"][0]["content"] == STEPS[0]
    assert await session.handle({"function": {"name": "read_file", "arguments": {}}}) is None
    assert_client_sees_session(send, session)


async def test_mistral_stream_sends_the_whole_call_in_its_last_chunk() -> None:
    call = {"id": "gSIMJiOkT", "function": {"name": "create_plan", "arguments": CREATE}}
    chunks = [
        chat_chunk({"role": "assistant", "content": ""}),
        chat_chunk({"content": None, "tool_calls": [call]}, "tool_calls"),
    ]
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    [result] = plans.results
    assert result["tool_call_id"] == "gSIMJiOkT"
    assert result["content"].startswith('Created plan "plan-1"')
    assert_client_sees_session(send, session)


# ---- keying: ids without index, empty ids, changing index --------------------------------


@pytest.mark.parametrize("index", ["none", "zero"])
async def test_parallel_calls_with_distinct_ids_and_no_distinct_index(index: str) -> None:
    chunks = chat_chunks([("call_a", "create_plan", CREATE), ("call_b", "create_plan", NOTE)])
    for chunk in chunks[1:-1]:
        delta = tool_delta(chunk)
        if index == "none":
            del delta["index"]
        else:
            delta["index"] = 0
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert [r["tool_call_id"] for r in plans.results] == ["call_a", "call_b"]
    assert all("Created" in r["content"] for r in plans.results)
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


async def test_empty_ids_streamed_and_not() -> None:
    chunks = chat_chunks([("", "create_plan", CREATE)])
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert plans.results[0]["tool_call_id"] == ""
    assert plans.results[0]["content"].startswith('Created plan "plan-1"')

    body = chat_completion([("", "create_plan", NOTE)])
    response = await openai_client(FakeModelAPI(body)).chat.completions.create(
        model="m", messages=[]
    )
    [call] = response.choices[0].message.tool_calls or []
    result = await session.handle(call)
    assert result is not None
    assert result["tool_call_id"] == ""
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


async def test_two_calls_with_empty_ids_at_one_index_are_two_calls() -> None:
    whole = [
        chat_chunk(
            {"tool_calls": [{"id": "", "function": {"name": "create_plan", "arguments": a}}]}
        )
        for a in (CREATE, NOTE)
    ]
    session, send = new_session()
    plans = await chat_stream(session, [*whole, chat_chunk({}, "tool_calls")])
    assert len(plans.results) == 2
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


async def test_index_that_changes_after_the_first_delta() -> None:
    chunks = chat_chunks([("call_1", "create_plan", CREATE)])
    for chunk in chunks[2:-1]:
        tool_delta(chunk)["index"] = 1  # SGLang: the first delta said 0
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert plans.results[0]["content"].startswith('Created plan "plan-1"')
    assert len(send.updates) > 1  # previews streamed, then the final update
    assert_client_sees_session(send, session)


async def test_alibaba_repeats_empty_ids_and_a_trailing_empty_delta() -> None:
    chunks = chat_chunks([("call_1", "create_plan", CREATE)])
    for chunk in chunks[2:-1]:
        tool_delta(chunk).update(id="", type="function")
    tail = {"function": {"arguments": ""}, "index": 0, "id": "", "type": "function"}
    chunks.insert(-1, chat_chunk({"tool_calls": [tail]}))
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert [r["tool_call_id"] for r in plans.results] == ["call_1"]
    assert_client_sees_session(send, session)


# ---- finish reasons, dict arguments --------------------------------------------------------


async def test_empty_finish_reason_on_every_chunk_does_not_finish() -> None:
    chunks = chat_chunks([("call_1", "create_plan", CREATE)])
    for chunk in chunks:
        chunk["choices"][0]["finish_reason"] = ""
    session, send = new_session()
    plans = await chat_stream(session, chunks)  # finished by `finish()` at the stream's end
    [result] = plans.results
    assert result["content"].startswith('Created plan "plan-1"')
    assert [e.content for e in session.plans["plan-1"].entries] == STEPS  # type: ignore[union-attr]
    assert_client_sees_session(send, session)


async def test_dict_arguments_in_a_streamed_delta() -> None:
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": "create_plan", "arguments": PLAN}
    session, send = new_session()
    plans = await chat_stream(session, [chat_chunk({"tool_calls": [call]}, "tool_calls")])
    assert plans.results[0]["content"].startswith('Created plan "plan-1"')
    assert_client_sees_session(send, session)


# ---- Responses: arguments only in final events (LM Studio) ---------------------------------


@pytest.mark.parametrize("final", ["arguments.done", "output_item.done"])
async def test_responses_arguments_only_in_final_events(final: str) -> None:
    events = [
        e for e in responses_events([("call_1", "create_plan", CREATE)]) if "delta" not in e["type"]
    ]
    if final == "output_item.done":
        events = [e for e in events if not e["type"].endswith("arguments.done")]
    session, send = new_session()
    client = openai_client(FakeModelAPI(sse(events)))
    async with OpenAIResponsesStream(session) as plans:
        async for event in await client.responses.create(model="m", input="x", stream=True):
            await plans.on_event(event)
        await plans.finish()
    [result] = plans.results
    assert result == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": result["output"],
    }
    assert result["output"].startswith('Created plan "plan-1"')
    assert_client_sees_session(send, session)


# ---- interrupted streams, reused ids --------------------------------------------------------


def bedrock_events(arguments: str) -> list[dict[str, Any]]:
    """Bedrock's Responses stream: every response's first call is `call_0`."""
    return responses_events([("call_0", "create_plan", arguments)], size=24)


async def test_broken_responses_stream_rolls_back_and_call_0_is_reused_safely() -> None:
    first = sse(bedrock_events(CREATE))
    api = FakeModelAPI(Broken(first, after=8), sse(bedrock_events(NOTE)))
    client = openai_client(api)
    session, send = new_session()
    with pytest.raises(openai.APIConnectionError):
        await responses_stream_on(client, session)
    assert any(u["sessionUpdate"] == "plan_update" for u in send.updates)  # a preview showed
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    assert not session.is_streaming("call_0")
    assert_client_sees_session(send, session)

    [result] = await responses_stream_on(client, session)  # the retry reuses call_0
    assert result["call_id"] == "call_0"
    assert result["output"].startswith('Created plan "notes"')
    assert list(session.plans) == ["notes"]
    assert_client_sees_session(send, session)


async def responses_stream_on(client: Any, session: PlanSession) -> list[dict[str, Any]]:
    async with OpenAIResponsesStream(session) as plans:
        async for event in await client.responses.create(model="m", input="x", stream=True):
            await plans.on_event(event)
        return await plans.finish()


async def test_one_adapter_across_responses_drops_what_the_broken_one_left() -> None:
    session, send = new_session()
    plans = OpenAIResponsesStream(session)
    for event in bedrock_events(CREATE)[:8]:  # the stream broke here; no abort was called
        await plans.on_event(event)
    assert send.updates[0]["sessionUpdate"] == "plan_update"
    for event in bedrock_events(NOTE):
        await plans.on_event(event)
    assert [r["call_id"] for r in plans.results] == ["call_0"]
    assert list(session.plans) == ["notes"]
    assert_client_sees_session(send, session)


async def test_broken_chat_stream_rolls_back_and_call_0_is_reused_safely() -> None:
    chunks = chat_chunks([("call_0", "create_plan", CREATE)], size=24)
    api = FakeModelAPI(
        Broken(sse(chunks), after=8), sse(chat_chunks([("call_0", "create_plan", NOTE)]))
    )
    client = openai_client(api)
    session, send = new_session()
    with pytest.raises(openai.APIConnectionError):
        await chat_stream_on(client, session)
    assert send.updates[0]["sessionUpdate"] == "plan_update"  # a preview showed
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    [result] = await chat_stream_on(client, session)
    assert result["tool_call_id"] == "call_0"
    assert list(session.plans) == ["notes"]
    assert_client_sees_session(send, session)


async def chat_stream_on(client: Any, session: PlanSession) -> list[dict[str, Any]]:
    async with OpenAIChatStream(session) as plans:
        async for chunk in await client.chat.completions.create(
            model="m", messages=[], stream=True
        ):
            await plans.on_event(chunk)
        return await plans.finish()


async def test_session_abort_all_after_a_cancelled_turn() -> None:
    session, send = new_session()
    plans = OpenAIChatStream(session)
    for chunk in chat_chunks([("call_1", "create_plan", CREATE)], size=24)[:4]:
        await plans.on_event(chunk)
    assert len(await session.abort_all()) == 1
    assert not await plans.abort()  # nothing left: the session already dropped it
    assert session.plans == {}
    assert_client_sees_session(send, session)


# ---- n > 1 choices ---------------------------------------------------------------------------


def two_choices() -> list[dict[str, Any]]:
    """Choice 0 and choice 1 interleaved; choice 0 finishes while choice 1 is open."""
    zero = chat_chunks([("call_a", "create_plan", CREATE)], choice=0)
    one = chat_chunks([("call_b", "create_plan", NOTE)], choice=1, size=4)
    out = []
    for n in range(max(len(zero), len(one))):
        out += [c[n] for c in (zero, one) if n < len(c)]
    return copy.deepcopy(out)


async def test_each_choice_finishes_on_its_own() -> None:
    session, send = new_session()
    plans = await chat_stream(session, two_choices())
    assert [r["tool_call_id"] for r in plans.results_for(0)] == ["call_a"]
    [result] = plans.results_for(1)
    assert result["content"].startswith('Created plan "notes"')
    assert set(session.plans) == {"plan-1", "notes"}
    assert_client_sees_session(send, session)


async def test_following_one_choice() -> None:
    session, send = new_session()
    plans = await chat_stream(session, two_choices(), choice=1)
    assert [r["tool_call_id"] for r in plans.results] == ["call_b"]
    assert list(session.plans) == ["notes"]
    assert_client_sees_session(send, session)


async def test_a_name_repeated_on_an_empty_delta_is_not_a_call() -> None:
    chunks = chat_chunks([("call_1", "create_plan", CREATE)])
    echo = {"index": 0, "id": "", "function": {"name": "create_plan", "arguments": ""}}
    chunks.insert(-1, chat_chunk({"tool_calls": [echo]}))
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert [r["tool_call_id"] for r in plans.results] == ["call_1"]
    assert_client_sees_session(send, session)


async def test_calls_without_ids_at_one_index_streamed_in_fragments() -> None:
    chunks = chat_chunks([("", "create_plan", CREATE), ("", "create_plan", NOTE)])
    for chunk in chunks[1:-1]:
        del tool_delta(chunk)["index"]
    session, send = new_session()
    plans = await chat_stream(session, chunks)
    assert [r["tool_call_id"] for r in plans.results] == ["", ""]
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


async def test_bedrock_framing_puts_data_before_the_event_line() -> None:
    blocks = sse(bedrock_events(CREATE)).decode().split("\n\n")
    swapped = ["\n".join(reversed(b.split("\n"))) for b in blocks if b]
    body = ("\n\n".join(swapped) + "\n\n").encode()
    assert body.startswith(b"data: ")
    session, send = new_session()
    [result] = await responses_stream_on(openai_client(FakeModelAPI(body)), session)
    assert result["call_id"] == "call_0"
    assert result["output"].startswith('Created plan "plan-1"')
    assert_client_sees_session(send, session)


async def test_a_configured_prefix_streamed_and_not() -> None:
    send = RecordingSend()
    session = PlanSession(
        send, session_id="s", client_capabilities={"plan": {}}, tool_prefixes=("", "plans.")
    )
    call: dict[str, Any] = {
        "id": "c1",
        "function": {"name": "plans.create_plan", "arguments": CREATE},
    }
    assert (await session.handle(call) or {})["tool_call_id"] == "c1"
    assert (
        await session.handle({**call, "function": {**call["function"], "name": "x.create_plan"}})
        is None
    )
    plans = await chat_stream(session, chat_chunks([("c2", "plans.create_plan", NOTE)]))
    assert [r["tool_call_id"] for r in plans.results] == ["c2"]
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


# ---- the calls told apart, for the history ----------------------------------------------------


async def test_tool_calls_are_the_calls_as_told_apart() -> None:
    # Ollama's shape: parallel calls at index 0 with distinct ids, one with object arguments,
    # then a repeated name with no arguments that is no call (Gemini's "" ids).
    read = {"path": "a.py"}

    def whole(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
        call = {"index": 0, "id": call_id, "function": {"name": name, "arguments": arguments}}
        return chat_chunk({"tool_calls": [call]})

    chunks = [
        whole("call_p", "create_plan", CREATE),
        whole("call_r", "read_file", read),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"name": "read_file"}}]}),
        chat_chunk({}, "tool_calls"),
    ]
    session, _ = new_session()
    plans = await chat_stream(session, chunks)
    assert [(c["id"], c["type"], c["function"]) for c in plans.tool_calls()] == [
        ("call_p", "function", {"name": "create_plan", "arguments": CREATE}),
        ("call_r", "function", {"name": "read_file", "arguments": json.dumps(read)}),
    ]
    assert plans.tool_calls(choice=1) == []


async def test_tool_calls_of_one_choice() -> None:
    session, _ = new_session()
    plans = await chat_stream(session, two_choices())
    assert [c["id"] for c in plans.tool_calls()] == ["call_a", "call_b"]
    [call] = plans.tool_calls(choice=1)
    assert call["function"] == {"name": "create_plan", "arguments": NOTE}
