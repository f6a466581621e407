"""An ACP agent whose model is a fixed script of plan tool calls: run it with python and talk
ACP to it on stdin/stdout."""

import asyncio
from typing import Any, cast

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send

# What a model might call while fixing a bug: a checklist, a design note, progress, clean-up.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    (
        "create_plan",
        {
            "type": "items",
            "entries": [
                {"content": "Reproduce the bug", "priority": "high", "status": "in_progress"},
                {"content": "Fix the parser", "priority": "high"},
                {"content": "Add a regression test"},
            ],
        },
    ),
    ("create_plan", {"type": "markdown", "id": "notes", "content": "## Approach\n- [ ] Patch"}),
    (
        "update_plan",
        {
            "id": "plan-1",
            "changes": [{"step": 1, "status": "completed"}, {"step": 2, "status": "in_progress"}],
        },
    ),
    ("remove_plan", {"id": "notes"}),
]


class PlanAgent:
    def __init__(self) -> None:
        self.recorder = ClientCapabilitiesRecorder()  # keeps what `initialize` settled
        self.sessions: dict[str, PlanSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=AgentCapabilities()
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"sess_{len(self.sessions) + 1}"
        self.sessions[session_id] = PlanSession(
            acp_send(self.conn), session_id=session_id, client_capabilities=self.recorder
        )
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        session = self.sessions[session_id]
        for tool, arguments in SCRIPT:  # your model's plan tool calls, as it makes them
            await session.call(tool, arguments)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main() -> None:
    agent = PlanAgent()
    # The SDK calls only the methods an agent has; its Agent protocol lists every one.
    served = cast("acp.Agent", agent)
    await acp.run_agent(served, observers=[agent.recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main())
