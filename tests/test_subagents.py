"""Subagents as ACP child sessions (stable since 2026-11-20), and kept apart where a client
does not take them.

Every `subagent_update` is checked against the TS SDK 2.4.0's `SubagentUpdate` and the
`SessionUpdate` union (`spec_shapes.check`), and a state machine holds the ordering rule with
concurrent children, streamed calls and failing sends: nothing of a child reaches the client
before its announcement.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from client_view import ClientView, as_shown, check_compliant
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from spec_shapes import check

from llm_plans import (
    ClientCapabilitiesRecorder,
    ConfigurationError,
    PlanSession,
    ReentrancyError,
)
from llm_plans.testing import RecordingSend

# How a client comes to take subagent sessions: v1's capability, or v2.
TAKES: dict[str, dict[str, Any]] = {
    "schema": {"client_capabilities": {"plan": {}, "subagents": {}}},
    "legacy": {"client_capabilities": {"subagents": {}}},
    "documents": {"client_capabilities": {"planCapabilities": {}, "subagents": {}}},
    "v2": {"protocol_version": 2},
}
# And clients that do not.
APART: dict[str, dict[str, Any]] = {
    "schema": {"client_capabilities": {"plan": {}}},
    "legacy": {"client_capabilities": {}},
    "documents": {"client_capabilities": {"planCapabilities": {}}},
}
ITEMS = {"type": "items", "entries": ["Read the code", "Fix it"]}


def parent(send: RecordingSend, args: dict[str, Any], **kwargs: Any) -> PlanSession:
    return PlanSession(send, session_id="parent", **args, **kwargs)


def announcements(send: RecordingSend) -> list[dict[str, Any]]:
    return [u for u in send.updates if u["sessionUpdate"] == "subagent_update"]


# ---- who takes them ---------------------------------------------------------------------


def test_takes_subagents_is_read_from_the_raw_capabilities() -> None:
    assert parent(RecordingSend(), TAKES["schema"]).takes_subagents
    assert parent(RecordingSend(), TAKES["v2"]).takes_subagents
    assert not parent(RecordingSend(), APART["schema"]).takes_subagents
    recorder = ClientCapabilitiesRecorder()
    recorder.capabilities = {"subagents": {}}
    assert parent(RecordingSend(), {"client_capabilities": recorder}).takes_subagents
    # The SDK's model drops the key it does not declare: a client seen only through it is
    # taken not to take them.
    from acp.schema import ClientCapabilities

    model = ClientCapabilities.model_validate({"subagents": {}})
    assert not parent(RecordingSend(), {"client_capabilities": model}).takes_subagents
    # A forced v2 form takes them, as every v2 client does.
    assert parent(RecordingSend(), {"form": "v2"}).takes_subagents


# ---- announcing --------------------------------------------------------------------------


@pytest.mark.parametrize("form", list(TAKES))
async def test_a_child_is_announced_first_and_speaks_as_itself(form: str) -> None:
    send = RecordingSend()
    session = parent(send, TAKES[form])
    child = await session.subagent("child-1", title="Explore", description="Reads the code")
    assert (await child.call("create_plan", ITEMS)).ok
    first, plan = send.sent
    assert first == {
        "sessionId": "parent",
        "update": {
            "sessionUpdate": "subagent_update",
            "sessionId": "child-1",
            "title": "Explore",
            "description": "Reads the code",
            "state": {"state": "running"},
        },
    }
    assert plan["sessionId"] == "child-1"
    for params in send.sent:
        check_compliant(form, params)
    assert child.session_id == "child-1"
    assert session.subagents == {"child-1": child}
    assert dict(session.plans) == {}  # the parent never sees a child's plans


async def test_the_same_id_is_the_same_child_and_announces_what_changed() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    child = await session.subagent("c", title="One")
    assert await session.subagent("c") is child
    assert await session.subagent("c", title="One") is child
    assert len(send.sent) == 1
    await session.subagent("c", description="Now with a description")
    assert announcements(send)[-1] == {
        "sessionUpdate": "subagent_update",
        "sessionId": "c",
        "description": "Now with a description",
    }


async def test_concurrent_calls_announce_once() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["v2"])
    children = await asyncio.gather(*(session.subagent("c", title="T") for _ in range(5)))
    assert all(c is children[0] for c in children)
    assert len(announcements(send)) == 1


async def test_a_failed_announcement_is_made_before_the_childs_next_notification() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    send.fail_with = ConnectionError("down")
    child = await session.subagent("c", title="T")  # returned all the same
    assert send.sent == []
    result = await child.call("create_plan", ITEMS)
    assert result.ok
    assert result.failure is not None  # not announced, so nothing of it was sent
    assert send.sent == []
    send.fail_with = None
    assert (await child.call("create_plan", ITEMS)).ok
    kinds = [(p["sessionId"], p["update"]["sessionUpdate"]) for p in send.sent]
    assert kinds[0] == ("parent", "subagent_update")
    assert {k for k in kinds[1:]} == {("c", "plan_update")}
    assert set(ClientView("schema").apply_all(send.updates[1:]).plans) == set(child.plans)


async def test_close_removes_the_plans_then_says_idle_and_subagent_reopens() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    child = await session.subagent("c", title="T")
    assert (await child.call("create_plan", ITEMS)).ok
    await child.close()
    assert send.updates[-2:] == [
        {"sessionUpdate": "plan_removed", "planId": "plan-1"},
        {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "idle"}},
    ]
    assert dict(child.plans) == {}
    assert session.subagents["c"] is child  # a closed child stays
    assert await session.subagent("c") is child
    assert announcements(send)[-1] == {
        "sessionUpdate": "subagent_update",
        "sessionId": "c",
        "title": "T",
        "state": {"state": "running"},
    }


async def test_close_keeps_the_plans_when_asked() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    child = await session.subagent("c")
    assert (await child.call("create_plan", ITEMS)).ok
    await child.close(keep_plans=True)
    assert send.updates[-1]["sessionUpdate"] == "subagent_update"
    assert list(child.plans) == ["plan-1"]


async def test_at_most_100_open_children() -> None:
    session = parent(RecordingSend(), TAKES["schema"])
    children = [await session.subagent(f"c{n}") for n in range(100)]
    with pytest.raises(ConfigurationError, match="100"):
        await session.subagent("one-more")
    await children[0].close()
    await session.subagent("one-more")  # a closed child leaves room
    with pytest.raises(ConfigurationError, match="100"):
        await session.subagent("c0")  # reopening counts too


@pytest.mark.parametrize("bad", ["", "parent", "a\nb", 7, "x" * 1025])
async def test_a_childs_id_is_checked(bad: Any) -> None:
    with pytest.raises(ConfigurationError):
        await parent(RecordingSend(), TAKES["schema"]).subagent(bad)


async def test_close_is_for_children_only() -> None:
    with pytest.raises(ConfigurationError, match="no parent"):
        await parent(RecordingSend(), TAKES["schema"]).close()


async def test_subagent_from_inside_send_or_on_commit_raises() -> None:
    caught: list[BaseException] = []
    holder: dict[str, PlanSession] = {}

    async def send(params: dict[str, Any]) -> None:
        try:
            await holder["s"].subagent("inner")
        except ReentrancyError as exc:
            caught.append(exc)

    holder["s"] = PlanSession(send, session_id="p", client_capabilities={"subagents": {}})
    assert (await holder["s"].call("create_plan", ITEMS)).ok
    await holder["s"].subagent("outer")  # its announcement's send tries again
    assert len(caught) == 2
    assert list(holder["s"].subagents) == ["outer"]


async def test_a_childs_commit_runs_the_parents_on_commit() -> None:
    committed: list[str] = []
    session = parent(
        RecordingSend(), TAKES["schema"], on_commit=lambda s: committed.append(s.session_id)
    )
    child = await session.subagent("c")  # a snapshot now keeps the child
    assert (await child.call("create_plan", ITEMS)).ok
    assert committed == ["parent", "parent"]


async def test_the_lifecycle_is_committed_as_it_changes() -> None:
    """A snapshot persisted from on_commit knows each child, and that a closed one is."""
    saved: list[dict[str, Any]] = []
    session = parent(
        RecordingSend(), TAKES["schema"], on_commit=lambda s: saved.append(s.snapshot())
    )
    child = await session.subagent("c", title="T")
    assert [c["sessionId"] for c in saved[-1]["subagents"]] == ["c"]
    await child.close(keep_plans=True)
    assert saved[-1]["subagents"][0]["open"] is False


async def test_a_subagent_call_during_close_opens_it_again() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    child = await session.subagent("c", title="T")
    assert (await child.call("create_plan", ITEMS)).ok
    gate = asyncio.Event()
    real = send.__call__

    async def slow(params: dict[str, Any]) -> None:
        if params["update"]["sessionUpdate"] == "plan_removed":
            await gate.wait()
        await real(params)

    send.__call__ = slow  # type: ignore[method-assign]
    session._subagents._send = slow  # the parent's route sends through it too
    child._outbox.reroute(session._subagents.send_for(session._subagents.children["c"]))
    closing = asyncio.ensure_future(child.close())
    await asyncio.sleep(0)
    assert await session.subagent("c") is child  # asked for while it closes
    gate.set()
    await closing
    assert send.updates[-1]["state"] == {"state": "running"}  # open, as its caller was told
    assert session.subagents["c"] is child
    assert session._subagents.children["c"].open


async def test_a_childs_session_id_is_unique_in_the_whole_tree() -> None:
    session = parent(RecordingSend(), TAKES["v2"])
    a = await session.subagent("a")
    with pytest.raises(ConfigurationError, match="unique"):
        await a.subagent("parent")  # the root's id
    await a.subagent("x")
    b = await session.subagent("b")
    with pytest.raises(ConfigurationError, match="unique"):
        await b.subagent("x")  # a cousin's id


async def test_restore_keeps_a_child_it_does_not_have_closed_and_takes_its_plans_back() -> None:
    send = RecordingSend()
    session = parent(send, APART["legacy"])
    snapshot = session.snapshot()
    child = await session.subagent("helper")
    assert (await child.call("create_plan", {"type": "items", "entries": ["child step"]})).ok
    assert session.restore(snapshot) == []
    await session.replay()
    assert not any("child step" in json.dumps(u) for u in send.updates[-1:])
    assert session.subagents["helper"] is child
    assert dict(child.plans) == {}


async def test_restore_is_refused_while_a_grandchild_streams() -> None:
    session = parent(RecordingSend(), TAKES["v2"], stream_interval=0)
    snapshot = session.snapshot()
    grandchild = await (await session.subagent("c")).subagent("g")
    await grandchild.feed("s", "create_plan", '{"type": "items", "entries": ["q"')
    with pytest.raises(ConfigurationError, match="busy"):
        session.restore(snapshot)


@pytest.mark.parametrize("form", ["schema", "documents"])
async def test_a_childs_plans_and_the_parents_never_share_an_id(form: str) -> None:
    send = RecordingSend()
    session = parent(send, APART[form])
    key = "planId" if form == "schema" else "id"
    # The parent holds an id a child's plan would take: the child's go elsewhere.
    assert (await session.call("create_plan", {**ITEMS, "id": "c/p"})).ok
    child = await session.subagent("c")
    assert (await child.call("create_plan", {**ITEMS, "id": "p"})).ok
    # Children whose ids would meet once joined stay apart too.
    other = await session.subagent("c/p")
    assert (await other.call("create_plan", {**ITEMS, "id": "x"})).ok
    ids = [u["plan"][key] for u in send.updates if u["sessionUpdate"] == "plan_update"]
    assert len(ids) == len(set(ids)) == 3
    # And the parent may not take an id under a child's.
    refused = await session.call("create_plan", {**ITEMS, "id": ids[1]})
    assert not refused.ok
    assert "subagent" in refused.content
    await child.close()
    shown = {u[key] for u in send.updates if u["sessionUpdate"] == "plan_removed"}
    assert "c/p" not in shown  # the parent's plan stays on the client


async def test_a_childs_rejected_call_changes_nothing_anywhere() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    assert (await session.call("create_plan", ITEMS)).ok
    child = await session.subagent("c")
    before = (session.snapshot(), len(send.sent))
    assert not (await child.call("update_plan", {"id": "plan-1", "entries": 5})).ok
    assert (session.snapshot(), len(send.sent)) == before


async def test_grandchildren_are_announced_on_the_child() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["v2"])
    child = await session.subagent("c")
    grandchild = await child.subagent("g", title="Deeper")
    assert (await grandchild.call("create_plan", ITEMS)).ok
    assert [p["sessionId"] for p in send.sent] == ["parent", "c", "g"]
    assert send.updates[1]["sessionId"] == "g"


# ---- clients that do not take them -------------------------------------------------------


@pytest.mark.parametrize("form", ["schema", "documents"])
async def test_without_subagent_sessions_a_childs_plans_are_apart_by_id(form: str) -> None:
    send = RecordingSend()
    session = parent(send, APART[form])
    assert (await session.call("create_plan", ITEMS)).ok
    child = await session.subagent("c", title="T")
    assert (await child.call("create_plan", ITEMS)).ok
    await child.close()
    assert announcements(send) == []
    assert {p["sessionId"] for p in send.sent} == {"parent"}
    for params in send.sent:
        check_compliant(form, params)
    key = "planId" if form == "schema" else "id"
    assert send.updates[1]["plan"][key] == "c/plan-1"
    assert send.updates[2] == {"sessionUpdate": "plan_removed", key: "c/plan-1"}
    assert list(session.plans) == ["plan-1"]


async def test_without_subagent_sessions_the_legacy_list_holds_both() -> None:
    send = RecordingSend()
    session = parent(send, APART["legacy"])
    assert (await session.call("create_plan", {"type": "items", "entries": ["mine"]})).ok
    child = await session.subagent("c")
    assert (await child.call("create_plan", {"type": "items", "entries": ["theirs"]})).ok
    assert (await session.call("create_plan", {"type": "items", "entries": ["mine too"]})).ok
    shown = [e["content"] for e in send.updates[-1]["entries"]]
    # Every plan's steps but the first's say whose they are; a child's, the child's title.
    assert shown == ["mine", "[plan-2] mine too", "[c] theirs"]
    await child.close()
    assert [e["content"] for e in send.updates[-1]["entries"]] == ["mine", "[plan-2] mine too"]


async def test_a_childs_plans_do_not_count_toward_the_parents_limit() -> None:
    from llm_plans import Limits

    session = parent(RecordingSend(), APART["schema"], limits=Limits(max_plans=1))
    assert (await session.call("create_plan", ITEMS)).ok
    child = await session.subagent("c")
    assert (await child.call("create_plan", ITEMS)).ok


# ---- restarts ----------------------------------------------------------------------------


async def test_snapshot_keeps_children_and_replay_announces_them_first() -> None:
    send = RecordingSend()
    session = parent(send, TAKES["schema"])
    assert (await session.call("create_plan", ITEMS)).ok
    child = await session.subagent("c", title="T", description="D")
    assert (await child.call("create_plan", ITEMS)).ok
    closed = await session.subagent("gone")
    await closed.close()
    snapshot = json.loads(json.dumps(session.snapshot()))
    assert snapshot["version"] == 2
    fresh_send = RecordingSend()
    fresh = parent(fresh_send, TAKES["schema"])
    assert fresh.restore(snapshot) == []
    assert fresh.snapshot() == snapshot
    assert fresh_send.sent == []  # restore sends nothing
    await fresh.replay()
    sent = [(p["sessionId"], p["update"]["sessionUpdate"]) for p in fresh_send.sent]
    assert sent == [
        ("parent", "plan_update"),
        ("parent", "subagent_update"),
        ("c", "plan_update"),
        ("parent", "subagent_update"),
    ]
    assert fresh_send.updates[1]["state"] == {"state": "running"}
    assert fresh_send.updates[3]["state"] == {"state": "idle"}
    for params in fresh_send.sent:
        check("schema", params)


async def test_a_version_1_snapshot_restores() -> None:
    session = parent(RecordingSend(), TAKES["schema"])
    plan = {"type": "items", "id": "p", "entries": [{"content": "a"}]}
    assert session.restore({"version": 1, "next_number": 1, "plans": [plan]}) == []
    assert list(session.plans) == ["p"]


async def test_partial_restore_names_the_childs_session() -> None:
    session = parent(RecordingSend(), TAKES["schema"])
    bad = {"type": "items", "id": "p", "entries": "not a list"}
    child = {"version": 2, "next_number": 1, "plans": [bad]}
    snapshot = {
        "version": 2,
        "next_number": 1,
        "plans": [],
        "subagents": [{"sessionId": "c", "open": True, "snapshot": child}],
    }
    with pytest.raises(ConfigurationError, match="subagent 'c'"):
        session.restore(snapshot)
    assert session.subagents == {}
    [skipped] = session.restore(snapshot, partial=True)
    assert skipped.session_id == "c"
    assert skipped.id == "p"
    assert list(session.subagents) == ["c"]


@pytest.mark.parametrize(
    "subagents",
    [
        "x",
        [{"sessionId": "c"}],
        [{"sessionId": "", "snapshot": {}}],
        [{"sessionId": "c", "open": "yes", "snapshot": {}}],
        [{"sessionId": "c", "title": 5, "snapshot": {}}],
    ],
)
def test_a_snapshots_subagents_are_checked(subagents: Any) -> None:
    session = parent(RecordingSend(), TAKES["schema"])
    snapshot = {"version": 2, "next_number": 1, "plans": [], "subagents": subagents}
    with pytest.raises(ConfigurationError):
        session.restore(snapshot)


# ---- the ordering rule, for any interleaving ----------------------------------------------

CHILDREN = ("a", "b", "c")


class Family(RuleBasedStateMachine):
    """A parent and up to three children: plain and streamed calls, concurrent starts and
    calls, closes, failing sends and replays. After every step nothing of a child has reached
    the client before its announcement, every notification is compliant, and, once the
    client heard everything, it shows every session's plans."""

    @initialize(form=st.sampled_from(list(TAKES)))
    def start(self, form: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.form = form
        self.send = RecordingSend()
        self.session = parent(self.send, TAKES[form], stream_interval=0)
        self.synced = True

    def teardown(self) -> None:
        self.loop.close()

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    def children(self) -> dict[str, PlanSession]:
        return dict(self.session.subagents)

    @rule(child_id=st.sampled_from(CHILDREN), title=st.none() | st.sampled_from(["T", "U"]))
    def start_child(self, child_id: str, title: str | None) -> None:
        self.run(self.session.subagent(child_id, title=title))

    @rule(child_id=st.sampled_from(CHILDREN))
    def start_child_while_the_pipe_is_down(self, child_id: str) -> None:
        before, self.send.fail_with = self.send.fail_with, ConnectionError("down")
        self.run(self.session.subagent(child_id, title="Down"))
        self.send.fail_with = before

    @rule(ids=st.lists(st.sampled_from(CHILDREN), min_size=2, max_size=3))
    def start_concurrently(self, ids: list[str]) -> None:
        async def both() -> None:
            await asyncio.gather(*(self.session.subagent(i) for i in ids))

        self.run(both())

    @rule(
        who=st.sampled_from(("parent", *CHILDREN)),
        entries=st.lists(st.sampled_from("xyz"), min_size=1, max_size=3),
    )
    def create(self, who: str, entries: list[str]) -> None:
        session = self.session if who == "parent" else self.children().get(who)
        if session is None:
            return
        result = self.run(session.call("create_plan", {"type": "items", "entries": entries}))
        if result.failure is not None:
            self.synced = False

    @rule(data=st.data())
    def both_at_once(self, data: st.DataObject) -> None:
        children = list(self.children().values())
        if not children:
            return
        child = data.draw(st.sampled_from(children))

        async def together() -> None:
            await asyncio.gather(
                self.session.call("create_plan", {"type": "items", "entries": ["p"]}),
                child.call("create_plan", {"type": "items", "entries": ["c"]}),
            )

        self.run(together())
        self.synced = self.send.fail_with is None and self.synced

    @rule(child_id=st.sampled_from(CHILDREN), cut=st.integers(5, 40))
    def streamed(self, child_id: str, cut: int) -> None:
        child = self.children().get(child_id)
        if child is None:
            return
        text = json.dumps({"type": "items", "entries": ["one", "two", "three"]})

        async def stream() -> None:
            for n in range(0, len(text), cut):
                await child.feed("s", "create_plan", text[n : n + cut])
            result = await child.finish("s")
            if result.failure is not None:
                self.synced = False

        self.run(stream())

    @rule(child_id=st.sampled_from(CHILDREN), keep=st.booleans())
    def close(self, child_id: str, keep: bool) -> None:
        child = self.children().get(child_id)
        if child is None:
            return
        try:
            self.run(child.close(keep_plans=keep))
        except ConnectionError:
            self.synced = False

    @rule(down=st.booleans())
    def pipe(self, down: bool) -> None:
        self.send.fail_with = ConnectionError("down") if down else None

    @precondition(lambda self: self.send.fail_with is None)
    @rule()
    def replay(self) -> None:
        self.run(self.session.replay())
        self.synced = True

    @invariant()
    def announced_first(self) -> None:
        announced: set[str] = set()
        for params in self.send.sent:
            update = params["update"]
            if update["sessionUpdate"] == "subagent_update":
                assert params["sessionId"] == "parent"
                announced.add(update["sessionId"])
            elif params["sessionId"] != "parent":
                assert params["sessionId"] in announced, "a child spoke before its announcement"

    @invariant()
    def compliant(self) -> None:
        for params in self.send.sent:
            check_compliant(self.form, params)

    @invariant()
    def client_shows_every_session(self) -> None:
        if not self.synced or self.send.fail_with is not None or self.form == "legacy":
            return
        sessions: dict[str, PlanSession] = {"parent": self.session, **self.children()}
        for session_id, session in sessions.items():
            updates = [p["update"] for p in self.send.sent if p["sessionId"] == session_id]
            view = ClientView(self.form).apply_all(updates)
            assert view.shown() == as_shown(session.plans, self.form), session_id


TestFamily = Family.TestCase
TestFamily.settings = settings(stateful_step_count=20, max_examples=60, deadline=None)


@pytest.mark.parametrize("form", ["legacy", "schema"])
@pytest.mark.parametrize("budget", [2.0, 4.0])
async def test_a_childs_previews_in_its_parents_session_keep_the_budget(
    form: str, budget: float
) -> None:
    """Weighed as they go out: with the parent's steps in the one legacy list, or renamed."""
    send = RecordingSend()
    session = parent(send, APART[form], stream_interval=0, preview_budget=budget)
    assert (await session.call("create_plan", {"type": "items", "entries": ["x" * 900] * 120})).ok
    child = await session.subagent("c", title="helper")
    send.clear()
    text = json.dumps({"type": "items", "entries": [f"step {n}" for n in range(60)]})
    for n in range(0, len(text), 7):
        await child.feed("s", "create_plan", text[n : n + 7])
    previews = len(send.sent)
    assert (await child.finish("s")).ok

    def weight(params: dict[str, Any]) -> int:
        return len(json.dumps(params, separators=(",", ":")))

    assert previews >= 1
    final = sum(map(weight, send.sent[previews:]))
    # All previews together at most `budget` times what the finished call sends.
    assert sum(map(weight, send.sent[:previews])) <= budget * final
