"""A model's arguments are data in every integration, never a framework's Python keywords.

Each framework runs a plan tool by its own invocation path (LangGraph's `ToolNode` on an
`AIMessage`'s tool call, a pydantic-ai agent run on a `FunctionModel`, an OpenAI Agents SDK
run on a Responses API served over HTTP, the Claude Agent SDK's bridge carrying Claude Code's
JSON-RPC `tools/call`), with arguments that mix valid and invalid plan calls of every dialect
with the keys a framework takes for its own: `self`, `cls`, `config`, `run_manager`, `ctx`,
`context`, `callbacks`, `tool_call_id`, names starting with an underscore, `args`, `kwargs`,
and any other name. The model must get exactly what `session.call(tool, arguments)` gives on
a twin session, and nothing may raise into the framework's run.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from agents import Agent as OpenAIAgent
from agents import OpenAIResponsesModel, RunConfig, Runner
from claude_agent_sdk import StreamEvent
from claude_agent_sdk._internal.sdk_mcp_bridge import SdkMcpBridge
from dialect_calls import invalid, valid, variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic_ai import Agent
from pydantic_ai.messages import (
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from registry import NAMES, OURS
from strategies import create_args, update_args
from wire_payloads import Recorder, openai_client, responses_response, responses_stream, sse

from llm_plans import PlanSession
from llm_plans.integrations import claude_agent_sdk, langchain, openai_agents, pydantic_ai
from llm_plans.testing import RecordingSend

# The keys frameworks bind to parameters of their own, or drop, or inject.
HOSTILE_KEYS = (
    "self",
    "cls",
    "config",
    "run_manager",
    "callbacks",
    "ctx",
    "context",
    "tool_call_id",
    "tool_name",
    "run_id",
    "name",
    "input",
    "arguments",
    "args",
    "kwargs",
    "state",
    "store",
    "runtime",
    "_x",
    "__class__",
    "__dict__",
    "_meta",
    "type",
    "id",
)
# Values JSON carries exactly, as every framework's wire does.
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
_KEYS = st.sampled_from(HOSTILE_KEYS) | st.text(min_size=1, max_size=6)
_hostile_keys = st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4)
# A plan that update and remove calls of ours can name.
SETUP = {"type": "items", "entries": [{"content": "Reproduce"}, {"content": "Fix"}]}


@dataclass(frozen=True)
class Said:
    """What the framework told the model: the result's text, and whether it was a success
    (None where the framework's result carries no such flag)."""

    ok: bool | None
    content: str


Drive = Callable[[PlanSession, str, str, dict[str, Any]], Awaitable[Said]]


def new_session(dialect: str) -> PlanSession:
    return PlanSession(
        RecordingSend(),
        session_id="s",
        client_capabilities={"plan": {}},
        stream_interval=0,
        dialects=dialect,
    )


@st.composite
def plan_call(draw: st.DrawFn, dialect: str) -> tuple[str, dict[str, Any]]:
    """A call of `dialect` (valid, or not) with hostile keys mixed into its arguments."""
    if dialect == OURS:
        tool = draw(st.sampled_from(["create_plan", "update_plan", "remove_plan"]))
        base = draw(
            {
                "create_plan": create_args(),
                "update_plan": update_args("plan-1", steps=2),
                "remove_plan": st.sampled_from([{"id": "plan-1"}, {"id": "nope"}]),
            }[tool]
        )
    else:
        sent = draw(st.one_of(valid(dialect), variant(dialect), invalid(dialect)))
        tool = sent.tool
        base = sent.arguments if isinstance(sent.arguments, dict) else {}
    base = json.loads(json.dumps(base))  # as the wire carries it, and a copy to change
    inner = _dicts(base)[1:]
    if bool(inner) and draw(st.booleans()):  # in a step, a change, a todo: the same keys, deeper
        draw(st.sampled_from(inner)).update(draw(_hostile_keys))
    extra = draw(_hostile_keys)
    mixed = {**base, **extra} if draw(st.booleans()) else {**extra, **base}
    arguments = draw(st.sampled_from([mixed, extra]))  # sometimes nothing but hostile keys
    return tool, json.loads(json.dumps(arguments))


def _dicts(value: Any) -> list[dict[str, Any]]:
    """`value` if a dict, and every dict within it."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        found.append(value)
        value = list(value.values())
    if isinstance(value, list):
        for each in value:
            found += _dicts(each)
    return found


# ---- each framework's own invocation path --------------------------------------------------


async def by_langgraph(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(langchain.plan_tools(session, dialect=dialect)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    call = AIMessage("", tool_calls=[{"id": "call_1", "name": tool, "args": arguments}])
    state = await builder.compile().ainvoke({"messages": [call]})
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert isinstance(answer.content, str)
    return Said(answer.status == "success", answer.content)


class _StreamingChatModel(BaseChatModel):
    """A chat model that streams one tool call, `args` as JSON text in pieces."""

    name_: str
    args: str
    streaming: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], *_: Any, **__: Any) -> ChatResult:
        raise AssertionError("the model streams")

    def _stream(
        self, messages: list[BaseMessage], *_: Any, run_manager: Any = None, **__: Any
    ) -> Iterator[ChatGenerationChunk]:
        head = {"id": "call_1", "name": self.name_, "args": "", "index": 0}
        pieces = [AIMessageChunk(content="", tool_call_chunks=[head])]
        for start in range(0, len(self.args), 7):
            part = {"args": self.args[start : start + 7], "index": 0}
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[part]))
        for piece in pieces:
            chunk = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token("", chunk=chunk)
            yield chunk


async def by_langgraph_streamed(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # Streamed, with previews: the tool finishes the call the stream fed the session.
    model = _StreamingChatModel(name_=tool, args=json.dumps(arguments), streaming=True)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(langchain.plan_tools(session, dialect=dialect)))
    builder.add_edge(START, "model")
    builder.add_edge("model", "tools")
    builder.add_edge("tools", END)
    config: RunnableConfig = {"callbacks": [langchain.PlanPreviews(session)]}
    state = await builder.compile().ainvoke({"messages": [HumanMessage(content="plan")]}, config)
    [answer] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert isinstance(answer.content, str)
    return Said(answer.status == "success", answer.content)


async def by_claude_agent_sdk_streamed(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # Streamed, with previews: Claude Code's stream events reach `PlanPreviews` first.
    previews = claude_agent_sdk.PlanPreviews(session)
    text = json.dumps(arguments)
    block = {"type": "tool_use", "id": "toolu_1", "name": f"mcp__plans__{tool}", "input": {}}
    events: list[dict[str, Any]] = [{"type": "message_start"}]
    events.append({"type": "content_block_start", "index": 0, "content_block": block})
    for start in range(0, len(text), 7):
        delta = {"type": "input_json_delta", "partial_json": text[start : start + 7]}
        events.append({"type": "content_block_delta", "index": 0, "delta": delta})
    events.append({"type": "content_block_stop", "index": 0})
    for payload in events:
        await previews.on_message(StreamEvent(uuid="u", session_id="cc", event=payload))
    said = await by_claude_agent_sdk(session, dialect, tool, arguments)
    await previews.aclose()
    return said


async def by_langchain_runnable(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # A tool is a Runnable whose input may be the arguments themselves (`tool.ainvoke(args)`).
    # (Arguments with `"type": "tool_call"` LangChain itself reads as a whole tool call.)
    [plan_tool] = [t for t in langchain.plan_tools(session, dialect=dialect) if t.name == tool]
    answer = await plan_tool.ainvoke(arguments)
    assert isinstance(answer, str)
    return Said(None, answer)  # a rejection's text comes back as the output, unflagged


async def by_pydantic_ai(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool, arguments, tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart("Done.")])

    toolset = pydantic_ai.PlanToolset(session, dialect=dialect)
    result = await Agent(FunctionModel(model), toolsets=[toolset]).run("plan")
    messages = result.all_messages()
    [answer] = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert isinstance(answer.content, str)
    return Said(answer.outcome == "success", answer.content)


async def by_pydantic_ai_streamed(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # Streamed, with previews: the tool finishes the call the stream fed the session.
    text = json.dumps(arguments)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("the run streams")

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if len(messages) > 1:
            yield "Done."
            return
        yield {0: DeltaToolCall(name=tool, tool_call_id="call_1")}
        for start in range(0, len(text), 7):
            yield {0: DeltaToolCall(json_args=text[start : start + 7])}

    toolset = pydantic_ai.PlanToolset(session, dialect=dialect)
    agent = Agent(FunctionModel(model, stream_function=stream), toolsets=[toolset])
    async with agent.run_stream_events("plan", capabilities=[toolset.previews()]) as events:
        answers = [
            e.part
            async for e in events
            if isinstance(e, FunctionToolResultEvent) and isinstance(e.part, ToolReturnPart)
        ]
    [answer] = answers
    assert isinstance(answer.content, str)
    return Said(answer.outcome == "success", answer.content)


def said_done() -> dict[str, Any]:
    """A Responses reply that ends the run: one message, no tool call."""
    done = responses_response([])
    done["output"] = [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        }
    ]
    return done


async def by_openai_agents(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    done = said_done()
    http = Recorder(responses_response([("call_1", tool, json.dumps(arguments))]), done)
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=openai_client(http))
    # [*...]: Agent takes a list[Tool], which a list[FunctionTool] is not (list is invariant).
    agent = OpenAIAgent(
        name="coder", model=model, tools=[*openai_agents.plan_tools(session, dialect=dialect)]
    )
    await Runner.run(agent, "plan", run_config=RunConfig(tracing_disabled=True))
    [answer] = [
        item["output"]
        for item in http.requests[-1]["input"]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    return Said(None, answer)  # function call outputs carry no error flag in this SDK


async def by_openai_agents_streamed(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # Streamed, with previews: the tool finishes the call the stream fed the session.
    done = said_done()
    events = [
        {"type": "response.created", "sequence_number": 0, "response": responses_response([])},
        {"type": "response.completed", "sequence_number": 1, "response": done},
    ]
    http = Recorder(
        responses_stream([("call_1", tool, json.dumps(arguments))]), sse(events, named=True)
    )
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=openai_client(http))
    agent = OpenAIAgent(
        name="coder", model=model, tools=[*openai_agents.plan_tools(session, dialect=dialect)]
    )
    result = Runner.run_streamed(agent, "plan", run_config=RunConfig(tracing_disabled=True))
    async with openai_agents.PlanPreviews(session) as previews:
        async for event in result.stream_events():
            await previews.on_event(event)
    [answer] = [
        item["output"]
        for item in http.requests[-1]["input"]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    return Said(None, answer)


async def by_claude_agent_sdk(
    session: PlanSession, dialect: str, tool: str, arguments: dict[str, Any]
) -> Said:
    # The SDK's bridge, given the JSON-RPC messages Claude Code sends it.
    server = claude_agent_sdk.plan_server(session, dialect=dialect)["instance"]
    bridge = SdkMcpBridge("plans", server)
    try:
        await bridge.handle(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "claude-code", "version": "2.0.0"},
                },
            }
        )
        await bridge.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = await bridge.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": tool,
                    "arguments": arguments,
                    "_meta": {"claudecode/toolUseId": "toolu_1"},
                },
            }
        )
    finally:
        await bridge.aclose()
    assert answer is not None
    assert "result" in answer, answer
    [block] = answer["result"]["content"]
    return Said(not answer["result"]["isError"], block["text"])


FRAMEWORKS: dict[str, Drive] = {
    "langchain": by_langgraph,
    "langchain_runnable": by_langchain_runnable,
    "langchain_streamed": by_langgraph_streamed,
    "claude_agent_sdk_streamed": by_claude_agent_sdk_streamed,
    "pydantic_ai": by_pydantic_ai,
    "openai_agents": by_openai_agents,
    "openai_agents_streamed": by_openai_agents_streamed,
    "pydantic_ai_streamed": by_pydantic_ai_streamed,
    "claude_agent_sdk": by_claude_agent_sdk,
}


async def _setup(session: PlanSession, dialect: str) -> None:
    if dialect == OURS:
        await session.call("create_plan", SETUP)


async def _compare(drive: Drive, dialect: str, tool: str, arguments: dict[str, Any]) -> None:
    session, twin = new_session(dialect), new_session(dialect)
    await _setup(session, dialect)
    await _setup(twin, dialect)
    said = await drive(session, dialect, tool, json.loads(json.dumps(arguments)))
    expected = await twin.call(twin.plan_tool(tool) or tool, arguments)
    assert said.content == expected.content
    if said.ok is not None:
        assert said.ok == expected.ok
    assert session.plans == twin.plans


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_key_reaches_the_session_as_data(framework: str, data: st.DataObject) -> None:
    dialect = data.draw(st.sampled_from(NAMES), label="dialect")
    tool, arguments = data.draw(plan_call(dialect), label="call")
    asyncio.run(_compare(FRAMEWORKS[framework], dialect, tool, arguments))


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_each_framework_keyword_is_a_field_the_session_judges(framework: str, key: str) -> None:
    # Every hostile key, on a call that would be valid without it: the session's answer (an
    # unknown field), whatever the framework would have made of the key.
    arguments = {**SETUP, key: 1}
    asyncio.run(_compare(FRAMEWORKS[framework], OURS, "create_plan", arguments))


async def test_langchain_arguments_with_an_id_do_not_finish_another_calls_stream() -> None:
    # Plain arguments holding `id` and `args` are no tool call: the id is the model's data,
    # not the id of the call "call_1" that is streaming.
    session = new_session(OURS)
    previews = langchain.PlanPreviews(session)
    piece = {"id": "call_1", "name": "create_plan", "args": '{"type": "items"', "index": 0}
    chunk = ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[piece]))
    await previews.on_llm_new_token("", chunk=chunk, run_id=uuid.uuid4())
    assert session.is_streaming("call_1")
    arguments = {"id": "call_1", "args": {}, **SETUP}
    create = langchain.plan_tools(session)[0]
    twin = new_session(OURS)
    assert await create.ainvoke(arguments) == (await twin.call("create_plan", arguments)).content
    assert session.is_streaming("call_1")
