"""The dialect registry as the tests read it: every dialect's name, ours, and the others'
tools, each dialect's module imported."""

from __future__ import annotations

from llm_plans._core.tool import Dialect
from llm_plans.dialects import _NAMES, _OURS, _dialect, _tools_of

NAMES: tuple[str, ...] = _NAMES
OURS = _OURS
DIALECTS: dict[str, Dialect] = {name: _dialect(name) for name in _NAMES if name != _OURS}
"""Every dialect but ours, by name."""
tools_of = _tools_of
OUR_TOOLS = _tools_of(_OURS)
"""Our tools by name: `create_plan`, `update_plan`, `remove_plan`."""
