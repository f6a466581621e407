"""PlanSession over a real stdio pipe, against the official ACP Python SDK's client side."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp.schema import ClientCapabilities, SessionNotification, TextContentBlock

EXAMPLE = Path(__file__).parents[2] / "examples" / "acp_plan_agent.py"


class RecordingClient:
    """An SDK client that keeps the typed updates it parsed."""

    def __init__(self) -> None:
        self.typed: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.typed.append(update)

    async def request_permission(self, **_: Any) -> Any:
        raise NotImplementedError


async def run_prompt(caps: dict[str, Any]) -> tuple[list[dict[str, Any]], RecordingClient]:
    client = RecordingClient()
    raw: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.message.get("method") == "session/update":
            raw.append(event.message["params"])

    async with acp.spawn_agent_process(
        cast("acp.Client", client),  # the SDK calls only the methods a client has
        sys.executable,
        str(EXAMPLE),
        observers=[observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        # Sent as raw JSON so that `planCapabilities`, unknown to the SDK's model, arrives.
        init = await conn._conn.send_request(
            "initialize", {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": caps}
        )
        assert init["protocolVersion"] == acp.PROTOCOL_VERSION
        session = await conn.new_session(cwd=str(Path.cwd()))
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="fix it")]
        )
        assert response.stop_reason == "end_turn"
    return raw, client


async def test_documents_form_over_a_pipe() -> None:
    raw, _client = await run_prompt({"planCapabilities": {}})
    updates = [p["update"] for p in raw]
    assert [u["sessionUpdate"] for u in updates] == ["plan_update"] * 3 + ["plan_removed"]
    assert updates[0]["plan"]["id"] == "plan-1"
    assert updates[-1] == {"sessionUpdate": "plan_removed", "id": "notes"}
    assert "planId" not in str(updates)


async def test_schema_form_is_parsed_by_the_sdk_client() -> None:
    raw, client = await run_prompt({"plan": {}})
    for params in raw:
        SessionNotification.model_validate(params)
    kinds = [type(u).__name__ for u in client.typed]
    assert kinds == ["AgentPlanContentUpdate"] * 3 + ["AgentPlanRemovedUpdate"]
    last_items = client.typed[2].plan
    assert last_items.plan_id == "plan-1"
    assert [e.status for e in last_items.entries] == ["completed", "in_progress", "pending"]
    assert client.typed[3].plan_id == "notes"


@pytest.mark.parametrize("caps", [{}, ClientCapabilities().model_dump(by_alias=True)])
async def test_legacy_form_is_parsed_by_the_sdk_client(caps: dict[str, Any]) -> None:
    _raw, client = await run_prompt(caps)
    assert all(type(u).__name__ == "AgentPlanUpdate" for u in client.typed)
    assert len(client.typed) == 4  # one complete list after every successful call
    assert [e.content for e in client.typed[1].entries] == [
        "Reproduce the bug",
        "Fix the parser",
        "Add a regression test",
        "[Approach] Patch",  # the second plan's step says whose it is
    ]
    assert [e.content for e in client.typed[-1].entries] == [
        "Reproduce the bug",
        "Fix the parser",
        "Add a regression test",
    ]
