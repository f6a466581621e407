"""Where the mirrored calls of one Claude Code agent go: the main agent's list and approved
plan, or a subagent's own, and the tasks a list holds by Claude Code's ids."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from .._book import META_KEY
from .._session import PlanSession

PLAN_MODE_ID = "plan-mode"
"""The id of the markdown plan an approved `ExitPlanMode` becomes."""

# An agent id short and plain enough to show in a plan id as it is; others are hashed.
_PLAIN_AGENT = re.compile(r"[A-Za-z0-9_.-]{1,40}")


class Task:
    """One task a list holds, as far as a resync compares it."""

    def __init__(self, content: str, status: str, owner: str | None) -> None:
        self.content = content
        self.status = status
        self.owner = owner


class Scope:
    """Where one agent's calls go: the main agent's, or a subagent's own plans."""

    def __init__(self, session: PlanSession, agent: object) -> None:
        self.session = session
        self.agent = agent if isinstance(agent, str) and agent else None
        key = None if self.agent is None else agent_key(self.agent)
        self.agent_list = None if key is None else f"agent-{key}"
        """The subagent's list id, None for the main agent (the session's own list)."""
        self.list_id = self.agent_list or session.list_id or ""
        self.plan_id = PLAN_MODE_ID if key is None else f"agent-{key}-plan"

    def tasks(self) -> dict[str, Task]:
        """The tasks this scope's list holds, by Claude Code's id, in the list's order."""
        return tasks_of(self.session, self.list_id)

    def elsewhere(self) -> set[str]:
        """Ids of the tasks subagents' lists hold (the task list is shared): not the main
        list's to add."""
        return {
            task_id
            for plan_id in self.session.plans
            if plan_id.startswith("agent-") and plan_id != self.list_id
            for task_id in tasks_of(self.session, plan_id)
        }


def tasks_of(session: PlanSession, plan_id: str) -> dict[str, Task]:
    """The tasks plan `plan_id` holds (entries with a task id), by id; none for no plan."""
    plan = session.plans.get(plan_id)
    entries = getattr(plan, "entries", None) or ()
    out: dict[str, Task] = {}
    for entry in entries:
        kept = (entry.meta or {}).get(META_KEY)
        if isinstance(kept, Mapping) and isinstance(kept.get("taskId"), str):
            owner = kept.get("owner")
            out[kept["taskId"]] = Task(
                entry.content, entry.status, owner if isinstance(owner, str) else None
            )
    return out


def agent_key(agent_id: str) -> str:
    """The part of a subagent's plan ids that names it: its id, or a hash of an id too long
    or odd to be part of a plan id."""
    if _PLAIN_AGENT.fullmatch(agent_id):
        return agent_id
    return hashlib.sha256(agent_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
