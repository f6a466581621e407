"""An ACP agent built on pydantic-ai: the model plans with `PlanToolset`, the client sees it live.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/pydantic_ai_agent.py                          # a scripted offline model
    OPENAI_API_KEY=... python examples/pydantic_ai_agent.py openai:gpt-4.1

Without a model name it runs a scripted pydantic-ai `FunctionModel` that streams a plan, works
through it and removes it, so it needs no key and no network.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send, tools
from llm_plans.integrations.pydantic_ai import PlanToolset

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


async def scripted(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """A streaming model that follows SCRIPT, one step per tool result it has been given."""
    done = sum(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
    if done >= len(SCRIPT):
        yield ANSWER
        return
    name, arguments = SCRIPT[done]
    text = json.dumps(arguments)
    yield {0: DeltaToolCall(name=name, tool_call_id=f"call_{done + 1}")}
    for start in range(0, len(text), 16):  # arguments arrive in fragments, as from an API
        delta: DeltaToolCalls = {0: DeltaToolCall(json_args=text[start : start + 16])}
        yield delta


def model(name: str | None) -> Model | str:
    return name or FunctionModel(stream_function=scripted, model_name="scripted")


class PydanticAIAgent:
    def __init__(self, recorder: ClientCapabilitiesRecorder, model_name: str | None) -> None:
        self._recorder = recorder
        self._model = model(model_name)
        self._conn: Any = None
        self._sessions: dict[str, tuple[Agent[None, str], list[ModelMessage]]] = {}

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
        plans = PlanToolset(session)
        agent = Agent(
            self._model,
            instructions=tools.system_prompt(),
            toolsets=[plans],
            capabilities=[plans.previews()],  # plan steps show as they stream
        )
        self._sessions[session_id] = (agent, [])
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        agent, history = self._sessions[session_id]
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        result = await agent.run(text, message_history=history)
        history[:] = result.all_messages()
        await self._conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(result.output)
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main(argv: list[str]) -> None:
    recorder = ClientCapabilitiesRecorder()
    agent = PydanticAIAgent(recorder, argv[0] if argv else None)
    await acp.run_agent(agent, observers=[recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
