"""The plan tools as values: one entry per tool, and how a tool name the model sent resolves.

Every other module asks here: the argument model that validates a call, the verb its result
starts with, and whether a name (plain, or with a namespace such as Claude Code's
`mcp__plans__`) is one of the plan tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Generic, TypeVar

from pydantic import BaseModel

from ._core.prompts import prompt
from ._models import CreatePlanArgs, RemovePlanArgs, ToolName, UpdatePlanArgs


@dataclass(frozen=True)
class PlanTool:
    """One plan tool: its name, the model validating its arguments, and its result's verb."""

    name: ToolName
    arguments: type[BaseModel]
    verb: str
    """How a successful result starts: `Created plan "plan-1".`"""

    @property
    def description(self) -> str:
        """The description the model reads, from `llm_plans/prompts/<name>.md`."""
        return prompt(self.name)


TOOLS: Mapping[ToolName, PlanTool] = MappingProxyType(
    {
        "create_plan": PlanTool("create_plan", CreatePlanArgs, "Created"),
        "update_plan": PlanTool("update_plan", UpdatePlanArgs, "Updated"),
        "remove_plan": PlanTool("remove_plan", RemovePlanArgs, "Removed"),
    }
)

_OURS: Mapping[str, ToolName] = MappingProxyType({name: name for name in TOOLS})
T = TypeVar("T")

DEFAULT_PREFIXES: tuple[str, ...] = ("", "mcp__plans__")
"""The plain names, and the names Claude Code and the Claude Agent SDK give the tools of an
MCP server registered under the key "plans" (`mcp__plans__create_plan`)."""


class Names(Generic[T]):
    """Resolves tool names as the model sent them to the plan tools, for a set of prefixes.

    `tools` maps each plain name to what it resolves to: by default our three tools to their
    names; a session with other dialects passes their tools too (`_dialects.tools_of`).
    """

    def __init__(
        self,
        prefixes: Iterable[str] = DEFAULT_PREFIXES,
        tools: Mapping[str, T] = _OURS,  # type: ignore[assignment]
    ) -> None:
        self.prefixes = tuple(dict.fromkeys(prefixes))
        self.tools = tools
        self._known: dict[str, T] = {
            prefix + name: tool for prefix in self.prefixes for name, tool in tools.items()
        }

    def resolve(self, name: object) -> T | None:
        """The plan tool `name` calls, or None when it names no plan tool."""
        return self._known.get(name) if isinstance(name, str) else None
