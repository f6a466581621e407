"""The plan dialects by name, and the tools a set of them gives a session.

`"llm_plans"` is ours (`create_plan`, `update_plan`, `remove_plan`, handled by the core
itself); every other dialect is a module of `llm_plans.dialects`, listed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ._errors import ConfigurationError
from ._models import ToolName
from ._registry import TOOLS
from .dialects import claude_tasks, claude_todos, codex, cursor, write_todos
from .dialects._base import Dialect, DialectTool

OURS = "llm_plans"

DIALECTS: Mapping[str, Dialect] = MappingProxyType(
    {
        d.name: d
        for d in (
            claude_todos.DIALECT,
            claude_tasks.DIALECT,
            codex.DIALECT,
            write_todos.DIALECT,
            cursor.DIALECT,
        )
    }
)
"""Every dialect but ours, by name."""

NAMES: tuple[str, ...] = (OURS, *DIALECTS)
"""The names `PlanSession(dialects=...)` and `tools.*(dialect=...)` take."""

Tool = ToolName | DialectTool


def tools_of(dialects: str | Iterable[str]) -> dict[str, Tool]:
    """The plan tools of a set of dialects, by the name the model calls.

    ConfigurationError for an unknown dialect, for none at all, and for two that claim one
    tool name (ours and Codex's `update_plan`): a call could not tell which one it means.
    """
    single = isinstance(dialects, str) or not isinstance(dialects, Iterable)
    wanted: list[object] = [dialects] if single else list(dialects)  # None: an unknown one
    if not wanted:
        raise ConfigurationError(f"dialects must name at least one of {', '.join(NAMES)}")
    out: dict[str, Tool] = {}
    owner: dict[str, object] = {}
    for name in dict.fromkeys(wanted):
        for tool_name, tool in _tools(name).items():
            if tool_name in out:
                raise ConfigurationError(
                    f"dialects {owner[tool_name]!r} and {name!r} both define a tool named "
                    f"{tool_name!r}; a call could not tell which one it means. Use one of them."
                )
            out[tool_name], owner[tool_name] = tool, name
    return out


def _tools(name: object) -> dict[str, Tool]:
    if name == OURS:
        return {tool: tool for tool in TOOLS}
    dialect = DIALECTS.get(name) if isinstance(name, str) else None
    if dialect is None:
        raise ConfigurationError(f"unknown dialect {name!r}; use one of {', '.join(NAMES)}")
    return {tool.name: tool for tool in dialect.tools}


def lists_only(dialects: Mapping[str, Tool]) -> bool:
    """True when every tool is another dialect's (no `create_plan`): the session has one list."""
    return not any(isinstance(tool, str) for tool in dialects.values())
