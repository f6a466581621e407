"""The plan tools models are trained on, one module per dialect, and the registry of them.

`PlanSession(dialects=...)` and `tools.*(dialect=...)` take a dialect by name: `"llm_plans"`
(ours: `create_plan`, `update_plan`, `remove_plan`), `"claude_todos"`, `"claude_tasks"`,
`"codex"`, `"write_todos"`, `"cursor"`, `"opencode"`, `"vibe"`. Each module holds one
dialect: its argument models, how its calls change the plans, and the results the model
reads. A module is imported when a session or a tool definition first names its dialect (or
when it is named here, as `llm_plans.dialects.codex`), not with this package.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType

from .._core.tool import Dialect, PlanTool
from .._errors import ConfigurationError

__all__ = [
    "claude_tasks",
    "claude_todos",
    "codex",
    "cursor",
    "llm_plans",
    "opencode",
    "vibe",
    "write_todos",
]

_OURS = "llm_plans"
_NAMES: tuple[str, ...] = (
    _OURS,
    "claude_todos",
    "claude_tasks",
    "codex",
    "write_todos",
    "cursor",
    "opencode",
    "vibe",
)
"""The names `PlanSession(dialects=...)` and `tools.*(dialect=...)` take, ours first; each
is the name of its module here."""


def __getattr__(name: str) -> ModuleType:
    """The dialect module `name`, imported on first use.

    Args:
        name: A dialect module's name, one of `__all__`.
    """
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _dialect(name: object) -> Dialect:
    """The dialect called `name`, its module imported; ConfigurationError for an unknown one."""
    if not isinstance(name, str) or name not in _NAMES:
        raise ConfigurationError(f"unknown dialect {name!r}; use one of {', '.join(_NAMES)}")
    dialect: Dialect = importlib.import_module(f"{__name__}.{name}").DIALECT
    return dialect


def _tools_of(dialects: str | Iterable[str]) -> dict[str, PlanTool]:
    """The plan tools of a set of dialects, by the name the model calls.

    ConfigurationError for an unknown dialect, for none at all, and for two that claim one
    tool name (ours and Codex's `update_plan`): a call could not tell which one it means.
    """
    single = isinstance(dialects, str) or not isinstance(dialects, Iterable)
    wanted: list[object] = [dialects] if single else list(dialects)  # None: an unknown one
    if not wanted:
        raise ConfigurationError(f"dialects must name at least one of {', '.join(_NAMES)}")
    out: dict[str, PlanTool] = {}
    owner: dict[str, object] = {}
    for name in dict.fromkeys(wanted):
        for tool in _dialect(name).tools:
            if tool.name in out:
                raise ConfigurationError(
                    f"dialects {owner[tool.name]!r} and {name!r} both define a tool named "
                    f"{tool.name!r}; a call could not tell which one it means. Use one of them."
                )
            out[tool.name], owner[tool.name] = tool, name
    return out


def _lists_only(tools: Mapping[str, PlanTool]) -> bool:
    """True when no tool names plans by id (no `create_plan`): the session has one list."""
    return not any(tool.plans_by_id for tool in tools.values())
