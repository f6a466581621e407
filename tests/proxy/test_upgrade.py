"""The upgrade on its own, line by line: what it changes in `initialize`, what each agent's
plan signals become for each form, and that whatever an agent sends, the client gets every
other line as sent and only compliant plan notifications."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from client_view import ClientView, check_compliant
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_plans import MarkdownPlan
from llm_plans._proxy.agents import CLAUDE, OPENCODE, UNKNOWN, recognise
from llm_plans._proxy.upgrade import PROPOSAL_ID, Upgrade
from llm_plans._wire.forms import as_read, form_for

FORMS: dict[str, dict[str, Any]] = {
    "legacy": {"fs": {"readTextFile": True}},
    "schema": {"plan": {}},
    "documents": {"planCapabilities": {}},
}
PLAN_KINDS = {"plan", "plan_update", "plan_removed", "subagent_update"}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def initialize(capabilities: Any, request_id: Any = 0) -> bytes:
    params = {"protocolVersion": 1, "clientCapabilities": capabilities}
    return line({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})


def answer(name: str, request_id: Any = 0, version: int = 1) -> bytes:
    result = {"protocolVersion": version, "agentCapabilities": {}, "agentInfo": {"name": name}}
    return line({"jsonrpc": "2.0", "id": request_id, "result": result})


def update(body: dict[str, Any], session_id: str = "S1") -> bytes:
    params = {"sessionId": session_id, "update": body}
    return line({"jsonrpc": "2.0", "method": "session/update", "params": params})


def is_plan(data: bytes) -> bool:
    kind = json.loads(data)["params"]["update"].get("sessionUpdate")
    return isinstance(kind, str) and kind in PLAN_KINDS


class Client:
    """A connection through the upgrade: what the agent got, and what the client got."""

    def __init__(self, agent: str, capabilities: dict[str, Any]) -> None:
        self.upgrade = Upgrade([agent])
        self.capabilities = capabilities
        self.to_agent = self.upgrade.from_client(initialize(capabilities))
        self.out: list[bytes] = []
        self.send(answer(agent))

    def send(self, data: bytes) -> list[bytes]:
        """What the client gets for one agent line."""
        got: list[bytes] = []
        asyncio.run(self.upgrade.from_agent(data, got.append))
        self.out.extend(got)
        return got

    def plans(self) -> list[dict[str, Any]]:
        return [
            json.loads(x)["params"]
            for x in self.out
            if json.loads(x).get("params", {}).get("update", {}).get("sessionUpdate") in PLAN_KINDS
        ]

    def view(self) -> ClientView:
        form = form_for(self.capabilities, 1).value
        return ClientView(form).apply_all(
            p["update"] for p in self.plans() if p["sessionId"] == "S1"
        )


def todowrite(call_id: str, todos: Any, kind: str = "tool_call_update") -> bytes:
    body = {"sessionUpdate": kind, "toolCallId": call_id, "status": "in_progress"}
    return update({**body, "rawInput": {"todos": todos}})


TODOS = [
    {"content": "Read the code", "status": "completed", "priority": "high"},
    {"content": "Try the old parser", "status": "cancelled", "priority": "low"},
    {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
]


# ---- initialize ---------------------------------------------------------------------------


@pytest.mark.parametrize("form", sorted(FORMS))
def test_initialize_asks_the_agent_for_plan_operations_and_changes_nothing_else(
    form: str,
) -> None:
    capabilities = {**FORMS[form], "terminal": True, "_meta": {"x": 1}}
    sent = initialize(capabilities, "init-1")
    got = json.loads(Upgrade(["a"]).from_client(sent))
    expected = json.loads(sent)
    expected["params"]["clientCapabilities"].setdefault("plan", {})
    assert got == expected
    if "plan" in capabilities:
        assert Upgrade(["a"]).from_client(sent) == sent  # byte for byte


@given(st.one_of(st.none(), st.integers(), st.text(), st.lists(st.integers())))
def test_an_initialize_it_cannot_read_passes_as_sent(capabilities: Any) -> None:
    sent = initialize(capabilities) if capabilities is not None else b'{"method":"initialize"'
    assert Upgrade(["a"]).from_client(sent) == sent


def test_the_agents_answer_to_initialize_passes_byte_for_byte() -> None:
    upgrade = Upgrade(["opencode"])
    upgrade.from_client(initialize({}))
    got: list[bytes] = []
    asyncio.run(upgrade.from_agent(answer("OpenCode"), got.append))
    assert got == [answer("OpenCode")]


# ---- each agent's signals ---------------------------------------------------------------------


@pytest.mark.parametrize("form", sorted(FORMS))
def test_an_opencode_todowrite_becomes_the_plan_with_priorities_and_cancelled_steps(
    form: str,
) -> None:
    client = Client("opencode", FORMS[form])
    pending = update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "todowrite",
            "kind": "other",
            "status": "pending",
            "rawInput": {},
        }
    )
    assert client.send(pending) == [pending]  # the card, and no plan yet
    got = client.send(todowrite("c1", TODOS))
    assert got[0] == todowrite("c1", TODOS)  # the card first, then the plan
    for params in client.plans():
        check_compliant(form_for(FORMS[form], 1), params)
    view = client.view()
    if form == "legacy":
        assert [e["priority"] for e in view.entries] == ["high", "low", "high"]
        assert view.entries[1]["content"] == "Cancelled: Try the old parser"
    else:
        (plan,) = view.plans.values()
        assert [as_read(e) for e in plan["entries"]] == TODOS  # v1: cancelled as a prefix
        assert [e["priority"] for e in plan["entries"]] == ["high", "low", "high"]
    # The same rawInput again (the completed update) sends nothing more.
    assert len(client.send(todowrite("c1", TODOS))) == 1


def test_an_opencode_call_that_fails_validation_passes_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Client("opencode", FORMS["schema"])
    client.send(update({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "todowrite"}))
    bad = todowrite("c1", "not a list")
    with caplog.at_level(logging.WARNING, "llm_plans.proxy"):
        assert client.send(bad) == [bad]
        assert client.send(todowrite("c1", [{"content": ""}])) == [
            todowrite("c1", [{"content": ""}])
        ]
    assert len([r for r in caplog.records if "todowrite" in r.getMessage()]) == 1
    assert client.plans() == []
    assert len(client.send(todowrite("c1", TODOS))) == 2  # a good call later still counts


def test_a_plan_over_the_limits_is_not_sent() -> None:
    client = Client("opencode", FORMS["schema"])
    client.send(update({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "todowrite"}))
    many = [{"content": f"step {n}", "status": "pending", "priority": "low"} for n in range(5000)]
    assert len(client.send(todowrite("c1", many))) == 1
    assert client.plans() == []


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_claude_subagents_list_stays_apart_from_the_main_one(form: str) -> None:
    client = Client("claude-agent-acp", FORMS[form])
    main = [{"content": "Fix the bug", "status": "in_progress", "priority": "medium"}]
    child = [{"content": "Explore", "status": "in_progress", "priority": "medium"}]
    client.send(update({"sessionUpdate": "plan", "entries": main}))
    stamp = {"claudeCode": {"parentToolUseId": "toolu_1"}}
    client.send(update({"sessionUpdate": "plan", "entries": child, "_meta": stamp}))
    client.send(update({"sessionUpdate": "plan", "entries": main}))
    for params in client.plans():
        check_compliant(form_for(FORMS[form], 1), params)
    view = client.view()
    if form == "legacy":
        # A subagent's steps after the main ones, labelled with its tool call.
        assert [e["content"] for e in view.entries] == ["Fix the bug", "[toolu_1] Explore"]
    else:
        shown = [e["content"] for p in view.plans.values() for e in p.get("entries", [])]
        assert shown == ["Fix the bug", "Explore"]


def test_a_legacy_list_to_a_legacy_client_passes_as_sent_while_it_is_the_only_plan() -> None:
    client = Client("codex-acp", FORMS["legacy"])
    sent = update({"sessionUpdate": "plan", "entries": TODOS[:1]})
    assert client.send(sent) == [sent]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_plan_mode_proposal_shows_at_once_and_goes_if_the_call_fails(form: str) -> None:
    client = Client("claude-agent-acp", FORMS[form])
    card = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "name": "ExitPlanMode",
        "rawInput": {"plan": "# Plan\n\n1. Fix"},
    }
    assert len(client.send(update(card))) == 2
    proposal = client.upgrade._sessions["S1"].session.plans[PROPOSAL_ID]
    assert isinstance(proposal, MarkdownPlan)
    assert proposal.content == "# Plan\n\n1. Fix"
    client.send(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "failed"})
    )
    assert PROPOSAL_ID not in client.upgrade._sessions["S1"].session.plans
    for params in client.plans():
        check_compliant(form_for(FORMS[form], 1), params)


def test_an_unknown_agent_is_relayed_as_sent_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "llm_plans.proxy"):
        client = Client("mystery-agent", FORMS["schema"])
        lines = [
            update({"sessionUpdate": "plan", "entries": TODOS}),
            todowrite("c1", TODOS, kind="tool_call"),
        ]
        assert [client.send(x) for x in lines] == [[x] for x in lines]
    assert len(caplog.records) == 1
    assert "mystery-agent" in caplog.records[0].getMessage()


# ---- whatever the agent sends ---------------------------------------------------------------

ENTRY = st.fixed_dictionaries(
    {"content": st.text(max_size=30)},
    optional={
        "status": st.sampled_from(["pending", "in_progress", "completed", "cancelled", "x"]),
        "priority": st.sampled_from(["high", "medium", "low", 3]),
        "id": st.text(max_size=3),
    },
)
ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)
CALL_IDS = st.sampled_from(["c1", "c2", "toolu_1", "t"])
UPDATES = st.one_of(
    st.builds(lambda e: {"sessionUpdate": "plan", "entries": e}, st.lists(ENTRY, max_size=5)),
    st.builds(
        lambda e, p: {
            "sessionUpdate": "plan",
            "entries": e,
            "_meta": {"claudeCode": {"parentToolUseId": p}, "effect_entry_id": p},
        },
        st.lists(ENTRY, max_size=4),
        CALL_IDS,
    ),
    st.builds(
        lambda i, n, t, s: {
            "sessionUpdate": "tool_call",
            "toolCallId": i,
            "title": n,
            "name": n,
            "status": s,
            "rawInput": {"todos": t, "action": "write"},
            "_meta": {"tool_name": n},
        },
        CALL_IDS,
        st.sampled_from(["todowrite", "todo", "Agent", "ExitPlanMode"]),
        st.lists(ENTRY, max_size=4),
        st.sampled_from(["pending", "completed", "failed"]),
    ),
    st.builds(
        lambda i, p, s: {
            "sessionUpdate": "tool_call_update",
            "toolCallId": i,
            "rawInput": {"plan": p, "description": p},
            "status": s,
        },
        CALL_IDS,
        st.text(max_size=40),
        st.sampled_from(["in_progress", "completed", "failed"]),
    ),
    st.builds(
        lambda i, e, c, t: {
            "sessionUpdate": "plan_update",
            "plan": {"type": t, "planId": i, "entries": e, "content": c},
        },
        st.sampled_from(["p1", "main", "plan-mode", ""]),
        st.lists(ENTRY, max_size=3),
        st.text(max_size=20),
        st.sampled_from(["items", "markdown", "file"]),
    ),
    st.builds(
        lambda i: {"sessionUpdate": "plan_removed", "planId": i},
        st.sampled_from(["p1", "main", "plan-mode"]),
    ),
    st.builds(lambda x: {"sessionUpdate": "agent_message_chunk", "content": x}, ANY),
    ANY.map(lambda x: {"sessionUpdate": x}),
)


@settings(max_examples=150)
@given(
    st.sampled_from(["opencode", "mistral-vibe", "claude-agent-acp", "codex-acp", "other"]),
    st.sampled_from(sorted(FORMS)),
    st.lists(UPDATES, max_size=12),
)
def test_whatever_the_agent_sends_the_rest_passes_and_every_plan_is_compliant(
    agent: str, form: str, updates: list[dict[str, Any]]
) -> None:
    client = Client(agent, FORMS[form])
    sent = [update(u) for u in updates]
    for data in sent:
        client.send(data)
    wire = form_for(FORMS[form], 1)
    made_lines = [x for x in client.out[1:] if x not in sent]  # after the agent's answer
    for made in made_lines:  # the agent's own pass as they are
        check_compliant(wire, json.loads(made)["params"])
    others = [x for x in sent if not is_plan(x)]
    # Everything but plans passes, byte for byte and in order; a plan line of the agent's
    # passes only as sent (never altered).
    assert [x for x in client.out if x in others] == others
    assert all(x in sent or is_plan(x) for x in client.out[1:])


# ---- what a hostile review found ---------------------------------------------------------------


@pytest.mark.parametrize("request_id", [[1], {"a": 1}, True, None])
def test_an_initialize_whose_id_no_answer_can_match_passes_as_sent(request_id: Any) -> None:
    sent = initialize({}, request_id)
    assert Upgrade(["a"]).from_client(sent) == sent


def test_a_number_json_cannot_write_back_leaves_initialize_as_sent() -> None:
    sent = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"n":1e400}}\n'
    upgrade = Upgrade(["a"])
    assert upgrade.from_client(sent) == sent
    assert not upgrade.asked_plan


def markdown_update() -> bytes:
    plan = {"type": "markdown", "planId": "p", "content": "# Plan\n\n1. Fix"}
    return update({"sessionUpdate": "plan_update", "plan": plan})


@pytest.mark.parametrize(
    ("sent_id", "answered_id", "version"),
    [(1.0, 1, 1), (0, 0, -1), (0, 0, "1"), (0, 7, 1)],
    ids=["1.0-answered-as-1", "negative-version", "version-as-text", "answer-never-matched"],
)
def test_what_the_proxy_asked_for_is_converted_whatever_the_answer_looks_like(
    sent_id: Any, answered_id: Any, version: Any
) -> None:
    """A legacy client never gets the `plan_update` the proxy asked the agent for, however
    the agent answered initialize."""
    upgrade = Upgrade(["codex-acp"])
    upgrade.from_client(initialize({}, sent_id))
    result = {"protocolVersion": version, "agentInfo": {"name": "codex-acp"}}
    got: list[bytes] = []
    answer_line = line({"jsonrpc": "2.0", "id": answered_id, "result": result})
    asyncio.run(upgrade.from_agent(answer_line, got.append))
    asyncio.run(upgrade.from_agent(markdown_update(), got.append))
    assert got[0] == answer_line
    made = [json.loads(x)["params"] for x in got[1:]]
    assert [p["update"]["sessionUpdate"] for p in made] == ["plan"]
    for params in made:
        check_compliant("legacy", params)


def test_a_subagent_never_takes_the_id_of_another_session() -> None:
    client = Client("claude-agent-acp", {"plan": {}, "subagents": {}})
    entries = [{"content": "Own step", "status": "pending", "priority": "medium"}]
    client.send(update({"sessionUpdate": "plan", "entries": entries}, session_id="S2"))
    stamp = {"claudeCode": {"parentToolUseId": "S2"}}  # a tool call id equal to S2's
    child = [{"content": "Child step", "status": "pending", "priority": "medium"}]
    client.send(update({"sessionUpdate": "plan", "entries": child, "_meta": stamp}))
    announced = [p for p in client.plans() if p["update"]["sessionUpdate"] == "subagent_update"]
    (announcement,) = announced
    assert announcement["update"]["sessionId"] not in ("S1", "S2")
    s2 = [p for p in client.plans() if p["sessionId"] == "S2"]
    assert len(s2) == 1  # S2's own plan, never the child's


def test_a_subagent_title_a_client_cannot_read_is_left_out() -> None:
    client = Client("claude-agent-acp", {"plan": {}, "subagents": {}})
    card = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "name": "Task",
        "rawInput": {"description": "\ud800"},
    }
    client.send(update(card))
    child = [{"content": "Child step", "status": "pending", "priority": "medium"}]
    stamp = {"claudeCode": {"parentToolUseId": "t1"}}
    client.send(update({"sessionUpdate": "plan", "entries": child, "_meta": stamp}))
    assert client.plans()
    for params in client.plans():
        check_compliant("schema", params)


def test_the_agents_own_name_decides_which_agent_it_is() -> None:
    assert recognise({"name": "goose"}, ["goose", "acp", "--model", "claude"]) is UNKNOWN
    assert recognise({"name": "my-agent"}, ["python3", "claude_wrapper.py"]) is UNKNOWN
    assert recognise(None, ["npx", "-y", "@agentclientprotocol/claude-agent-acp"]) is CLAUDE
    assert recognise(None, ["goose", "--model", "claude"]) is UNKNOWN
    assert recognise({"name": "OpenCode"}, ["anything"]) is OPENCODE
