"""An ACP agent on the Claude Agent SDK that keeps Claude Code's own planning tools.

The model plans with the tools it was trained on (`TaskCreate`, `TaskUpdate`, `TaskList`,
`TaskGet`, and `ExitPlanMode` in plan mode); Claude Code runs them, and `plan_hooks` mirrors
each call into the session, so the task list and an approved plan (`"plan-mode"`) reach the
ACP client as plans. Plan approval (and any other permission Claude Code asks for) goes to
the ACP client as `session/request_permission`.

A subagent Claude Code runs (its `Agent` tool) plans apart from the main agent. A client that
takes subagent sessions (it advertised `clientCapabilities.subagents: {}`, or speaks v2) sees
it as a child session: a `subagent_update` on this session announces it (titled with its
agent type, `"general-purpose"`), its list and approved plan go out under its own session
id (`"sess_1/agent-<agent id>"`), and when it stops its plans leave and it is announced idle.
Any other client sees its list as the plan `"agent-<agent id>"` of this session.

    ANTHROPIC_API_KEY=... python examples/claude_hooks_agent.py

Set `CLAUDE_PERMISSION_MODE=plan` to start each session in plan mode. The ACP side is
`framework_agent`'s.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import AsyncIterator
from typing import Any

from acp.schema import PermissionOption, ToolCallUpdate
from claude_agent_sdk import (
    CanUseToolShadowedWarning,
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    query,
)
from framework_agent import FrameworkAgent, serve

from llm_plans import PlanSession
from llm_plans.integrations.claude_agent_sdk import BUILTIN_PLAN_TOOLS, plan_hooks

# Allowing the task tools outright is the point: can_use_tool is for everything else.
warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)

_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class ClaudeHooksAgent(FrameworkAgent[ClaudeAgentOptions]):
    # Claude Code's task tools, our tools for the approved plan and subagents' lists.
    dialects = ("llm_plans", "claude_tasks", "claude_todos")

    def start(self, session: PlanSession, cwd: str) -> ClaudeAgentOptions:
        async def ask_client(
            tool: str, given: dict[str, Any], context: ToolPermissionContext
        ) -> PermissionResultAllow | PermissionResultDeny:
            response = await self._conn.request_permission(
                session_id=session.session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=context.tool_use_id or tool,
                    title=context.title or tool,
                    raw_input=given,
                ),
                options=_OPTIONS,
            )
            if getattr(response.outcome, "option_id", None) == "allow":
                return PermissionResultAllow()
            return PermissionResultDeny(message="The user declined.")

        return ClaudeAgentOptions(
            cwd=cwd,
            # The session was made with the client's raw capabilities: it knows whether the
            # client takes subagent sessions, and plan_hooks sends subagents' plans so.
            hooks=plan_hooks(session),
            # Claude Code offers its task tools in SDK sessions only when they are allowed;
            # they only touch the task list, which the hooks mirror.
            allowed_tools=list(BUILTIN_PLAN_TOOLS),
            can_use_tool=ask_client,  # ExitPlanMode's approval, and every other ask
            permission_mode=os.environ.get("CLAUDE_PERMISSION_MODE", "default"),  # type: ignore[arg-type]
        )

    async def answer(self, options: ClaudeAgentOptions, text: str) -> str:
        async def prompt() -> AsyncIterator[dict[str, Any]]:
            # A stream of messages, as `can_use_tool` needs.
            yield {"type": "user", "message": {"role": "user", "content": text}}

        answer = ""
        async for message in query(prompt=prompt(), options=options):
            if isinstance(message, ResultMessage):
                answer = message.result or ""
                options.resume = message.session_id  # the next prompt continues this one
        return answer


if __name__ == "__main__":
    serve(ClaudeHooksAgent())
