"""A minimal ACP agent whose "model" is a fixed script of plan tool calls.

It shows the ACP SDK binding on its own (`framework_agent.FrameworkAgent` records the client's
capabilities and opens a `PlanSession` per ACP session): every plan tool call runs through the
session. Run it with `python examples/acp_plan_agent.py` and talk ACP to it on stdin/stdout.
"""

from __future__ import annotations

from typing import Any

from framework_agent import FrameworkAgent, serve

from llm_plans import PlanSession

# What a model might call while fixing a bug: a checklist, a design note, progress, clean-up.
SCRIPT: list[tuple[str, Any]] = [
    (
        "create_plan",
        {
            "type": "items",
            "id": None,
            "entries": [
                {"content": "Reproduce the bug", "priority": "high", "status": "in_progress"},
                {"content": "Fix the parser", "priority": "high", "status": None},
                {"content": "Add a regression test", "priority": None, "status": None},
            ],
        },
    ),
    ("create_plan", {"type": "markdown", "id": "notes", "content": "## Approach\n- [ ] Patch"}),
    (
        "update_plan",
        {
            "id": "plan-1",
            "changes": [{"step": 1, "status": "completed"}, {"step": 2, "status": "in_progress"}],
        },
    ),
    ("remove_plan", {"id": "notes"}),
]


class PlanAgent(FrameworkAgent[PlanSession]):
    def start(self, session: PlanSession, cwd: str) -> PlanSession:
        return session

    async def answer(self, state: PlanSession, text: str) -> str | None:
        for tool, arguments in SCRIPT:
            await state.call(tool, arguments)
        return None  # the plans are the whole answer


if __name__ == "__main__":
    serve(PlanAgent())
