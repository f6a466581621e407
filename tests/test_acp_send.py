"""acp_send: raw on the SDK's connection by default, through its typed models on request."""

from __future__ import annotations

from typing import Any

import pytest

from llm_plans import ConfigurationError, acp_send


class FakeRaw:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def send_notification(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


class FakeConnection:
    """Stands in for acp's AgentSideConnection: a typed session_update and its `_conn`."""

    def __init__(self, raw: FakeRaw | None) -> None:
        self._conn = raw
        self.typed: list[Any] = []

    async def session_update(self, session_id: str, update: Any) -> None:
        self.typed.append((session_id, update))


SCHEMA = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "p"}}
DOCUMENTS = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "id": "p"}}


async def test_default_writes_the_json_as_is() -> None:
    raw = FakeRaw()
    conn = FakeConnection(raw)
    send = acp_send(conn)
    await send(SCHEMA)
    await send(DOCUMENTS)
    assert raw.sent == [("session/update", SCHEMA), ("session/update", DOCUMENTS)]
    assert conn.typed == []


async def test_validate_goes_through_the_sdk_models_where_they_exist() -> None:
    raw = FakeRaw()
    conn = FakeConnection(raw)
    send = acp_send(conn, validate=True)
    await send(SCHEMA)
    await send(DOCUMENTS)
    assert [type(u).__name__ for _, u in conn.typed] == ["AgentPlanRemovedUpdate"]
    assert raw.sent == [("session/update", DOCUMENTS)]


async def test_without_a_raw_connection() -> None:
    conn = FakeConnection(None)
    send = acp_send(conn)
    await send(SCHEMA)
    assert len(conn.typed) == 1
    with pytest.raises(ConfigurationError, match="planCapabilities form"):
        await send(DOCUMENTS)
    with pytest.raises(ConfigurationError, match="agent-side connection"):
        acp_send(object())


V2_CANCELLED = {
    "sessionId": "s",
    "update": {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "items",
            "planId": "main",
            "entries": [{"content": "Old approach", "priority": "medium", "status": "cancelled"}],
        },
    },
}


async def test_v2_steps_the_v1_models_cannot_carry_go_raw_even_when_validating() -> None:
    raw = FakeRaw()
    conn = FakeConnection(raw)
    await acp_send(conn, validate=True)(V2_CANCELLED)
    assert raw.sent == [("session/update", V2_CANCELLED)]
    assert conn.typed == []


async def test_without_a_raw_connection_v2_steps_are_refused_not_remodelled() -> None:
    conn = FakeConnection(None)
    with pytest.raises(ConfigurationError, match="ACP v2"):
        await acp_send(conn)(V2_CANCELLED)
    assert conn.typed == []
