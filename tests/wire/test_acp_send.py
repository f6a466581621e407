"""acp_send: raw on the SDK's connection by default, through its typed models on request."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import SessionNotification
from hypothesis import given
from hypothesis import strategies as st

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
    with pytest.raises(ConfigurationError, match="cancelled"):
        await acp_send(conn)(V2_CANCELLED)
    assert conn.typed == []


STABLE_MARKDOWN: dict[str, Any] = {
    "sessionId": "s",
    "update": {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "markdown",
            "planId": "design",
            "content": "# Design\n- [ ] a",
            "path": "/work/docs/design.md",
        },
    },
}


async def test_a_markdown_plans_path_goes_raw_even_when_validating() -> None:
    """The SDK's models do not declare `path` and would drop it: the update goes raw."""
    raw = FakeRaw()
    conn = FakeConnection(raw)
    send = acp_send(conn, validate=True)
    await send(STABLE_MARKDOWN)
    assert raw.sent == [("session/update", STABLE_MARKDOWN)]
    without_path = {
        "sessionId": "s",
        "update": {
            **STABLE_MARKDOWN["update"],
            "plan": {k: v for k, v in STABLE_MARKDOWN["update"]["plan"].items() if k != "path"},
        },
    }
    await send(without_path)
    [(_, typed)] = conn.typed
    assert typed.model_dump(mode="json", by_alias=True, exclude_none=True) == without_path["update"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=5), inner, max_size=2)
    ),
    max_leaves=4,
)
ENTRY = st.fixed_dictionaries(
    {
        "content": st.text(max_size=5),
        "priority": st.sampled_from(["high", "medium", "low"]),
        "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled"]),
    },
    optional={"_meta": st.dictionaries(st.text(max_size=3), JSON, max_size=2)},
)
PLAN = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("items"),
            "planId": st.text(max_size=5),
            "entries": st.lists(ENTRY, max_size=3),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("markdown"),
            "planId": st.text(max_size=5),
            "content": st.text(max_size=5),
        },
        optional={"path": st.just("/p.md")},
    ),
)
UPDATE = st.one_of(
    st.fixed_dictionaries({"sessionUpdate": st.just("plan_update"), "plan": PLAN}),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("plan_removed"), "planId": st.text(max_size=5)}
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("plan"), "entries": st.lists(ENTRY, max_size=3)}
    ),
    st.fixed_dictionaries(
        {"sessionUpdate": st.just("subagent_update"), "sessionId": st.text(max_size=5)},
        optional={"state": st.just({"state": "running"})},
    ),
)


@given(
    update=UPDATE,
    extra=st.none()
    | st.tuples(st.sampled_from(["update", "plan", "entry"]), st.text(max_size=4), JSON),
)
async def test_validating_never_drops_or_refuses_what_the_session_sends(
    update: dict[str, Any], extra: tuple[str, str, Any] | None
) -> None:
    """Whatever goes through the SDK's models comes out of them whole; the rest goes raw."""
    if extra is not None:
        where, key, value = extra
        target = update
        if where != "update" and "plan" in update:
            target = update["plan"]
            if where == "entry" and target.get("entries"):
                target = target["entries"][0]
        target.setdefault(key, value)
    params = {"sessionId": "s", "update": update}
    raw = FakeRaw()
    conn = FakeConnection(raw)
    await acp_send(conn, validate=True)(params)
    assert len(raw.sent) + len(conn.typed) == 1
    if conn.typed:
        parsed = SessionNotification.model_validate(params)
        assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == params
    else:
        assert raw.sent == [("session/update", params)]


async def test_a_subagent_update_always_goes_raw() -> None:
    """Neither SDK (0.12.1, 1.0.0rc3) models `subagent_update`: it is written as it is."""
    params = {
        "sessionId": "parent",
        "update": {
            "sessionUpdate": "subagent_update",
            "sessionId": "child",
            "title": "Explore",
            "state": {"state": "running"},
        },
    }
    for validate in (False, True):
        raw = FakeRaw()
        conn = FakeConnection(raw)
        await acp_send(conn, validate=validate)(params)
        assert raw.sent == [("session/update", params)]
        assert conn.typed == []
