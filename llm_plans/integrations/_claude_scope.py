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
_PLAIN_AGENT = re.compile(r"[A-Za-z0-9_.-]+")
_PLAIN_AGENT_CHARS = 40


class Task:
    """One task a list holds, as far as a resync compares it."""

    def __init__(self, content: str, status: str, owner: str | None) -> None:
        self.content = content
        self.status = status
        self.owner = owner


class Scope:
    """Where one agent's calls go: the plans of the first Claude Code session seen (the
    session's own list, `"plan-mode"`, `"agent-<id>"`), or of another one (all named
    `"claude-<key>..."`), and within either, the main agent's or a subagent's own."""

    def __init__(self, session: PlanSession, agent: object, claude: str | None = None) -> None:
        self.session = session
        self.agent = agent if isinstance(agent, str) and agent else None
        own = "" if claude is None else f"claude-{claude}"
        # The start of the plan ids of this Claude session's subagents.
        self.agents = f"{own}-agent-" if own else "agent-"
        # The list id a mirrored call names: None for the session's own list.
        self.own_list: str | None = own or None
        self.plan_id = f"{own}-plan" if own else PLAN_MODE_ID
        if self.agent is not None:
            # A subagent's ids fit a plan id after another session's longer start too.
            width = _PLAIN_AGENT_CHARS - (len(own) + 1 if own else 0)
            self.own_list = self.agents + agent_key(self.agent, width)
            self.plan_id = f"{self.own_list}-plan"
        self.list_id = self.own_list or session.list_id or ""
        # Only the session's own list may be an empty plan: any other goes once it empties.
        self.removable = self.own_list is not None

    def tasks(self) -> dict[str, Task]:
        """The tasks this scope's list holds, by Claude Code's id, in the list's order."""
        return tasks_of(self.session, self.list_id)

    def elsewhere(self) -> set[str]:
        """Ids of the tasks this Claude session's subagents' lists hold (its task list is
        shared): not its main list's to add."""
        return {
            task_id
            for plan_id in self.session.plans
            if plan_id.startswith(self.agents) and plan_id != self.list_id
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


def agent_key(agent_id: str, width: int = _PLAIN_AGENT_CHARS) -> str:
    """The part of a subagent's plan ids that names it: its id, or a hash of an id longer
    than `width` or too odd to be part of a plan id."""
    if len(agent_id) <= width and _PLAIN_AGENT.fullmatch(agent_id):
        return agent_id
    return hashlib.sha256(agent_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
