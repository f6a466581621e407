"""An ACP agent built on the Claude Agent SDK: Claude Code plans with llm_plans' MCP tools.

Run it as an ACP agent over stdio, e.g. from acpx or Zed, with Claude Code's credentials
(`ANTHROPIC_API_KEY`, or a logged-in Claude Code):

    ANTHROPIC_API_KEY=... python examples/claude_agent_sdk_agent.py

Claude Code (bundled with the SDK) runs the model; the plan tools run in this process, and
plan steps reach the ACP client as Claude writes them. The ACP side is `framework_agent`'s.
"""

from __future__ import annotations

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
from framework_agent import FrameworkAgent, serve

from llm_plans import PlanSession
from llm_plans.integrations.claude_agent_sdk import (
    BUILTIN_PLAN_TOOLS,
    PLAN_TOOL_NAMES,
    PlanPreviews,
    plan_server,
)


class ClaudeAgent(FrameworkAgent[tuple[PlanSession, ClaudeAgentOptions]]):
    def start(self, session: PlanSession, cwd: str) -> tuple[PlanSession, ClaudeAgentOptions]:
        options = ClaudeAgentOptions(
            cwd=cwd,
            mcp_servers={"plans": plan_server(session)},
            allowed_tools=list(PLAN_TOOL_NAMES),  # plan tools only touch the plan view
            disallowed_tools=list(BUILTIN_PLAN_TOOLS),  # plan with these, not TodoWrite
            include_partial_messages=True,  # stream events, for live plan previews
        )
        return session, options

    async def answer(self, state: tuple[PlanSession, ClaudeAgentOptions], text: str) -> str:
        session, options = state
        answer = ""
        # Leaving the block (the query done, failed or cancelled) takes back the previews of
        # any call no tool ran.
        async with PlanPreviews(session) as previews:
            async for message in query(prompt=text, options=options):
                await previews.on_message(message)
                if isinstance(message, ResultMessage):
                    answer = message.result or ""
                    options.resume = message.session_id  # the next prompt continues this one
        return answer


if __name__ == "__main__":
    serve(ClaudeAgent())
