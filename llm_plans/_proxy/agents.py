"""The agents the proxy upgrades, and what each one's plan signals look like.

Each profile names the signals of one agent as its published package sends them (the
versions in `docs/proxy.md`; evidence in the recorded transcripts under
`tests/proxy/transcripts/`). An agent is known by the `agentInfo.name` it answers `initialize`
with, or else by its command's name. An agent no profile names is relayed as it is, apart
from the down-conversion of plan forms the proxy asked for on the client's behalf.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Profile:
    """What the proxy reads from one agent.

    Args:
        name: The agent, as logs and docs say it.
        markers: Words that name it in `agentInfo.name` or its command (lower case).
        tools: Its plan tool names (as its tool calls name them) to the tool a session
            mirrors them with: a tool call's `rawInput` is the plan.
        titled: Its tool calls name their tool only in the first `tool_call`'s title
            (opencode): the title is the tool name.
        lists: Its legacy `plan` lists are its plan, upgraded to the client's form.
        subagents: Its subagents' lists come on the parent session, marked with
            `_meta.claudeCode.parentToolUseId`, and their tool calls are `Agent` or `Task`.
        proposals: Tool names whose `rawInput.plan` is a plan proposal in Markdown.
    """

    name: str
    markers: tuple[str, ...] = ()
    tools: Mapping[str, str] = field(default_factory=dict)
    titled: bool = False
    lists: bool = False
    subagents: bool = False
    proposals: tuple[str, ...] = ()

    def tool_name(self, update: Mapping[str, Any]) -> str | None:
        """The tool a `tool_call` or `tool_call_update` names, where this agent says it."""
        name = update.get("name")
        if isinstance(name, str):
            return name
        meta = update.get("_meta")
        if isinstance(meta, Mapping):
            claude = meta.get("claudeCode")
            if isinstance(claude, Mapping) and isinstance(claude.get("toolName"), str):
                return str(claude["toolName"])
            if isinstance(meta.get("tool_name"), str):
                return str(meta["tool_name"])
        title = update.get("title")
        if self.titled and update.get("sessionUpdate") == "tool_call" and isinstance(title, str):
            return title
        return None


OPENCODE = Profile("opencode", ("opencode",), {"todowrite": "todowrite"}, titled=True)
"""opencode 1.18: no plan of its own; each `todowrite` call's `rawInput` is the whole list."""
VIBE = Profile("Mistral Vibe", ("vibe",), {"vibe.todo": "todo", "todo": "todo"}, lists=True)
"""Mistral Vibe 3.0: the `todo` tool's `rawInput` (ids, priorities, cancelled steps), named
`vibe.todo` in `_meta.tool_name` (`todo` as well, in case a release drops the prefix); its
own legacy list, which drops cancelled steps and ids, is left out where it restates a call
the proxy took (`_meta.effect_entry_id` is that call's id)."""
CLAUDE = Profile(
    "claude-agent-acp",
    ("claude",),
    lists=True,
    subagents=True,
    proposals=("ExitPlanMode",),
)
"""claude-agent-acp 0.101: TodoWrite and Task* as legacy lists only, subagents' lists marked
with their parent tool call, and plan-mode proposals as `ExitPlanMode` tool calls."""
CODEX = Profile("codex-acp", ("codex",), lists=True)
"""codex-acp 2.6: `update_plan` as legacy lists; proposed plans as markdown `plan_update`s
for a client that takes them (the proxy asks for them and converts them down)."""
UNKNOWN = Profile("an unrecognised agent")
"""Relayed as sent."""

PROFILES = (OPENCODE, VIBE, CLAUDE, CODEX)


def recognise(agent_info: object, command: Sequence[str]) -> Profile:
    """The profile of the agent that answered `initialize` with `agent_info`, started by
    `command`: its `agentInfo.name` decides, else its command's name; UNKNOWN for neither."""
    if isinstance(agent_info, Mapping) and isinstance(agent_info.get("name"), str):
        names = [agent_info["name"].lower()]
    else:
        # A launcher's first words (`npx -y @agentclientprotocol/claude-agent-acp`, `uvx
        # vibe-acp`), never an option or a long option's value (`--model claude-x`).
        words = command[:4]
        names = [
            os.path.basename(word).lower()
            for at, word in enumerate(words)
            if not word.startswith("-") and not (at and words[at - 1].startswith("--"))
        ]
    for name in names:
        for profile in PROFILES:
            if any(marker in name for marker in profile.markers):
                return profile
    return UNKNOWN
