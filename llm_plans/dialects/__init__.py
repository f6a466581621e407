"""The plan tools other agents' models are trained on, one module per dialect.

`PlanSession(dialects=...)` and `tools.*(dialect=...)` take them by name; `llm_plans._dialects`
lists them. Each module here holds a dialect's argument models; a module is imported when it
is first named (`llm_plans.dialects.codex`), not with this package.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["claude_tasks", "claude_todos", "codex", "cursor", "write_todos"]


def __getattr__(name: str) -> ModuleType:
    """The dialect module `name`, imported on first use.

    Args:
        name: A dialect module's name, one of `__all__`.
    """
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
