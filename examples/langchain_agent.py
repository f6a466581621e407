"""An ACP agent built on LangGraph: a model node and a `ToolNode` with llm_plans' plan tools.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/langchain_agent.py

The model here is a scripted LangChain chat model that plans, works through the plan and
removes it, so it needs no key and no network. For a real one, replace `scripted()` with any
tool-calling chat model, e.g. `ChatOpenAI(model="gpt-4.1", streaming=True)` from
langchain-openai (`streaming=True` lets plan steps reach the client as the model writes them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send, tools
from llm_plans.integrations.langchain import PlanPreviews, plan_tools

# The offline model's script: one plan call per response, then its final answer.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    (
        "create_plan",
        {
            "type": "items",
            "entries": [
                {"content": "Reproduce the bug", "status": "in_progress"},
                {"content": "Fix the parser", "priority": "high"},
                {"content": "Add a regression test"},
            ],
        },
    ),
    ("update_plan", {"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]}),
    ("remove_plan", {"id": "plan-1"}),
]
ANSWER = "Fixed the parser and added a regression test."


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, taught to accept tools."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self


def scripted() -> ScriptedModel:
    replies = [
        AIMessage("", tool_calls=[{"id": f"call_{n}", "name": name, "args": args}])
        for n, (name, args) in enumerate(SCRIPT, 1)
    ]
    return ScriptedModel(messages=iter([*replies, AIMessage(ANSWER)]))


def build_graph(session: PlanSession, model: Any) -> Any:
    plans = plan_tools(session)
    bound = model.bind_tools(plans, strict=True)

    async def call_model(state: MessagesState) -> dict[str, list[BaseMessage]]:
        prompt = [SystemMessage(tools.system_prompt()), *state["messages"]]
        return {"messages": [await bound.ainvoke(prompt)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(plans))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


class LangGraphAgent:
    def __init__(self, recorder: ClientCapabilitiesRecorder) -> None:
        self._recorder = recorder
        self._conn: Any = None
        self._sessions: dict[str, tuple[PlanSession, Any, list[BaseMessage]]] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=AgentCapabilities()
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"sess_{len(self._sessions) + 1}"
        session = PlanSession(
            acp_send(self._conn),
            session_id=session_id,
            client_capabilities=self._recorder.capabilities,
            workspace=cwd,
        )
        self._sessions[session_id] = (session, build_graph(session, scripted()), [])
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        session, graph, history = self._sessions[session_id]
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        state = await graph.ainvoke(
            {"messages": [*history, ("user", text)]},
            {"callbacks": [PlanPreviews(session)]},  # plan steps show while the model streams
        )
        history[:] = state["messages"]
        await self._conn.session_update(
            session_id=session_id,
            update=acp.update_agent_message_text(str(state["messages"][-1].content)),
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main() -> None:
    recorder = ClientCapabilitiesRecorder()
    await acp.run_agent(LangGraphAgent(recorder), observers=[recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main())
