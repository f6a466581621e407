"""`llm_plans.integrations.langchain`: the plan tools in LangChain and LangGraph."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import todo_write
from client_view import ClientView, expected
from integration_pipe import run_example
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from plan_kinds import items_plan
from pydantic import Field
from registry import NAMES

from llm_plans import ConfigurationError, PlanSession, tools
from llm_plans.integrations.langchain import PlanPreviews, plan_tools
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
UPDATE = json.dumps({"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]})
REMOVE = json.dumps({"id": "plan-1"})


class ScriptedChatModel(BaseChatModel):
    """A tool-calling chat model answering its n-th call with the n-th turn; it can stream."""

    turns: list[Turn]
    streaming: bool = False
    bound: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound[:] = [convert_to_openai_tool(t, strict=kwargs.get("strict")) for t in tools]
        return self

    def _turn(self, messages: list[BaseMessage]) -> Turn:
        return self.turns[sum(isinstance(m, AIMessage) for m in messages)]

    def _generate(self, messages: list[BaseMessage], *_: Any, **__: Any) -> ChatResult:
        turn = self._turn(messages)
        if isinstance(turn, str):
            return ChatResult(generations=[ChatGeneration(message=AIMessage(turn))])
        message = AIMessage(
            "",
            tool_calls=[
                {"id": cid, "name": name, "args": json.loads(args)} for cid, name, args in turn
            ],
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self, messages: list[BaseMessage], *_: Any, run_manager: Any = None, **__: Any
    ) -> Iterator[ChatGenerationChunk]:
        turn = self._turn(messages)
        pieces: list[AIMessageChunk] = []
        if isinstance(turn, str):
            pieces.append(AIMessageChunk(content=turn))
        for index, (cid, name, args) in enumerate([] if isinstance(turn, str) else turn):
            head = {"id": cid, "name": name, "args": "", "index": index}
            pieces.append(AIMessageChunk(content="", tool_call_chunks=[head]))
            for start in range(0, len(args), 7):
                part = {"args": args[start : start + 7], "index": index}
                pieces.append(AIMessageChunk(content="", tool_call_chunks=[part]))
        for piece in pieces:
            chunk = ChatGenerationChunk(message=piece)
            if run_manager is not None:
                run_manager.on_llm_new_token("", chunk=chunk)
            yield chunk


def graph(model: ScriptedChatModel, session: PlanSession) -> Any:
    """The usual LangGraph agent: a model node, a ToolNode, and tools_condition between."""
    plans = plan_tools(session)
    bound = model.bind_tools(plans, strict=True)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(plans))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)


async def test_create_update_remove_then_answer(session: PlanSession, send: RecordingSend) -> None:
    model = ScriptedChatModel(
        turns=[
            [("c1", "create_plan", CREATE)],
            [("c2", "update_plan", UPDATE)],
            [("c3", "remove_plan", REMOVE)],
            "Done.",
        ]
    )
    state = await graph(model, session).ainvoke({"messages": [("user", "fix it")]})
    assert state["messages"][-1].content == "Done."
    assert [u["sessionUpdate"] for u in send.updates] == ["plan_update"] * 2 + ["plan_removed"]
    results = tool_messages(state)
    assert [m.status for m in results] == ["success"] * 3
    assert str(results[0].content).startswith('Created plan "plan-1"')


def test_schemas_are_llm_plans_strict_schemas(session: PlanSession) -> None:
    model = ScriptedChatModel(turns=[])
    model.bind_tools(plan_tools(session), strict=True)
    assert model.bound == [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": tools.description(name),
                "parameters": tools.schema(name, all_required=True),
                "strict": True,
            },
        }
        for name in tools.NAMES
    ]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (json.dumps({"id": "nope", "changes": [{"step": 1, "status": "completed"}]}), '"nope"'),
        (json.dumps({"id": "plan-1", "changes": [{"step": 1, "status": "blocked"}]}), '"blocked"'),
        (json.dumps({"id": "plan-1", "changes": '[{"step": 1, "sta'}), "changes"),
    ],
)
async def test_invalid_calls_are_error_messages_the_graph_survives(
    session: PlanSession, send: RecordingSend, arguments: str, named: str
) -> None:
    model = ScriptedChatModel(
        turns=[
            [("c1", "create_plan", CREATE)],
            [("c2", "update_plan", arguments)],
            [("c3", "update_plan", UPDATE)],
            "Done.",
        ]
    )
    state = await graph(model, session).ainvoke({"messages": [("user", "fix it")]})
    assert state["messages"][-1].content == "Done."
    results = tool_messages(state)
    assert [m.status for m in results] == ["success", "error", "success"]
    expected = (await session.call("update_plan", json.loads(arguments))).content
    assert results[1].content == expected
    assert named in expected
    assert len(send.updates) == 2


async def test_live_previews_apply_each_call_once(
    session: PlanSession, send: RecordingSend
) -> None:
    model = ScriptedChatModel(
        turns=[[("c1", "create_plan", CREATE)], [("c2", "update_plan", UPDATE)], "Done."],
        streaming=True,
    )
    config = {"callbacks": [PlanPreviews(session)]}
    state = await graph(model, session).ainvoke({"messages": [("user", "fix it")]}, config)
    assert state["messages"][-1].content == "Done."
    sizes = [len(u["plan"]["entries"]) for u in send.updates]
    assert sizes[:2] == [1, 2]  # steps reached the client while the model wrote them
    assert list(session.plans) == ["plan-1"]  # applied once
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert not session.is_streaming("c1")


async def test_previews_in_a_messages_stream(session: PlanSession, send: RecordingSend) -> None:
    model = ScriptedChatModel(turns=[[("c1", "create_plan", CREATE)], "Done."])
    config = {"callbacks": [PlanPreviews(session)]}
    async for _ in graph(model, session).astream(
        {"messages": [("user", "fix it")]}, config, stream_mode="messages"
    ):
        pass
    assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]
    assert list(session.plans) == ["plan-1"]


async def test_a_malformed_streamed_call_is_rolled_back(
    session: PlanSession, send: RecordingSend
) -> None:
    previews = PlanPreviews(session)
    model = ScriptedChatModel(turns=[], streaming=True)
    # Steps complete enough to preview, then JSON LangChain cannot parse: an invalid call.
    broken = '{"type": "items", "entries": [{"content": "A"}, {"content": "B"}], }}'
    model.turns = [[("c1", "create_plan", broken)]]
    message = await model.ainvoke([("user", "plan")], {"callbacks": [previews]})
    assert isinstance(message, AIMessage)
    assert message.invalid_tool_calls
    assert not session.is_streaming("c1")
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_prebuilt_react_agent(session: PlanSession, send: RecordingSend) -> None:
    from langgraph.prebuilt import create_react_agent

    model = ScriptedChatModel(
        turns=[[("c1", "create_plan", CREATE)], [("c2", "remove_plan", REMOVE)], "Done."]
    )
    agent = create_react_agent(model, plan_tools(session))
    state = await agent.ainvoke({"messages": [("user", "fix it")]})
    assert state["messages"][-1].content == "Done."
    assert [u["sessionUpdate"] for u in send.updates] == ["plan_update", "plan_removed"]


@pytest.mark.parametrize("caps", [{"plan": {}}, {}])
async def test_example_over_an_acp_pipe(caps: dict[str, Any]) -> None:
    client, stop = await run_example("langchain_agent", caps)
    assert stop == "end_turn"
    plan = [u for u in client.updates if u["sessionUpdate"].startswith("plan")]
    if caps:
        assert plan[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
        assert type(client.typed[-2]).__name__ == "AgentPlanRemovedUpdate"
    else:
        assert plan[-1] == {"sessionUpdate": "plan", "entries": []}
    assert client.updates[-1]["sessionUpdate"] == "agent_message_chunk"


EDITED = {"type": "items", "entries": [{"content": "Reproduce"}, {"content": "Ask first"}]}


def reviewed_graph(model: ScriptedChatModel, session: PlanSession, **compile: Any) -> Any:
    """The usual agent with a checkpointer, for runs that stop for a human's review."""
    plans = plan_tools(session)
    bound = model.bind_tools(plans, strict=True)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(plans))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=InMemorySaver(), **compile)


def edited(message: BaseMessage, arguments: dict[str, Any]) -> AIMessage:
    assert isinstance(message, AIMessage)
    [call] = message.tool_calls
    return AIMessage("", id=message.id, tool_calls=[{**call, "args": arguments}])


async def test_a_review_edit_through_update_state_is_what_applies(
    session: PlanSession, send: RecordingSend
) -> None:
    model = ScriptedChatModel(turns=[[("c1", "create_plan", CREATE)], "Done."], streaming=True)
    app = reviewed_graph(model, session, interrupt_before=["tools"])
    config: Any = {"configurable": {"thread_id": "t"}, "callbacks": [PlanPreviews(session)]}
    await app.ainvoke({"messages": [("user", "fix it")]}, config)
    # Stopped for review: the streamed plan was previewed, and taken back as the run ended.
    assert len(send.updates[-2]["plan"]["entries"]) == 3
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    assert session.plans == {}
    # The reviewer edits the call's arguments; the resumed run applies the edit.
    state = await app.aget_state(config)
    await app.aupdate_state(config, {"messages": [edited(state.values["messages"][-1], EDITED)]})
    final = await app.ainvoke(None, config)
    assert [m.status for m in tool_messages(final)] == ["success"]
    assert [e.content for e in items_plan(session.plans["plan-1"]).entries] == [
        "Reproduce",
        "Ask first",
    ]
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


async def test_arguments_edited_within_the_run_apply_in_place_of_the_streamed_ones(
    session: PlanSession, send: RecordingSend
) -> None:
    # A review node between the model and the tools rewrites the call in the same run: the
    # tool finishes the streamed call with the rewritten arguments.
    model = ScriptedChatModel(turns=[[("c1", "create_plan", CREATE)], "Done."], streaming=True)
    plans = plan_tools(session)
    bound = model.bind_tools(plans, strict=True)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def review(state: MessagesState) -> dict[str, Any]:
        return {"messages": [edited(state["messages"][-1], EDITED)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("review", review)
    builder.add_node("tools", ToolNode(plans))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": "review", END: END})
    builder.add_edge("review", "tools")
    builder.add_edge("tools", "model")
    config: Any = {"callbacks": [PlanPreviews(session)]}
    final = await builder.compile().ainvoke({"messages": [HumanMessage(content="fix it")]}, config)
    assert [m.status for m in tool_messages(final)] == ["success"]
    previewed = [len(u["plan"]["entries"]) for u in send.updates]
    assert previewed[:3] == [1, 2, 3]  # CREATE streamed, step by step
    assert [e.content for e in items_plan(session.plans["plan-1"]).entries] == [
        "Reproduce",
        "Ask first",
    ]
    plain = PlanSession(RecordingSend(), session_id="p")
    assert tool_messages(final)[0].content == (await plain.call("create_plan", EDITED)).content
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


async def test_concurrent_graph_runs_sharing_previews_and_tools_keep_apart(
    session: PlanSession, send: RecordingSend
) -> None:
    a = json.dumps({"id": "a", **EDITED})
    b = json.dumps({"id": "b", **json.loads(CREATE)})
    previews = PlanPreviews(session)  # one callback, one set of tools, two runs at once
    apps = [
        graph(
            ScriptedChatModel(turns=[[("c1", "create_plan", args)], "Done."], streaming=True),
            session,
        )
        for args in (a, b)
    ]
    finals = await asyncio.gather(
        *(app.ainvoke({"messages": [("user", "plan")]}, {"callbacks": [previews]}) for app in apps)
    )
    for final in finals:
        assert [m.status for m in tool_messages(final)] == ["success"]
    assert {i: len(items_plan(p).entries) for i, p in session.plans.items()} == {"a": 2, "b": 3}
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


# ---- another dialect's tools: dialect= ------------------------------------------------------


def test_a_dialect_gives_its_tools_with_its_strict_schemas(send: RecordingSend) -> None:
    session = todo_write.todo_session(send)
    for offered in (plan_tools(session), plan_tools(session, dialect="claude_todos")):
        model = ScriptedChatModel(turns=[])
        model.bind_tools(offered, strict=True)
        assert model.bound == tools.openai_chat(dialect="claude_todos")


async def test_dialect_calls_stream_previews_and_apply_once(send: RecordingSend) -> None:
    session = todo_write.todo_session(send)
    model = ScriptedChatModel(
        turns=[
            [("c1", "TodoWrite", todo_write.todo_write(0))],
            [("c2", "TodoWrite", todo_write.BAD)],
            [("c3", "TodoWrite", todo_write.todo_write(1))],
            "Done.",
        ],
        streaming=True,
    )
    config = {"callbacks": [PlanPreviews(session)]}
    state = await graph(model, session).ainvoke({"messages": [("user", "fix it")]}, config)
    assert state["messages"][-1].content == "Done."
    sizes = [len(u["plan"]["entries"]) for u in send.updates]
    assert sizes[:2] == [1, 2]  # todos reached the client while the model wrote them
    results = tool_messages(state)
    assert [m.status for m in results] == ["success", "error", "success"]
    assert "todos[0].status" in str(results[1].content)  # the dialect's own field path
    assert list(session.plans) == ["main"]  # one list, each call applied once
    assert todo_write.shown(send) == todo_write.APPLIED
    assert not any(session.is_streaming(c) for c in ("c1", "c2", "c3"))


def test_a_dialect_the_session_does_not_take_is_a_configuration_error(
    session: PlanSession, send: RecordingSend
) -> None:
    with pytest.raises(ConfigurationError, match="does not take the dialect 'claude_todos'"):
        plan_tools(session, dialect="claude_todos")
    with pytest.raises(ConfigurationError, match="does not take the dialect 'llm_plans'"):
        plan_tools(todo_write.todo_session(send), dialect="llm_plans")
    both = PlanSession(send, session_id="b", dialects=["llm_plans", "claude_todos"])
    assert [t.name for t in plan_tools(both)] == list(tools.NAMES)  # ours stays the default
    assert [t.name for t in plan_tools(both, dialect="claude_todos")] == ["TodoWrite"]


@pytest.mark.parametrize("dialect", NAMES)
def test_every_dialect_binds_as_its_strict_definitions(send: RecordingSend, dialect: str) -> None:
    session = PlanSession(send, session_id="s", dialects=[dialect])
    model = ScriptedChatModel(turns=[])
    model.bind_tools(plan_tools(session, dialect=dialect), strict=True)
    assert model.bound == tools.openai_chat(dialect=dialect)
