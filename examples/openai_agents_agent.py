"""An ACP agent built on the OpenAI Agents SDK: the model plans with `plan_tools`, live.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/openai_agents_agent.py                    # a scripted offline model
    OPENAI_API_KEY=... python examples/openai_agents_agent.py gpt-4.1

Without a model name it runs the SDK's `ScriptedModel` on `framework_agent.SCRIPT`, which
streams a plan, works through it and removes it, so it needs no key and no network. The ACP
side is `framework_agent`'s.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from framework_agent import ANSWER, SCRIPT, FrameworkAgent, serve

from llm_plans import PlanSession, tools
from llm_plans.integrations.openai_agents import PlanPreviews, plan_tools


def scripted() -> ScriptedModel:
    steps: list[Any] = [
        [function_call(name, json.dumps(args), call_id=f"call_{n}")]
        for n, (name, args) in enumerate(SCRIPT, 1)
    ]
    return ScriptedModel([*steps, [assistant_message(ANSWER)]])


class OpenAIAgentsAgent(FrameworkAgent[tuple[PlanSession, list[Any]]]):
    def __init__(self, model_name: str | None) -> None:
        super().__init__()
        self._model_name = model_name

    def start(self, session: PlanSession, cwd: str) -> tuple[PlanSession, list[Any]]:
        return session, []  # the session and the run's input history

    async def answer(self, state: tuple[PlanSession, list[Any]], text: str) -> str:
        session, history = state
        agent = Agent(
            name="coder",
            instructions=tools.system_prompt(),
            model=self._model_name or scripted(),
            tools=[*plan_tools(session)],  # a list[Tool], as Agent types it
        )
        offline = self._model_name is None  # nothing to send traces to
        result = Runner.run_streamed(
            agent,
            [*history, {"role": "user", "content": text}],
            run_config=RunConfig(tracing_disabled=offline),
        )
        # Leaving the block (the run done, failed or cancelled) takes back the previews of any
        # call no tool ran.
        async with PlanPreviews(session) as previews:
            async for event in result.stream_events():
                await previews.on_event(event)  # plan steps reach the client as they stream
        history[:] = result.to_input_list()
        return str(result.final_output)


if __name__ == "__main__":
    serve(OpenAIAgentsAgent(sys.argv[1] if len(sys.argv) > 1 else None))
