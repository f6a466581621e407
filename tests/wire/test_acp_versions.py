"""Choosing v2: the recorder keeps the negotiated `protocolVersion`, and the session follows it.

Driven by the official ACP Python SDK's own stream events, and end to end by its connections
over an in-process pair of its memory transports, so the recorder sees exactly what the SDK's
observers see.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp._transport import memory_transport_pair
from acp.connection import StreamDirection, StreamEvent
from acp.schema import AgentCapabilities, InitializeResponse, NewSessionResponse, PromptResponse
from hypothesis import given
from hypothesis import strategies as st
from spec_shapes import check

from llm_plans import (
    ClientCapabilitiesRecorder,
    ConfigurationError,
    PlanSession,
    WireForm,
    acp_send,
)
from llm_plans.testing import RecordingSend

INCOMING, OUTGOING = StreamDirection.INCOMING, StreamDirection.OUTGOING
CAPS: dict[str, dict[str, Any]] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": {},
}


def initialize(version: Any, caps: Any = None, *, request_id: int = 0, v2: bool = False) -> Any:
    params: dict[str, Any] = {"protocolVersion": version}
    params["capabilities" if v2 else "clientCapabilities"] = {"plan": {}} if caps is None else caps
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    return StreamEvent(INCOMING, message)


def answer(version: Any, *, request_id: int = 0, direction: StreamDirection = OUTGOING) -> Any:
    result = {"protocolVersion": version, "agentCapabilities": {}}
    return StreamEvent(direction, {"jsonrpc": "2.0", "id": request_id, "result": result})


def recorded(*events: Any) -> ClientCapabilitiesRecorder:
    recorder = ClientCapabilitiesRecorder()
    for event in events:
        recorder(event)
    return recorder


def form_of(client_capabilities: Any = None, **kwargs: Any) -> WireForm:
    return PlanSession(
        RecordingSend(), session_id="s", client_capabilities=client_capabilities, **kwargs
    ).form


# ---- the recorder --------------------------------------------------------------------------


def test_the_agents_answer_is_the_negotiated_version() -> None:
    recorder = recorded(initialize(2, v2=True))
    assert recorder.protocol_version == 2  # the request, until the answer is seen
    assert recorder.capabilities == {"plan": {}}  # v2 names them `capabilities`
    recorder(answer(1))
    assert recorder.protocol_version == 1  # a v1 agent answered 1: the client speaks v1


def test_an_answer_to_another_request_is_not_taken() -> None:
    recorder = recorded(
        initialize(2, request_id=7),
        answer(1, request_id=8),  # another request's answer
        answer(1, request_id=7, direction=INCOMING),  # a response the client sent us
        StreamEvent(OUTGOING, {"jsonrpc": "2.0", "id": 7, "error": {"code": -1}}),
    )
    assert recorder.protocol_version == 2
    recorder(answer(1, request_id=7))  # after an error, the request's answer no longer counts
    assert recorder.protocol_version == 2


def test_a_new_initialize_starts_over() -> None:
    recorder = recorded(initialize(2), answer(2), initialize(1, {}, request_id=1))
    assert (recorder.protocol_version, recorder.capabilities) == (1, {})


@given(
    version=st.one_of(
        st.none(), st.booleans(), st.text(max_size=3), st.floats(), st.integers(-5, 70_000)
    )
)
def test_a_version_that_is_not_a_protocol_version_is_not_kept(version: Any) -> None:
    recorder = recorded(initialize(version))
    valid = type(version) is int and 0 <= version <= 0xFFFF
    assert recorder.protocol_version == (version if valid else None)
    recorder(answer(version))
    assert recorder.protocol_version == (version if valid else None)


def test_other_events_are_ignored() -> None:
    recorder = recorded(
        StreamEvent(INCOMING, {"jsonrpc": "2.0", "method": "session/new", "params": {}}),
        answer(2),  # no initialize seen: not an answer to one
        object(),
    )
    assert (recorder.protocol_version, recorder.capabilities) == (None, None)


# ---- choosing the form ---------------------------------------------------------------------


@pytest.mark.parametrize("v1_form", ["documents", "schema", "legacy"])
def test_a_client_that_negotiated_2_gets_v2_whatever_it_advertised(v1_form: str) -> None:
    caps = CAPS[v1_form]
    assert form_of(caps, protocol_version=2) is WireForm.V2
    assert form_of(caps, protocol_version=1) is WireForm(v1_form)
    assert form_of(caps) is WireForm(v1_form)
    assert form_of(recorded(initialize(2, caps, v2=True), answer(2))) is WireForm.V2
    assert form_of(recorded(initialize(2, caps), answer(1))) is WireForm(v1_form)
    assert form_of(recorded(initialize(1, caps))) is WireForm(v1_form)


def test_the_explicit_arguments_win() -> None:
    recorder = recorded(initialize(2), answer(2))
    assert form_of(recorder, protocol_version=1) is WireForm.SCHEMA
    assert form_of(recorder, form="documents") is WireForm.DOCUMENTS
    assert form_of(recorded(initialize(1)), form="v2") is WireForm.V2
    assert form_of(ClientCapabilitiesRecorder()) is WireForm.LEGACY  # before initialize


@pytest.mark.parametrize("form", [WireForm.V2_UNSTABLE, "v2-unstable"])
def test_the_deprecated_v2_unstable_form_is_v2(form: Any) -> None:
    with pytest.warns(DeprecationWarning, match='"v2"') as warned:
        assert form_of(recorded(initialize(1)), form=form) is WireForm.V2
    assert len(warned) == 1


@given(version=st.integers(0, 0xFFFF), caps=st.sampled_from(list(CAPS.values())))
def test_v2_unstable_is_never_chosen_for_a_client(version: int, caps: dict[str, Any]) -> None:
    form = form_of(caps, protocol_version=version)
    assert form is not WireForm.V2_UNSTABLE
    assert (form is WireForm.V2) == (version >= 2)


@pytest.mark.parametrize("bad", ["2", 2.0, True, -1])
def test_a_bad_protocol_version_is_a_configuration_error(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match="protocol_version must be"):
        form_of(protocol_version=bad)


# ---- end to end over the SDK's own connections ---------------------------------------------

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    (
        "create_plan",
        {
            "type": "items",
            "id": "main",
            "entries": [
                {"content": "Reproduce", "status": "completed"},
                {"content": "Old approach", "status": "cancelled"},
                {"content": "Fix", "status": "in_progress"},
            ],
        },
    ),
    ("create_plan", {"type": "markdown", "id": "notes", "content": "- [ ] Patch"}),
    ("remove_plan", {"id": "notes"}),
]


class ScriptedAgent:
    """A v2-capable agent: answers the highest version both sides know, up to 2."""

    def __init__(self, validate: bool) -> None:
        self.recorder = ClientCapabilitiesRecorder()
        self.validate = validate
        self.conn: Any = None
        self.forms: list[WireForm] = []

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, 2), agent_capabilities=AgentCapabilities()
        )

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="sess_1")

    async def prompt(self, session_id: str, **_: Any) -> PromptResponse:
        send = acp_send(self.conn, validate=self.validate)
        session = PlanSession(send, session_id=session_id, client_capabilities=self.recorder)
        self.forms.append(session.form)
        for tool, arguments in SCRIPT:
            result = await session.call(tool, arguments)
            assert result.ok, result.content
            assert result.failure is None, result.failure
        return PromptResponse(stop_reason="end_turn")


class QuietClient:
    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        pass


async def run(version: int, *, validate: bool) -> tuple[list[dict[str, Any]], ScriptedAgent]:
    agent = ScriptedAgent(validate)
    client_end, agent_end = memory_transport_pair()
    raw: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.message.get("method") == "session/update":
            raw.append(event.message["params"])

    # The SDK calls only the methods an agent and a client have.
    served = cast("acp.Agent", agent)
    agent_conn = acp.core.AgentSideConnection(served, agent_end, observers=[agent.recorder])
    client = acp.connect_to_agent(
        cast("acp.Client", QuietClient()), client_end, observers=[observe]
    )
    try:
        v2 = version >= 2
        params: dict[str, Any] = {"protocolVersion": version}
        if v2:
            params |= {"info": {"name": "test-client", "version": "0"}, "capabilities": {}}
        else:
            params["clientCapabilities"] = {"plan": {}}
        init = await client._conn.send_request("initialize", params)
        assert init["protocolVersion"] == min(version, 2)
        await client.new_session(cwd=str(Path.cwd()))
        await client.prompt(session_id="sess_1", prompt=[])
    finally:
        await client.close()
        await agent_conn.close()
    return raw, agent


@pytest.mark.parametrize("validate", [False, True])
async def test_a_v2_client_gets_v2_notifications_as_raw_json(validate: bool) -> None:
    raw, agent = await run(2, validate=validate)
    assert agent.recorder.protocol_version == 2
    assert agent.forms == [WireForm.V2]
    for params in raw:
        check("v2", params)
    statuses = [e["status"] for e in raw[0]["update"]["plan"]["entries"]]
    assert statuses == ["completed", "cancelled", "in_progress"]
    assert raw[-1]["update"] == {"sessionUpdate": "plan_removed", "planId": "notes"}


async def test_a_v1_client_gets_cancelled_as_a_completed_step() -> None:
    raw, agent = await run(1, validate=True)
    assert agent.forms == [WireForm.SCHEMA]
    for params in raw:
        check("schema", params)
    entries = raw[0]["update"]["plan"]["entries"]
    assert [(e["content"], e["status"]) for e in entries] == [
        ("Reproduce", "completed"),
        ("Cancelled: Old approach", "completed"),
        ("Fix", "in_progress"),
    ]
