"""What the benchmarks feed PlanSession: typical steps, and arguments in strict-mode form."""

from __future__ import annotations

import json
from typing import Any

STEP = "Update the parser to accept trailing commas in arrays"  # a typical 50-byte step
CAPS: dict[str, Any] = {"plan": {}}  # ACP's published schema: `plan_update` with `planId`


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def entries(n: int, current: int = 1) -> list[dict[str, Any]]:
    """n steps: those before `current` completed, `current` in progress, the rest pending."""
    return [
        {
            "content": f"{STEP} ({k})",
            "priority": "medium",
            "status": "completed" if k < current else "in_progress" if k == current else "pending",
        }
        for k in range(n)
    ]


def strict_update(n: int, current: int) -> str:
    """`update_plan` replacing every entry, as strict mode makes the model write it."""
    return compact(
        {
            "id": "plan-1",
            "type": None,
            "entries": entries(n, current),
            "content": None,
            "uri": None,
            "changes": None,
        }
    )


def strict_changes(*moves: tuple[int, str]) -> str:
    """`update_plan` with `changes` only, in strict form."""
    return compact(
        {
            "id": "plan-1",
            "type": None,
            "entries": None,
            "content": None,
            "uri": None,
            "changes": [
                {"step": step, "status": status, "priority": None, "content": None}
                for step, status in moves
            ],
        }
    )


class DumpingSend:
    """Serialises each notification to JSON, as a transport would, and keeps the last."""

    def __init__(self) -> None:
        self.last: dict[str, Any] = {}

    async def __call__(self, params: dict[str, Any]) -> None:
        json.dumps(params)
        self.last = params
