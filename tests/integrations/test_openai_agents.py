"""`llm_plans.integrations.openai_agents`: the plan tools in the OpenAI Agents SDK.

The model is the SDK's own `OpenAIResponsesModel` on an `openai` client whose HTTP transport
serves Responses API payloads in their real wire format.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import todo_write
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunConfig, Runner
from client_view import ClientView, expected
from integration_pipe import run_example
from plan_kinds import items_plan
from registry import NAMES
from wire_payloads import (
    Recorder,
    chat_stream,
    openai_client,
    responses_response,
    responses_stream,
    sse,
)

from llm_plans import ConfigurationError, PlanSession, tools
from llm_plans.integrations.openai_agents import PlanPreviews, plan_tools
from llm_plans.testing import RecordingSend

CREATE = json.dumps(
    {
        "type": "items",
        "id": None,
        "entries": [
            {"content": "Reproduce", "priority": None, "status": "in_progress"},
            {"content": "Fix", "priority": "high", "status": None},
            {"content": "Test", "priority": None, "status": None},
        ],
        "content": None,
        "uri": None,
    }
)
UPDATE = json.dumps(
    {
        "id": "plan-1",
        "type": None,
        "entries": None,
        "content": None,
        "uri": None,
        "changes": [{"step": 1, "status": "completed", "priority": None, "content": None}],
    }
)
REMOVE = json.dumps({"id": "plan-1"})
NO_TRACES = RunConfig(tracing_disabled=True)


def text_response(text: str) -> dict[str, Any]:
    body = responses_response([])
    body["output"] = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]
    return body


def text_stream(text: str) -> bytes:
    final = text_response(text)
    return sse(
        [
            {"type": "response.created", "sequence_number": 0, "response": responses_response([])},
            {"type": "response.completed", "sequence_number": 1, "response": final},
        ],
        named=True,
    )


def agent(session: PlanSession, http: Recorder) -> Agent[Any]:
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=openai_client(http))
    # [*...]: Agent takes a list[Tool], which a list[FunctionTool] is not (list is invariant).
    return Agent(
        name="coder", instructions="Plan, then work.", model=model, tools=[*plan_tools(session)]
    )


def outputs(http: Recorder) -> list[str]:
    """The function call outputs the model was sent, in order."""
    return [
        item["output"]
        for item in http.requests[-1]["input"]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)


async def test_create_update_remove_then_answer(session: PlanSession, send: RecordingSend) -> None:
    http = Recorder(
        responses_response([("call_1", "create_plan", CREATE)]),
        responses_response([("call_2", "update_plan", UPDATE)]),
        responses_response([("call_3", "remove_plan", REMOVE)]),
        text_response("Done."),
    )
    result = await Runner.run(agent(session, http), "fix it", run_config=NO_TRACES)
    assert result.final_output == "Done."
    assert [u["sessionUpdate"] for u in send.updates] == ["plan_update"] * 2 + ["plan_removed"]
    assert send.updates[1]["plan"]["entries"][0]["status"] == "completed"
    said = outputs(http)
    assert said[0].startswith('Created plan "plan-1"')
    assert said[2].startswith('Removed plan "plan-1"')


async def test_tools_are_strict_with_llm_plans_schemas(session: PlanSession) -> None:
    http = Recorder(text_response("Hi."))
    await Runner.run(agent(session, http), "hi", run_config=NO_TRACES)
    sent = http.requests[0]["tools"]
    assert sent == [
        {
            "type": "function",
            "name": name,
            "description": tools.description(name),
            "parameters": tools.schema(name, all_required=True),
            "strict": True,
        }
        for name in tools.NAMES
    ]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (UPDATE.replace('"plan-1"', '"nope"'), '"nope"'),
        (UPDATE.replace('"completed"', '"blocked"'), '"blocked"'),
        ('{"id": "plan-1", "changes": [', "cut off"),
    ],
)
async def test_invalid_calls_return_the_rejection_and_the_run_goes_on(
    session: PlanSession, send: RecordingSend, arguments: str, named: str
) -> None:
    http = Recorder(
        responses_response([("call_1", "create_plan", CREATE)]),
        responses_response([("call_2", "update_plan", arguments)]),
        responses_response([("call_3", "update_plan", arguments)]),
        responses_response([("call_4", "update_plan", UPDATE)]),
        text_response("Done."),
    )
    result = await Runner.run(agent(session, http), "fix it", run_config=NO_TRACES)
    assert result.final_output == "Done."
    expected = (await session.call("update_plan", arguments)).content
    said = outputs(http)
    assert said[1] == said[2] == expected
    assert named in expected
    assert len(send.updates) == 2
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"


async def test_doubly_encoded_arguments_are_repaired(session: PlanSession) -> None:
    http = Recorder(
        responses_response([("call_1", "create_plan", json.dumps(CREATE))]), text_response("ok")
    )
    await Runner.run(agent(session, http), "fix it", run_config=NO_TRACES)
    assert outputs(http)[0].startswith('Created plan "plan-1"')


async def test_live_previews_apply_each_call_once(
    session: PlanSession, send: RecordingSend
) -> None:
    http = Recorder(
        responses_stream([("call_1", "create_plan", CREATE)]),
        responses_stream([("call_2", "update_plan", UPDATE)]),
        text_stream("Done."),
    )
    previews = PlanPreviews(session)
    result = Runner.run_streamed(agent(session, http), "fix it", run_config=NO_TRACES)
    async for event in result.stream_events():
        await previews.on_event(event)
    assert result.final_output == "Done."
    sizes = [len(u["plan"]["entries"]) for u in send.updates]
    assert sizes[:2] == [1, 2]  # steps reached the client while the model wrote them
    assert list(session.plans) == ["plan-1"]  # one plan: the call was applied once
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert outputs(http)[0].startswith('Created plan "plan-1"')


async def test_a_slow_consumer_still_applies_each_call_once(
    session: PlanSession, send: RecordingSend
) -> None:
    http = Recorder(
        responses_stream([("call_1", "create_plan", CREATE)]),
        responses_stream([("call_2", "update_plan", UPDATE)]),
        text_stream("Done."),
    )
    previews = PlanPreviews(session)
    result = Runner.run_streamed(agent(session, http), "fix it", run_config=NO_TRACES)
    events = [event async for event in result.stream_events()]  # consumed after the run
    for event in events:
        await previews.on_event(event)
    assert list(session.plans) == ["plan-1"]
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert not session.is_streaming("call_1")
    assert not session.is_streaming("call_2")
    assert [u["sessionUpdate"] for u in send.updates] == ["plan_update", "plan_update"]


async def test_a_reused_call_id_starts_afresh(session: PlanSession) -> None:
    previews = PlanPreviews(session)
    for _ in range(2):
        http = Recorder(responses_stream([("call_1", "create_plan", CREATE)]), text_stream("ok"))
        result = Runner.run_streamed(agent(session, http), "plan", run_config=NO_TRACES)
        async for event in result.stream_events():
            await previews.on_event(event)
    assert list(session.plans) == ["plan-1", "plan-2"]
    assert [e.content for e in items_plan(session.plans["plan-2"]).entries] == [
        "Reproduce",
        "Fix",
        "Test",
    ]


@pytest.mark.parametrize("caps", [{"planCapabilities": {}}, {}])
async def test_example_over_an_acp_pipe(caps: dict[str, Any]) -> None:
    client, stop = await run_example("openai_agents_agent", caps)
    assert stop == "end_turn"
    plan = [u for u in client.updates if u["sessionUpdate"].startswith("plan")]
    if caps:
        assert plan[-1] == {"sessionUpdate": "plan_removed", "id": "plan-1"}
    else:
        assert plan[-1] == {"sessionUpdate": "plan", "entries": []}
    assert client.updates[-1]["sessionUpdate"] == "agent_message_chunk"


async def test_live_previews_with_a_chat_completions_model(
    session: PlanSession, send: RecordingSend
) -> None:
    done = chat_stream([], finish="stop")
    http = Recorder(
        chat_stream([("call_1", "create_plan", CREATE)]),
        chat_stream([("call_2", "update_plan", UPDATE)]),
        done,
    )
    model = OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=openai_client(http))
    agent = Agent(name="coder", model=model, tools=[*plan_tools(session)])
    previews = PlanPreviews(session)
    result = Runner.run_streamed(agent, "fix it", run_config=NO_TRACES)
    async for event in result.stream_events():
        await previews.on_event(event)
    assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]
    assert list(session.plans) == ["plan-1"]
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert http.requests[0]["tools"][0]["function"]["strict"] is True


async def test_concurrent_streamed_runs_keep_their_streams_apart(
    session: PlanSession, send: RecordingSend
) -> None:
    # Two runs at once on one session, their items at the same output index with the same
    # item id: each run's PlanPreviews feeds its own calls, and a new response of one run
    # takes back nothing of the other's.
    plans = {
        "a": {**json.loads(CREATE), "id": "a"},
        "b": {**json.loads(CREATE), "id": "b", "entries": json.loads(CREATE)["entries"][:2]},
    }

    async def run(plan_id: str) -> Any:
        http = Recorder(
            responses_stream([(f"call_{plan_id}", "create_plan", json.dumps(plans[plan_id]))]),
            text_stream("Done."),
        )
        result = Runner.run_streamed(agent(session, http), "plan", run_config=NO_TRACES)
        async with PlanPreviews(session) as previews:
            async for event in result.stream_events():
                await previews.on_event(event)
                await asyncio.sleep(0)  # let the other run's events in between
        return outputs(http)

    said = await asyncio.gather(run("a"), run("b"))
    assert [s[0].split("\n")[0] for s in said] == [
        'Created plan "a" (items, 3 steps):',
        'Created plan "b" (items, 2 steps):',
    ]
    assert {i: len(items_plan(p).entries) for i, p in session.plans.items()} == {"a": 3, "b": 2}
    assert any(len(u["plan"]["entries"]) == 1 for u in send.updates)  # previews went out
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


# ---- another dialect's tools: dialect= ------------------------------------------------------


async def test_a_dialect_sends_its_strict_tools(send: RecordingSend) -> None:
    session = todo_write.todo_session(send)
    http = Recorder(text_response("Hi."), text_response("Hi."))
    await Runner.run(agent(session, http), "hi", run_config=NO_TRACES)  # the default
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=openai_client(http))
    named = Agent(name="coder", model=model, tools=[*plan_tools(session, dialect="claude_todos")])
    await Runner.run(named, "hi", run_config=NO_TRACES)
    for request in http.requests:
        assert request["tools"] == tools.openai_responses(dialect="claude_todos")


async def test_dialect_calls_stream_previews_and_apply_once(send: RecordingSend) -> None:
    session = todo_write.todo_session(send)
    http = Recorder(
        responses_stream([("call_1", "TodoWrite", todo_write.todo_write(0))]),
        responses_stream([("call_2", "TodoWrite", todo_write.BAD)]),
        responses_stream([("call_3", "TodoWrite", todo_write.todo_write(1))]),
        text_stream("Done."),
    )
    previews = PlanPreviews(session)
    result = Runner.run_streamed(agent(session, http), "fix it", run_config=NO_TRACES)
    async for event in result.stream_events():
        await previews.on_event(event)
    await previews.aclose()
    assert result.final_output == "Done."
    sizes = [len(u["plan"]["entries"]) for u in send.updates]
    assert sizes[:2] == [1, 2]  # todos reached the client while the model wrote them
    said = outputs(http)
    assert said[1] == (await session.call("TodoWrite", todo_write.BAD)).content
    assert "todos[0].status" in said[1]  # the dialect's own field path
    assert list(session.plans) == ["main"]  # one list, each call applied once
    assert todo_write.shown(send) == todo_write.APPLIED
    assert not any(session.is_streaming(c) for c in ("call_1", "call_2", "call_3"))


def test_a_dialect_the_session_does_not_take_is_a_configuration_error(
    session: PlanSession, send: RecordingSend
) -> None:
    with pytest.raises(ConfigurationError, match="does not take the dialect 'claude_todos'"):
        plan_tools(session, dialect="claude_todos")
    with pytest.raises(ConfigurationError, match="unknown dialect"):
        plan_tools(session, dialect="TodoWrite")
    both = PlanSession(send, session_id="b", dialects=["llm_plans", "claude_todos"])
    assert [t.name for t in plan_tools(both)] == list(tools.NAMES)  # ours stays the default
    assert [t.name for t in plan_tools(both, dialect="claude_todos")] == ["TodoWrite"]


@pytest.mark.parametrize("dialect", NAMES)
async def test_every_dialect_goes_out_as_its_strict_definitions(
    send: RecordingSend, dialect: str
) -> None:
    # The SDK checks strict schemas itself before a request: each dialect's must pass.
    session = PlanSession(send, session_id="s", dialects=[dialect])
    http = Recorder(text_response("Hi."))
    await Runner.run(agent(session, http), "hi", run_config=NO_TRACES)
    assert http.requests[0]["tools"] == tools.openai_responses(dialect=dialect)
