"""Where the mirrored calls of one Claude Code agent go: the main agent's list and approved
plan, or a subagent's own (plans of the session, or a child session of its own where the
client takes subagent sessions), and the tasks a list holds by Claude Code's ids."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from ..._core.plans import META_KEY
from ..._session import PlanSession

PLAN_MODE_ID = "plan-mode"
"""The id of the markdown plan an approved `ExitPlanMode` becomes."""

# An agent id short and plain enough to show in a plan id as it is; others are hashed.
_PLAIN_AGENT = re.compile(r"[A-Za-z0-9_.-]+")
_PLAIN_AGENT_CHARS = 40
# A parent session id longer than this is hashed in its children's ids, which stay within
# the 1024 characters a child session id may have after the subagent's name (at most ~60).
_PLAIN_PARENT_CHARS = 900
# A subagent's title: its agent type, cut (a client shows it as one line).
_TITLE_CHARS = 100


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
        # The session the calls are written into: this one, or a subagent's child session.
        self.target = session
        # A subagent's child session id: unique on the connection, as the parent's id is,
        # and within it by the Claude session and agent (their plan ids' start).
        self.child_id = child_id(session.session_id, self.own_list or "")
        self.label = self.list_id  # what the log calls the list

    def into(self, child: PlanSession) -> None:
        """Write into `child`, the subagent's own session: its list is the child's own list,
        its approved plan the child's `"plan-mode"`."""
        self.target = child
        self.own_list = None
        self.list_id = child.list_id or ""
        self.plan_id = PLAN_MODE_ID
        self.removable = False  # the child's own list, as the session's own may be empty
        self.label = f"{child.session_id}'s {self.list_id}"

    def tasks(self) -> dict[str, Task]:
        """The tasks this scope's list holds, by Claude Code's id, in the list's order."""
        return tasks_of(self.target, self.list_id)

    def children(self) -> dict[str, PlanSession]:
        """The child sessions of this Claude session's subagents, by child session id."""
        start = child_id(self.session.session_id, self.agents)
        return {i: c for i, c in self.session.subagents.items() if i.startswith(start)}

    def elsewhere(self) -> set[str]:
        """Ids of the tasks this Claude session's subagents' lists hold (its task list is
        shared): not its main list's to add."""
        held = {
            task_id
            for plan_id in self.session.plans
            if plan_id.startswith(self.agents) and plan_id != self.list_id
            for task_id in tasks_of(self.session, plan_id)
        }
        for child in self.children().values():
            held.update(tasks_of(child, child.list_id or ""))
        return held


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


def child_id(parent_id: str, name: str) -> str:
    """The session id of the child named `name` (a subagent's plan ids' start) of session
    `parent_id`; a huge parent id is hashed, as a child's id must stay readable."""
    if len(parent_id) > _PLAIN_PARENT_CHARS:
        parent_id = hashlib.sha256(parent_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{parent_id}/{name}"


def title_of(agent_type: object, agent_id: str, *, known: bool) -> str | None:
    """A subagent's title: its agent type (`"general-purpose"`, `"Explore"`) cut to one
    short line; without one, one made from its id for a new child, None (the title it has)
    for a `known` one."""
    line = " ".join(agent_type.split()) if isinstance(agent_type, str) else ""
    if line:
        return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "\u2026"
    return None if known else f"Subagent {agent_key(agent_id, 16)}"
