"""An ACP agent built on the OpenAI Agents SDK: the model plans with `plan_tools`, live.

Run it as an ACP agent over stdio, e.g. from acpx or Zed:

    python examples/openai_agents_agent.py                    # a scripted offline model
    OPENAI_API_KEY=... python examples/openai_agents_agent.py gpt-4.1

Without a model name it runs the SDK's `ScriptedModel`, which streams a plan, works through
it and removes it, so it needs no key and no network.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send, tools
from llm_plans.integrations.openai_agents import PlanPreviews, plan_tools

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


def scripted() -> ScriptedModel:
    steps: list[Any] = [
        [function_call(name, json.dumps(args), call_id=f"call_{n}")]
        for n, (name, args) in enumerate(SCRIPT, 1)
    ]
    return ScriptedModel([*steps, [assistant_message(ANSWER)]])


class OpenAIAgentsAgent:
    def __init__(self, recorder: ClientCapabilitiesRecorder, model_name: str | None) -> None:
        self._recorder = recorder
        self._model_name = model_name
        self._conn: Any = None
        self._sessions: dict[str, tuple[PlanSession, list[Any]]] = {}

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
        self._sessions[session_id] = (session, [])
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        session, history = self._sessions[session_id]
        agent = Agent(
            name="coder",
            instructions=tools.system_prompt(),
            model=self._model_name or scripted(),
            tools=plan_tools(session),
        )
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        offline = self._model_name is None  # nothing to send traces to
        result = Runner.run_streamed(
            agent,
            [*history, {"role": "user", "content": text}],
            run_config=RunConfig(tracing_disabled=offline),
        )
        previews = PlanPreviews(session)
        async for event in result.stream_events():
            await previews.on_event(event)  # plan steps reach the client as they stream
        history[:] = result.to_input_list()
        await self._conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(str(result.final_output))
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main(argv: list[str]) -> None:
    recorder = ClientCapabilitiesRecorder()
    agent = OpenAIAgentsAgent(recorder, argv[0] if argv else None)
    await acp.run_agent(agent, observers=[recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
