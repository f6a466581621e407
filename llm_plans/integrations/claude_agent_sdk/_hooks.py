"""Claude Code's own plan tools mirrored into a session: `plan_hooks(session)`, public as
`llm_plans.integrations.claude_agent_sdk.plan_hooks`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

try:
    from claude_agent_sdk import HookContext, HookMatcher
    from claude_agent_sdk.types import HookEvent, HookInput, HookJSONOutput
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[claude-agent-sdk]"'
    ) from missing

from ..._errors import ConfigurationError
from ..._session import PlanSession
from ._mirror import MIRRORED, Mirror
from ._scope import PLAN_MODE_ID

__all__ = ["PLAN_MODE_ID", "plan_hooks"]

_logger = logging.getLogger("llm_plans")

Hook = Callable[[HookInput, str | None, HookContext], Awaitable[HookJSONOutput]]


def plan_hooks(
    session: PlanSession, *, keep_subagent_plans: bool = False
) -> dict[HookEvent, list[HookMatcher]]:
    """Hooks for `ClaudeAgentOptions(hooks=...)` that mirror Claude Code's own plan tools
    (`TaskCreate`, `TaskUpdate`, `TaskList`, `TaskGet`, `TodoWrite`, `ExitPlanMode`) into
    `session`.

    The model keeps the tools it was trained on; Claude Code runs them, and the hooks tell the
    session what happened, through `session.call` with the same dialect tools, so every rule,
    limit and notification form of the session applies.

    - The session must accept `claude_tasks` and/or `claude_todos` (the tools it accepts are the
      ones mirrored) and `llm_plans`: an approved plan and a subagent's list are plans of their
      own, written and removed with our tools.
    - Hooks never block or edit a call: each returns `{}`. A call is mirrored at `PostToolUse`,
      once Claude Code has run it, and only then; a call that fails (`PostToolUseFailure`) or is
      denied never reaches the client, so there is nothing to take back.
    - Task ids are Claude Code's: a `TaskCreate` is mirrored with the id its `tool_response`
      gives. A `TaskList` result resyncs the list with what Claude Code says exists (tasks it no
      longer lists are deleted, changed subjects, statuses and owners follow, unknown tasks are
      added to the main list); a `TaskGet` result does the same for its one task. An update of a
      task the mirror does not hold is not an error: it is left for the next resync, with one log
      line. A mirrored call the session rejects (a limit) is logged; Claude Code's call stands.
    - `ExitPlanMode`, once approved, becomes (or replaces) the markdown plan `"plan-mode"`; a
      declined one runs no tool and leaves nothing.
    - Calls made inside a subagent (their hook input carries its `agent_id`) go to plans of its
      own, never the main ones. Where the client takes subagent sessions
      (`session.takes_subagents`), the subagent is a child session
      (`session.subagent(...)`, announced before its first plan), titled with its
      `agent_type`, with the id `"<session id>/agent-<id>"`: its list is the child's own list,
      its approved plan the child's `"plan-mode"`. Elsewhere they are plans of the session:
      its list `"agent-<id>"` and its approved plan `"agent-<id>-plan"`. When the subagent
      stops (`SubagentStop`) its plans are removed, as Claude Code drops a subagent's todos,
      unless `keep_subagent_plans=True`; a child session is then closed
      (`close(keep_plans=keep_subagent_plans)`: announced idle). A subagent's list among the
      session's plans is removed once it empties (only the session's own list may be an
      empty plan); a child's is the child's own list, and stays. A subagent's `TaskList`
      only resyncs the tasks its list holds: Claude Code's task list is shared, the other
      tasks are not its own.
    - Claude Code sessions are kept apart by their `session_id` (each has a task list of its
      own, numbered from 1): the first seen writes the plans above; another one (a `query()`
      without `resume`, a concurrent query) writes its own, `"claude-<key>"` for its list,
      `"claude-<key>-plan"` and `"claude-<key>-agent-<id>"` (`<key>`: the first 8 hex digits
      of its session id; its subagents' child sessions `"<session id>/claude-<key>-agent-<id>"`).
      Its list stays when its query ends (a `resume` continues it) and is removed once it
      empties, or, when a new session comes with the session's plans full
      (`Limits.max_plans`), if it is the least recently active (its subagents' child
      sessions are closed then). At most `max_plans` other sessions are kept apart: one
      forgotten starts a new list if it comes back. A hook input without a `session_id` is
      not mirrored.
    - In SDK sessions Claude Code offers its `Task*` tools (not `TodoWrite`), and only when
      they are allowed: `allowed_tools=list(BUILTIN_PLAN_TOOLS)`.

    Args:
        session: The session to mirror into; it must take `llm_plans` and `claude_tasks`
            and/or `claude_todos` (ConfigurationError otherwise).
        keep_subagent_plans: Leave a subagent's plans on the client when it stops, rather
            than remove them as Claude Code drops its todos.

    Example:
        session = PlanSession(send, session_id="s", dialects=["llm_plans", "claude_tasks"])
        options = ClaudeAgentOptions(hooks=plan_hooks(session))
    """
    tools = [name for name in MIRRORED[:-1] if session.plan_tool(name) == name]
    if not tools or session.plan_tool("create_plan") != "create_plan":
        raise ConfigurationError(
            "plan_hooks mirrors Claude Code's TaskCreate/TaskUpdate/TaskList/TaskGet and "
            "TodoWrite through the session's claude_tasks and claude_todos tools, and writes "
            "approved plans and subagents' lists with create_plan: create the session with "
            'PlanSession(..., dialects=["llm_plans", "claude_tasks", "claude_todos"]) '
            f"(it takes {', '.join(session.tool_names)})"
        )
    mirror = Mirror(session, keep_subagent_plans)
    matcher = "|".join([*tools, "ExitPlanMode"])
    return {
        "PostToolUse": [HookMatcher(matcher=matcher, hooks=[_hook(mirror.tool_used)])],
        "PostToolUseFailure": [HookMatcher(matcher=matcher, hooks=[_hook(mirror.tool_failed)])],
        "SubagentStop": [HookMatcher(hooks=[_hook(mirror.subagent_stopped)])],
    }


def _hook(handle: Callable[[Mapping[str, Any]], Awaitable[None]]) -> Hook:
    async def hook(
        data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        given: Any = data
        if not isinstance(given, Mapping):
            return {}
        try:
            await handle(given)
        except Exception:
            # A mirror never stops Claude Code: the next TaskList resyncs what was missed.
            _logger.exception("plan_hooks: mirroring %s failed", given.get("hook_event_name"))
        return {}

    return hook
