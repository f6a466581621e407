"""An ACP agent built on the Claude Agent SDK: Claude Code plans with llm_plans' MCP tools.

Run it as an ACP agent over stdio, e.g. from acpx or Zed, with Claude Code's credentials
(`ANTHROPIC_API_KEY`, or a logged-in Claude Code):

    ANTHROPIC_API_KEY=... python examples/claude_agent_sdk_agent.py

Claude Code (bundled with the SDK) runs the model; the plan tools run in this process, and
plan steps reach the ACP client as Claude writes them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send
from llm_plans.integrations.claude_agent_sdk import (
    BUILTIN_PLAN_TOOLS,
    PLAN_TOOL_NAMES,
    PlanPreviews,
    plan_server,
)


class ClaudeAgent:
    def __init__(self, recorder: ClientCapabilitiesRecorder) -> None:
        self._recorder = recorder
        self._conn: Any = None
        self._sessions: dict[str, tuple[PlanSession, ClaudeAgentOptions]] = {}

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
        options = ClaudeAgentOptions(
            cwd=cwd,
            mcp_servers={"plans": plan_server(session)},
            allowed_tools=list(PLAN_TOOL_NAMES),  # plan tools only touch the plan view
            disallowed_tools=list(BUILTIN_PLAN_TOOLS),  # plan with these, not TodoWrite
            include_partial_messages=True,  # stream events, for live plan previews
        )
        self._sessions[session_id] = (session, options)
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        session, options = self._sessions[session_id]
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        previews = PlanPreviews(session)
        answer = ""
        async for message in query(prompt=text, options=options):
            await previews.on_message(message)
            if isinstance(message, ResultMessage):
                answer = message.result or ""
                options.resume = message.session_id  # the next prompt continues this one
        await self._conn.session_update(
            session_id=session_id, update=acp.update_agent_message_text(answer)
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


async def main() -> None:
    recorder = ClientCapabilitiesRecorder()
    await acp.run_agent(ClaudeAgent(recorder), observers=[recorder], use_unstable_protocol=True)


if __name__ == "__main__":
    asyncio.run(main())
