"""An ACP agent built on LangGraph: a model node and a `ToolNode` with llm_plans' plan tools.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/langchain_agent.py

The model here is a scripted LangChain chat model that plans, works through the plan and
removes it (`framework_agent.SCRIPT`), so it needs no key and no network. For a real one,
replace `scripted()` with any tool-calling chat model, e.g.
`ChatOpenAI(model="gpt-4.1", streaming=True)` from langchain-openai (`streaming=True` lets plan
steps reach the client as the model writes them). The ACP side is `framework_agent`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from framework_agent import ANSWER, SCRIPT, FrameworkAgent, serve
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from llm_plans import PlanSession, tools
from llm_plans.integrations.langchain import PlanPreviews, plan_tools


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


Graph = tuple[PlanSession, Any, list[BaseMessage]]  # the session, its graph, the history


class LangGraphAgent(FrameworkAgent[Graph]):
    def start(self, session: PlanSession, cwd: str) -> Graph:
        return session, build_graph(session, scripted()), []

    async def answer(self, state: Graph, text: str) -> str:
        session, graph, history = state
        result = await graph.ainvoke(
            {"messages": [*history, ("user", text)]},
            {"callbacks": [PlanPreviews(session)]},  # plan steps show while the model streams
        )
        history[:] = result["messages"]
        return str(result["messages"][-1].content)


if __name__ == "__main__":
    serve(LangGraphAgent())
