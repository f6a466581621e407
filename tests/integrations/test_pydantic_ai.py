"""`llm_plans.integrations.pydantic_ai`: the plan tools as a pydantic-ai toolset."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import todo_write
from client_view import ClientView, expected
from integration_pipe import run_example
from plan_kinds import items_plan
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from wire_payloads import Recorder, anthropic_client, chat_completion, message, openai_client

from llm_plans import ConfigurationError, PlanSession, tools
from llm_plans.integrations._any_of import without_type_lists
from llm_plans.integrations.pydantic_ai import PlanToolset
from llm_plans.testing import RecordingSend

Turn = list[tuple[str, str, str]] | str  # (call id, tool, JSON arguments) per call, or text

CREATE = json.dumps(
    {
        "type": "items",
        "entries": [
            {"content": "Reproduce", "status": "in_progress"},
            {"content": "Fix", "priority": "high"},
            {"content": "Test"},
        ],
    }
)
PART = CREATE.index("}") + 1  # the first step complete, the call not
UPDATE = json.dumps({"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]})
REMOVE = json.dumps({"id": "plan-1"})


def answered(messages: list[ModelMessage]) -> int:
    return sum(isinstance(m, ModelRequest) for m in messages) - 1


def scripted(*turns: Turn, size: int = 7) -> FunctionModel:
    """A model that answers its n-th request with the n-th turn, whole or streamed."""

    def function(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = turns[answered(messages)]
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        return ModelResponse(
            parts=[ToolCallPart(name, args, tool_call_id=cid) for cid, name, args in turn]
        )

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        turn = turns[answered(messages)]
        if isinstance(turn, str):
            yield turn
            return
        for index, (cid, name, args) in enumerate(turn):
            yield {index: DeltaToolCall(name=name, tool_call_id=cid)}
            for start in range(0, len(args), size):
                yield {index: DeltaToolCall(json_args=args[start : start + size])}

    return FunctionModel(function, stream_function=stream)


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)


async def test_create_update_remove_then_answer(session: PlanSession, send: RecordingSend) -> None:
    model = scripted(
        [("c1", "create_plan", CREATE)],
        [("c2", "update_plan", UPDATE)],
        [("c3", "remove_plan", REMOVE)],
        "Done.",
    )
    result = await Agent(model, toolsets=[PlanToolset(session)]).run("fix it")
    assert result.output == "Done."
    kinds = [u["sessionUpdate"] for u in send.updates]
    assert kinds == ["plan_update", "plan_update", "plan_removed"]
    assert [e["status"] for e in send.updates[1]["plan"]["entries"]] == [
        "completed",
        "pending",
        "pending",
    ]
    assert send.updates[2] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    parts = returns(result.all_messages())
    assert [p.outcome for p in parts] == ["success"] * 3
    assert isinstance(parts[0].content, str)
    assert parts[0].content.startswith('Created plan "plan-1"')


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (json.dumps({"id": "nope", "changes": [{"step": 1, "status": "completed"}]}), '"nope"'),
        (json.dumps({"id": "plan-1", "changes": [{"step": 1, "status": "blocked"}]}), '"blocked"'),
        ('{"id": "plan-1", "changes": [', "cut off"),
    ],
)
async def test_invalid_calls_are_failed_results_the_run_survives(
    session: PlanSession, send: RecordingSend, arguments: str, named: str
) -> None:
    # Three invalid calls in a row: more than pydantic-ai's default retry budget allows.
    model = scripted(
        [("c1", "create_plan", CREATE)],
        [("c2", "update_plan", arguments)],
        [("c3", "update_plan", arguments)],
        [("c4", "update_plan", arguments)],
        [("c5", "update_plan", UPDATE)],
        "Done.",
    )
    result = await Agent(model, toolsets=[PlanToolset(session)]).run("fix it")
    assert result.output == "Done."
    parts = returns(result.all_messages())
    assert [p.outcome for p in parts] == ["success", "failed", "failed", "failed", "success"]
    expected = (await session.call("update_plan", arguments)).content
    assert parts[1].content == expected
    assert named in expected
    assert len(send.updates) == 2  # the invalid calls sent nothing
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"


async def test_doubly_encoded_arguments_are_repaired(
    session: PlanSession, send: RecordingSend
) -> None:
    model = scripted([("c1", "create_plan", json.dumps(CREATE))], "Done.")
    result = await Agent(model, toolsets=[PlanToolset(session)]).run("fix it")
    assert [p.outcome for p in returns(result.all_messages())] == ["success"]
    assert list(session.plans) == ["plan-1"]


async def test_tools_are_sequential_and_match_llm_plans_schemas(
    session: PlanSession,
) -> None:
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    await Agent(FunctionModel(model), toolsets=[PlanToolset(session)]).run("hi")
    assert [t.name for t in seen] == list(tools.NAMES)
    for tool in seen:
        assert tool.sequential is True
        # llm_plans' schema, its type lists spelled as `anyOf` (which TestModel can fill in).
        assert tool.parameters_json_schema == without_type_lists(
            tools.schema(tool.name, all_required=True)
        )
        assert tool.description == tools.description(tool.name)


async def test_live_previews_apply_each_call_once(
    session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(session)
    seen_before_run: list[int] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for event in events:
            await plans.on_event(event)
            if type(event).__name__ == "FunctionToolCallEvent":
                seen_before_run.append(len(send.updates))

    model = scripted([("c1", "create_plan", CREATE)], [("c2", "update_plan", UPDATE)], "Done.")
    result = await Agent(model, toolsets=[plans]).run("fix it", event_stream_handler=handler)
    assert result.output == "Done."
    # Previews reached the client before the tool ran, step by step as each was complete.
    entries = [len(u["plan"]["entries"]) for u in send.updates[: seen_before_run[0]]]
    assert entries[:2] == [1, 2]
    assert len(send.updates[seen_before_run[0]]["plan"]["entries"]) == 3
    assert list(session.plans) == ["plan-1"]  # one plan, not two
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert [p.outcome for p in returns(result.all_messages())] == ["success", "success"]


async def test_streamed_invalid_call_is_rolled_back(
    session: PlanSession, send: RecordingSend
) -> None:
    bad = json.dumps({"type": "items", "entries": [{"content": "A"}, {"content": "B"}], "x": 1})
    plans = PlanToolset(session)
    model = scripted([("c1", "create_plan", bad)], "Done.")
    agent = Agent(model, toolsets=[plans], capabilities=[plans.previews()])
    result = await agent.run("fix it")
    assert [p.outcome for p in returns(result.all_messages())] == ["failed"]
    assert session.plans == {}
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}


async def test_a_call_left_streaming_by_an_earlier_run_does_not_leak(
    session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(session)
    # An earlier run streamed part of a call under "c1" and never ran its tool.
    await plans.on_event(PartStartEvent(index=0, part=ToolCallPart("create_plan", "", "c1")))
    await plans.on_event(PartDeltaEvent(index=0, delta=ToolCallPartDelta(args_delta=CREATE[:PART])))
    assert session.is_streaming("c1")
    assert send.updates  # its first step was previewed
    # The next run reuses the id, as a retried response may.
    model = scripted([("c1", "create_plan", CREATE)], "Done.")
    agent = Agent(model, toolsets=[plans])
    result = await agent.run("again", event_stream_handler=plans.event_stream_handler)
    assert [p.outcome for p in returns(result.all_messages())] == ["success"]
    assert [e.content for e in items_plan(session.plans["plan-1"]).entries] == [
        "Reproduce",
        "Fix",
        "Test",
    ]


async def test_a_new_run_aborts_calls_an_earlier_run_left_streaming(
    session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(session)
    await plans.on_event(PartStartEvent(index=0, part=ToolCallPart("create_plan", "", "old")))
    await plans.on_event(PartDeltaEvent(index=0, delta=ToolCallPartDelta(args_delta=CREATE[:PART])))
    assert session.is_streaming("old")
    await Agent(scripted("Nothing to plan."), toolsets=[plans]).run("hi")
    assert not session.is_streaming("old")
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    assert session.plans == {}


async def test_prefixed_names_from_a_renamed_toolset_resolve(session: PlanSession) -> None:
    model = scripted([("c1", "mcp__plans__create_plan", CREATE)], "Done.")
    toolset = PlanToolset(session).prefixed("mcp__plans_")
    result = await Agent(model, toolsets=[toolset]).run("fix it")
    assert [p.outcome for p in returns(result.all_messages())] == ["success"]


@pytest.mark.parametrize(("caps", "kinds"), [({"plan": {}}, None), ({}, "plan")])
async def test_example_over_an_acp_pipe(caps: dict[str, Any], kinds: str | None) -> None:
    client, stop = await run_example("pydantic_ai_agent", caps)
    assert stop == "end_turn"
    plan_updates = [u for u in client.updates if u["sessionUpdate"].startswith("plan")]
    if kinds is None:
        assert len(plan_updates[0]["plan"]["entries"]) == 1  # a live preview, over the pipe
        assert plan_updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
        assert type(client.typed[-2]).__name__ == "AgentPlanRemovedUpdate"
    else:
        assert {u["sessionUpdate"] for u in plan_updates} == {"plan"}
        assert plan_updates[-1]["entries"] == []
    assert client.updates[-1]["sessionUpdate"] == "agent_message_chunk"


async def test_over_the_openai_wire_failed_calls_are_pydantic_ai_error_objects(
    session: PlanSession,
) -> None:
    done = chat_completion([], "stop")
    done["choices"][0]["message"]["content"] = "Fixed."
    bad = json.dumps({"id": "nope", "changes": [{"step": 1, "status": "completed"}]})
    http = Recorder(chat_completion([("call_1", "update_plan", bad)]), done)
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=openai_client(http)))
    result = await Agent(model, toolsets=[PlanToolset(session)]).run("fix it")
    assert result.output == "Fixed."
    # The tools go out as llm_plans.tools.openai_chat() defines them, strict, with the
    # schemas' type lists spelled as `anyOf` (strict mode takes both).
    assert [t["function"] for t in http.requests[0]["tools"]] == [
        {**f, "parameters": without_type_lists(f["parameters"])}
        for f in (t["function"] for t in tools.openai_chat())
    ]
    assert all(t["function"]["strict"] for t in http.requests[0]["tools"])
    # Chat Completions has no error field: pydantic-ai sends failures as {"error": text}.
    reply = http.requests[1]["messages"][-1]
    expected = (await session.call("update_plan", bad)).content
    assert reply == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": json.dumps({"error": expected}, separators=(",", ":")),
    }


async def test_over_the_anthropic_wire_failed_calls_are_is_error_results(
    session: PlanSession,
) -> None:
    bad = {"id": "nope", "changes": [{"step": 1, "status": "completed"}]}
    http = Recorder(
        message([("toolu_1", "create_plan", json.loads(CREATE)), ("toolu_2", "update_plan", bad)]),
        message([], stop="end_turn"),
    )
    provider = AnthropicProvider(anthropic_client=anthropic_client(http))
    model = AnthropicModel("claude-sonnet-5", provider=provider)
    agent = Agent(model, toolsets=[PlanToolset(session)], model_settings={"max_tokens": 1024})
    await agent.run("fix it")
    results = http.requests[1]["messages"][-1]["content"]
    assert [r.get("is_error", False) for r in results] == [False, True]
    text = results[1]["content"]
    text = text if isinstance(text, str) else text[0]["text"]
    assert text == (await session.call("update_plan", bad)).content


async def test_a_name_completed_by_deltas_still_streams(
    session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(session)
    await plans.on_event(PartStartEvent(index=0, part=ToolCallPart("create", '{"type"', "c1")))
    await plans.on_event(PartDeltaEvent(index=0, delta=ToolCallPartDelta(tool_name_delta="_plan")))
    for start in range(7, len(CREATE), 7):
        delta = ToolCallPartDelta(args_delta=CREATE[start : start + 7])
        await plans.on_event(PartDeltaEvent(index=0, delta=delta))
    assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]
    assert (await session.finish("c1")).ok
    assert [e.content for e in items_plan(session.plans["plan-1"]).entries] == [
        "Reproduce",
        "Fix",
        "Test",
    ]


def interleaving(
    calls: list[tuple[str, str, str]], gate: asyncio.Event | None = None
) -> FunctionModel:
    """A streaming model that yields to the event loop between fragments, so that concurrent
    runs interleave; with `gate`, it stops mid-call until the gate opens."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if answered(messages):
            yield "Done."
            return
        for index, (cid, name, args) in enumerate(calls):
            yield {index: DeltaToolCall(name=name, tool_call_id=cid)}
            for start in range(0, len(args), 5):
                await asyncio.sleep(0)
                if gate is not None and start >= PART:
                    await gate.wait()
                yield {index: DeltaToolCall(json_args=args[start : start + 5])}

    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("these runs stream")

    return FunctionModel(whole, stream_function=stream)


def plan(plan_id: str, *steps: str) -> str:
    return json.dumps({"id": plan_id, "type": "items", "entries": [{"content": s} for s in steps]})


async def test_concurrent_runs_sharing_a_toolset_keep_their_streams_apart(
    session: PlanSession, send: RecordingSend
) -> None:
    # The same call id, at the same stream index, in two runs at once: each run's fragments
    # go to its own call (they were once fed into one, and a valid call was "not valid JSON").
    plans = PlanToolset(session)
    a = Agent(interleaving([("c1", "create_plan", plan("a", "A1", "A2"))]), toolsets=[plans])
    b = Agent(interleaving([("c1", "create_plan", plan("b", "B1", "B2", "B3"))]), toolsets=[plans])
    results = await asyncio.gather(
        *(agent.run("plan", capabilities=[plans.previews()]) for agent in (a, b))
    )
    for result in results:
        assert [p.outcome for p in returns(result.all_messages())] == ["success"]
    assert {i: [e.content for e in items_plan(p).entries] for i, p in session.plans.items()} == {
        "a": ["A1", "A2"],
        "b": ["B1", "B2", "B3"],
    }
    assert len([u for u in send.updates if len(u["plan"]["entries"]) == 1]) == 2  # previews
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


async def test_a_run_cancelled_mid_stream_takes_its_previews_back(
    session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(session)
    gate = asyncio.Event()
    agent = Agent(interleaving([("c1", "create_plan", CREATE)], gate), toolsets=[plans])
    run = asyncio.create_task(agent.run("plan", capabilities=[plans.previews()]))
    while not send.updates:  # the first step is on the client
        await asyncio.sleep(0)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert session.plans == {}
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    assert not session.is_streaming("c1")


# ---- another dialect's tools: dialect= ------------------------------------------------------


@pytest.fixture
def todo_session(send: RecordingSend) -> PlanSession:
    return todo_write.todo_session(send)


async def test_a_dialect_toolset_offers_that_dialects_tools(todo_session: PlanSession) -> None:
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    # The session takes only claude_todos, so that is the default; naming it is the same.
    for plans in (PlanToolset(todo_session), PlanToolset(todo_session, dialect="claude_todos")):
        assert plans.dialect == "claude_todos"
        seen.clear()
        await Agent(FunctionModel(model), toolsets=[plans]).run("hi")
        assert [t.name for t in seen] == ["TodoWrite"]
        (tool,) = seen
        assert tool.sequential is True
        assert tool.parameters_json_schema == tools.schema(
            "TodoWrite", all_required=True, dialect="claude_todos"
        )
        assert tool.description == tools.description("TodoWrite", dialect="claude_todos")


async def test_dialect_calls_stream_previews_and_apply_once(
    todo_session: PlanSession, send: RecordingSend
) -> None:
    plans = PlanToolset(todo_session, dialect="claude_todos")
    seen_before_run: list[int] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for event in events:
            await plans.on_event(event, ctx)
            if type(event).__name__ == "FunctionToolCallEvent":
                seen_before_run.append(len(send.updates))

    model = scripted(
        [("c1", "TodoWrite", todo_write.todo_write(0))],
        [("c2", "TodoWrite", todo_write.todo_write(1))],
        "Done.",
    )
    result = await Agent(model, toolsets=[plans]).run("fix it", event_stream_handler=handler)
    assert result.output == "Done."
    # Todos reached the client one by one while the model wrote them, before the tool ran.
    first = [len(u["plan"]["entries"]) for u in send.updates[: seen_before_run[0]]]
    assert first[:2] == [1, 2]
    assert list(todo_session.plans) == ["main"]  # the dialect's one list
    entries = items_plan(todo_session.plans["main"]).entries
    assert [(e.content, e.status) for e in entries] == [
        ("Reproduce the bug", "completed"),
        ("Fix the parser", "in_progress"),
        ("Run the tests", "pending"),
    ]
    assert [p.outcome for p in returns(result.all_messages())] == ["success", "success"]
    assert todo_write.shown(send) == todo_write.APPLIED


async def test_over_the_openai_wire_a_dialect_sends_its_tools_and_rejects_as_ours(
    todo_session: PlanSession, send: RecordingSend
) -> None:
    done = chat_completion([], "stop")
    done["choices"][0]["message"]["content"] = "Fixed."
    bad = todo_write.BAD
    http = Recorder(chat_completion([("call_1", "TodoWrite", bad)]), done)
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=openai_client(http)))
    agent = Agent(model, toolsets=[PlanToolset(todo_session, dialect="claude_todos")])
    assert (await agent.run("fix it")).output == "Fixed."
    assert [t["function"] for t in http.requests[0]["tools"]] == [
        t["function"] for t in tools.openai_chat(dialect="claude_todos")
    ]
    reply = http.requests[1]["messages"][-1]
    rejection = (await todo_session.call("TodoWrite", bad)).content
    assert "todos[0].status" in rejection  # the dialect's own field path
    assert json.loads(reply["content"]) == {"error": rejection}
    assert send.updates == []
    assert todo_session.plans == {}


async def test_a_dialect_the_session_does_not_take_is_a_configuration_error(
    session: PlanSession, todo_session: PlanSession, send: RecordingSend
) -> None:
    with pytest.raises(ConfigurationError, match="does not take the dialect 'claude_todos'"):
        PlanToolset(session, dialect="claude_todos")
    with pytest.raises(ConfigurationError, match="does not take the dialect 'llm_plans'"):
        PlanToolset(todo_session, dialect="llm_plans")
    with pytest.raises(ConfigurationError, match="unknown dialect 'todos'"):
        PlanToolset(todo_session, dialect="todos")
    both = PlanSession(send, session_id="b", dialects=["llm_plans", "claude_todos"])
    assert PlanToolset(both).dialect == "llm_plans"  # ours stays the default
    assert PlanToolset(both, dialect="claude_todos").dialect == "claude_todos"


async def test_over_the_anthropic_wire_a_dialect_call_rejected_is_an_is_error_result(
    todo_session: PlanSession, send: RecordingSend
) -> None:
    good, bad = json.loads(todo_write.todo_write(0)), json.loads(todo_write.BAD)
    http = Recorder(
        message([("toolu_1", "TodoWrite", good), ("toolu_2", "TodoWrite", bad)]),
        message([], stop="end_turn"),
    )
    provider = AnthropicProvider(anthropic_client=anthropic_client(http))
    model = AnthropicModel("claude-sonnet-5", provider=provider)
    plans = PlanToolset(todo_session, dialect="claude_todos")
    await Agent(model, toolsets=[plans], model_settings={"max_tokens": 1024}).run("fix it")
    sent = http.requests[0]["tools"]
    assert [(t["name"], t["input_schema"]) for t in sent] == [
        ("TodoWrite", tools.schema("TodoWrite", all_required=True, dialect="claude_todos"))
    ]
    results = http.requests[1]["messages"][-1]["content"]
    assert [r.get("is_error", False) for r in results] == [False, True]
    text = results[1]["content"]
    text = text if isinstance(text, str) else text[0]["text"]
    assert text == (await todo_session.call("TodoWrite", bad)).content
    assert len(send.updates) == 1  # the rejected call sent nothing
    assert [e.status for e in items_plan(todo_session.plans["main"]).entries] == [
        "in_progress",
        "pending",
        "pending",
    ]
