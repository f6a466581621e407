"""What the framework examples share: an ACP agent around a framework, and an offline script.

`FrameworkAgent` does the ACP side once: it records the client's capabilities, opens a
`PlanSession` per ACP session (in the form the client advertised), and sends the framework's
answer as the agent's message. An example subclasses it with the two things particular to its
framework: `start` (what a session keeps: an agent, a graph, options, a history) and `answer`
(one prompt's run). `serve` runs it over stdio.

`SCRIPT` is what the examples' offline models call, so they need no key and no network: plan,
work through the plan, remove it, then `ANSWER`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Generic, TypeVar, cast

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from coding_agent_lib.acp_builders import message_text

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send

# One plan call per model response, then the final answer.
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

State = TypeVar("State")


class FrameworkAgent(Generic[State]):
    """An ACP agent with a `PlanSession` per ACP session; subclasses run the model."""

    dialects: tuple[str, ...] = ("llm_plans",)
    """The plan tools its sessions take (`PlanSession(dialects=...)`)."""

    def __init__(self) -> None:
        self.recorder = ClientCapabilitiesRecorder()  # keeps planCapabilities, unknown to acp
        self._conn: Any = None
        self._sessions: dict[str, State] = {}

    def start(self, session: PlanSession, cwd: str) -> State:
        """What a new session keeps between prompts."""
        raise NotImplementedError

    async def answer(self, state: State, text: str) -> str | None:
        """Run one prompt; the text for the user, or None to say nothing."""
        raise NotImplementedError

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
            client_capabilities=self.recorder,  # the capabilities and the negotiated version
            workspace=cwd,
            dialects=self.dialects,
        )
        self._sessions[session_id] = self.start(session, cwd)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        reply = await self.answer(self._sessions[session_id], text)
        if reply is not None:
            update = message_text(reply)
            await self._conn.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


def serve(agent: FrameworkAgent[Any]) -> None:
    """Run `agent` as an ACP agent on stdin/stdout until the client closes them."""
    # The SDK calls only the methods an agent has; its Agent protocol lists every one.
    served = cast("acp.Agent", agent)
    run = acp.run_agent(served, observers=[agent.recorder], use_unstable_protocol=True)
    asyncio.run(run)
