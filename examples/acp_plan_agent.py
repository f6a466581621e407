"""A minimal ACP agent whose "model" is a fixed script of plan tool calls.

It shows the ACP SDK binding on its own: record the client's capabilities, open a
`PlanSession` per ACP session, and run every plan tool call through it. Run it with
`python examples/acp_plan_agent.py` and talk ACP to it on stdin/stdout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send

# What a model might call while fixing a bug: a checklist, a design note, progress, clean-up.
SCRIPT: list[tuple[str, Any]] = [
    (
        "create_plan",
        {
            "type": "items",
            "id": None,
            "entries": [
                {"content": "Reproduce the bug", "priority": "high", "status": "in_progress"},
                {"content": "Fix the parser", "priority": "high", "status": None},
                {"content": "Add a regression test", "priority": None, "status": None},
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
    def __init__(self, recorder: ClientCapabilitiesRecorder) -> None:
        self._recorder = recorder
        self._sessions: dict[str, PlanSession] = {}
        self._conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=AgentCapabilities()
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"sess_{len(self._sessions) + 1}"
        self._sessions[session_id] = PlanSession(
            acp_send(self._conn),
            session_id=session_id,
            client_capabilities=self._recorder.capabilities,
            workspace=cwd,
        )
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        plans = self._sessions[session_id]
        for tool, arguments in SCRIPT:
            await plans.call(tool, arguments)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main() -> None:
    recorder = ClientCapabilitiesRecorder()
    await acp.run_agent(PlanAgent(recorder), observers=[recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main())
