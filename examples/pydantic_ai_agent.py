"""An ACP agent built on pydantic-ai: the model plans with `PlanToolset`, the client sees it live.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/pydantic_ai_agent.py                          # a scripted offline model
    OPENAI_API_KEY=... python examples/pydantic_ai_agent.py openai:gpt-4.1

Without a model name it runs a pydantic-ai `FunctionModel` on `framework_agent.SCRIPT` that
streams a plan, works through it and removes it, so it needs no key and no network. The ACP
side is `framework_agent`'s.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from framework_agent import ANSWER, SCRIPT, FrameworkAgent, serve
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from llm_plans import PlanSession, tools
from llm_plans.integrations.pydantic_ai import PlanToolset


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


Run = tuple[Agent[None, str], list[ModelMessage]]  # the session's agent, the history


class PydanticAIAgent(FrameworkAgent[Run]):
    def __init__(self, model_name: str | None) -> None:
        super().__init__()
        self._model = model(model_name)

    def start(self, session: PlanSession, cwd: str) -> Run:
        plans = PlanToolset(session)
        agent = Agent(
            self._model,
            instructions=tools.system_prompt(),
            toolsets=[plans],
            capabilities=[plans.previews()],  # plan steps show as they stream
        )
        return agent, []

    async def answer(self, state: Run, text: str) -> str:
        agent, history = state
        result = await agent.run(text, message_history=history)
        history[:] = result.all_messages()
        return result.output


if __name__ == "__main__":
    serve(PydanticAIAgent(sys.argv[1] if len(sys.argv) > 1 else None))
