"""Benchmark peer: an ACP agent that, on each prompt, sends N plan updates one of two ways.

The prompt text is `<mode> <n>`: `plans` runs N `update_plan` tool calls through a
`PlanSession`; `raw` sends N prebuilt plan notifications straight through the SDK's
`session_update`, the floor for the same pipe.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import acp
from acp.schema import (
    AgentPlanContentUpdate,
    InitializeResponse,
    NewSessionResponse,
    PlanEntry,
    PlanUpdateItems,
    PromptResponse,
)

from llm_plans import PlanSession, acp_send

STEPS = 20


def changes(i: int) -> str:
    """The i-th update: steps are completed in turn, then set back to pending, and so on, so
    that every call changes the plan (a call that changes nothing sends nothing)."""
    step = i % STEPS + 1
    status = "completed" if (i // STEPS) % 2 == 0 else "pending"
    return json.dumps(
        {
            "id": "plan-1",
            "type": None,
            "entries": None,
            "content": None,
            "uri": None,
            "changes": [{"step": step, "status": status, "priority": None, "content": None}],
        }
    )


class BenchAgent:
    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="bench")

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        mode, count = prompt[0].text.split()
        n = int(count)
        entries = [
            {
                "content": f"Step {k} of the benchmark plan",
                "priority": "medium",
                "status": "pending",
            }
            for k in range(STEPS)
        ]
        if mode == "plans":
            plans = PlanSession(
                acp_send(self.conn), session_id=session_id, client_capabilities={"plan": {}}
            )
            await plans.call("create_plan", {"type": "items", "entries": entries})
            arguments = [changes(i) for i in range(n)]
            for text in arguments:
                await plans.call("update_plan", text)
        else:
            updates = [
                AgentPlanContentUpdate(
                    session_update="plan_update",
                    plan=PlanUpdateItems(
                        type="items", plan_id="plan-1", entries=[PlanEntry(**e) for e in entries]
                    ),
                )
                for _ in range(n + 1)
            ]
            for update in updates:
                await self.conn.session_update(session_id, update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None


if __name__ == "__main__":
    agent = cast("acp.Agent", BenchAgent())  # the SDK calls only the methods it has
    asyncio.run(acp.run_agent(agent, use_unstable_protocol=True))
