"""What the client holds: no repeats, resync after failures, the legacy list included."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from llm_plans import Limits, PlanSession, WireForm
from llm_plans._core.plans import Stored
from llm_plans._wire.flatten import Flattener, read_plan_file
from llm_plans._wire.outbox import Outbox
from llm_plans.testing import RecordingSend, client_view

PLAN = Stored("markdown", "m", content="- [ ] a")


def outbox(form: WireForm, send: RecordingSend) -> Outbox:
    return Outbox(send, "s", form, Flattener(Limits(), None, read_plan_file))


async def test_an_update_the_client_holds_is_not_sent_again() -> None:
    send = RecordingSend()
    box = outbox(WireForm.SCHEMA, send)
    assert await box.show({"m": PLAN}, ["m"]) is None
    assert await box.show({"m": Stored("markdown", "m", content="- [ ] a")}, ["m"]) is None
    assert len(send.sent) == 1
    await box.show({}, ["m"])
    await box.show({}, ["m"])
    assert send.updates[1:] == [{"sessionUpdate": "plan_removed", "planId": "m"}]
    await box.show({}, ["never-shown"])
    assert len(send.sent) == 2


async def test_what_did_not_arrive_goes_out_with_the_next_change() -> None:
    send = RecordingSend()
    box = outbox(WireForm.DOCUMENTS, send)
    send.fail_with = ConnectionError("down")
    failure = await box.show({"m": PLAN}, ["m"])
    assert isinstance(failure, ConnectionError)
    assert box.stale
    send.fail_with = None
    other = Stored("markdown", "n", content="x")
    await box.show({"m": PLAN, "n": other}, ["n"])
    assert [u["plan"]["id"] for u in send.updates] == ["m", "n"]
    assert not box.stale


async def test_the_legacy_list_is_resent_until_it_arrives_even_when_empty() -> None:
    send = RecordingSend()
    box = outbox(WireForm.LEGACY, send)
    await box.show({"m": PLAN}, ["m"])
    send.fail_with = ConnectionError("down")
    assert await box.show({}, ["m"]) is not None
    send.fail_with = None
    await box.show({}, [], force=True)
    assert send.updates[-1] == {"sessionUpdate": "plan", "entries": []}


# ---- memory: ids the client was told are gone are forgotten -------------------------------


def held_ids(session: PlanSession) -> set[str]:
    box: Outbox = session._outbox
    return set(box._held) | set(box._stale)


async def test_create_and_remove_cycles_leave_nothing_behind() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    for n in range(2_000):
        assert (await session.call("create_plan", {"type": "markdown", "content": f"# {n}"})).ok
        if n % 100 != 99:
            assert (await session.call("remove_plan", {"id": f"plan-{n + 1}"})).ok
    # The outbox holds the plans that exist, not every id ever created.
    assert held_ids(session) == set(session.plans)
    assert len(session.plans) == 20


async def test_a_failed_removal_is_remembered_until_it_is_sent() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    await session.call("create_plan", {"type": "markdown", "id": "gone", "content": "x"})
    send.fail_with = ConnectionError("down")
    result = await session.call("remove_plan", {"id": "gone"})
    assert result.ok
    assert isinstance(result.failure, ConnectionError)
    assert held_ids(session) == {"gone"}  # the client still shows it: not forgotten yet
    send.fail_with = None
    await session.call("create_plan", {"type": "markdown", "id": "next", "content": "y"})
    assert client_view(send.updates) == {"next": client_view(send.updates)["next"]}
    assert held_ids(session) == {"next"}


@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["create", "remove", "update"]), st.integers(0, 4), st.booleans()
        ),
        max_size=40,
    )
)
async def test_the_client_ends_where_the_session_is_with_bounded_memory(
    steps: list[tuple[str, int, bool]],
) -> None:
    # Any sequence of calls with sends failing at random: once a send gets through, the
    # client shows exactly the session's plans, and the outbox remembers only ids the client
    # may still show (the plans, and removals not yet delivered).
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    shown_ever: set[str] = set()
    for action, number, fails in steps:
        send.fail_with = ConnectionError("down") if fails else None
        plan_id = f"p{number}"
        if action == "create":
            await session.call("create_plan", {"type": "markdown", "id": plan_id, "content": "x"})
        elif action == "update":
            await session.call("update_plan", {"id": plan_id, "content": f"x {len(send.sent)}"})
        else:
            await session.call("remove_plan", {"id": plan_id})
        shown_ever |= set(session.plans)
        assert held_ids(session) <= shown_ever
        assert len(held_ids(session) - set(session.plans)) <= len(shown_ever - set(session.plans))
    send.fail_with = None
    await session.replay()
    assert set(client_view(send.updates)) == set(session.plans)
    if not session._outbox.stale:
        assert held_ids(session) == set(session.plans)


# ---- the v2 forms -----------------------------------------------------------------------


def shown_in_v2(updates: list[dict[str, Any]]) -> set[str]:
    return set(client_view(updates))


@pytest.mark.parametrize("form", ["schema", "v2"])
async def test_stable_create_and_remove_cycles_leave_nothing_behind(form: str) -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", form=form)
    for n in range(600):
        assert (await session.call("create_plan", {"type": "markdown", "content": f"# {n}"})).ok
        if n % 100 != 99:
            assert (await session.call("remove_plan", {"id": f"plan-{n + 1}"})).ok
    assert held_ids(session) == set(session.plans)
    # What was worked out for plans (steps, files read) is kept for live plans only.
    assert set(session._outbox._flattener._cache) <= set(session.plans)
    assert set(session._outbox._flattener._documents) <= set(session.plans)
    assert shown_in_v2(send.updates) == set(session.plans)


@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["create", "remove", "update"]), st.integers(0, 4), st.booleans()
        ),
        max_size=40,
    ),
    kind=st.sampled_from(["markdown", "items"]),
)
async def test_a_v2_client_ends_where_the_session_is(
    steps: list[tuple[str, int, bool]], kind: str
) -> None:
    # As above, in v2.
    send = RecordingSend()
    session = PlanSession(send, session_id="s", protocol_version=2)
    for action, number, fails in steps:
        send.fail_with = ConnectionError("down") if fails else None
        plan_id = f"p{number}"
        body: dict[str, Any] = (
            {"content": f"- [ ] x {len(send.sent)}"}
            if kind == "markdown"
            else {"entries": [{"content": "x", "status": "cancelled"}, f"y {len(send.sent)}"]}
        )
        if action == "create":
            await session.call("create_plan", {"type": kind, "id": plan_id, **body})
        elif action == "update":
            await session.call("update_plan", {"id": plan_id, **body})
        else:
            await session.call("remove_plan", {"id": plan_id})
    send.fail_with = None
    await session.replay()
    assert shown_in_v2(send.updates) == set(session.plans)
    if not session._outbox.stale:
        assert held_ids(session) == set(session.plans)


async def test_a_rejected_call_resends_what_is_stale_and_reads_no_file_plan(
    tmp_path: Any,
) -> None:
    # A v2 client sees a file plan's steps, read again when a plan call changes something;
    # a rejected call changes nothing, so it sends only what a failed send left behind.
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("- [ ] one\n")
    send = RecordingSend()
    session = PlanSession(send, session_id="s", form="v2", workspace=tmp_path)
    assert (
        await session.call("create_plan", {"type": "file", "id": "f", "uri": str(plan_file)})
    ).ok
    assert (await session.call("create_plan", {"type": "items", "id": "i", "entries": ["a"]})).ok
    send.fail_with = ConnectionError("down")
    changed = await session.call(
        "update_plan", {"id": "i", "changes": [{"step": 1, "status": "completed"}]}
    )
    assert isinstance(changed.failure, ConnectionError)
    send.fail_with = None
    plan_file.write_text("- [x] one\n- [ ] two\n")
    sent = len(send.sent)
    assert not (await session.call("update_plan", {"id": "nope", "changes": [{"step": 1}]})).ok
    assert [u["plan"]["planId"] for u in send.updates[sent:]] == ["i"]


# ---- the quick way for one plan -----------------------------------------------------------


class Decided:
    """A preview's gate that answers as told and notes what it was asked about."""

    def __init__(self, passes: bool) -> None:
        self.answer = passes
        self.asked: list[list[dict[str, Any]]] = []

    def passes(self, session_id: str, updates: list[dict[str, Any]]) -> bool:
        self.asked.append(updates)
        return self.answer


def reads_anew() -> Callable[[str], str]:
    """A plan file's reader whose text is new at every read (the file edited in between)."""
    reads = itertools.count()
    return lambda uri: f"- [ ] read {next(reads)}"


def items(plan_id: str, *contents: str, status: str = "pending") -> Stored:
    entries = tuple({"content": c, "priority": "medium", "status": status} for c in contents)
    return Stored("items", plan_id, entries)


known_plans = st.sampled_from(
    [
        items("p", "a"),
        items("p", "a", "b"),
        items("p", "a", "b", status="cancelled"),
        items("q", "c"),
        PLAN,
        Stored("markdown", "p", content="- [ ] a\n- [x] b"),
        Stored("file", "f", uri="file:///work/plan.md"),
    ]
)


@given(
    form=st.sampled_from([form for form in WireForm if form is not WireForm.V2_UNSTABLE]),
    history=st.lists(
        st.tuples(
            st.lists(known_plans, max_size=3),
            st.none() | known_plans,
            st.booleans(),
            st.booleans(),
        ),
        max_size=6,
    ),
    plans=st.lists(known_plans, max_size=3),
    preview=st.none() | known_plans,
    ids=st.lists(st.sampled_from(["p", "q", "m", "f"]), min_size=1, max_size=2),
    passes=st.none() | st.booleans(),
    force=st.booleans(),
    fails_now=st.booleans(),
)
# A commit the client holds already; a preview where a v2 client was shown another
# stream's markdown; a preview the gate holds back.
@example(
    WireForm.SCHEMA,
    [([items("p", "a")], None, False, False)],
    [items("p", "a")],
    None,
    ["p"],
    None,
    False,
    False,
)
@example(WireForm.V2, [([], PLAN, False, False)], [], items("p", "a"), ["p"], True, False, False)
@example(WireForm.SCHEMA, [], [], items("p", "a"), ["p"], False, False, False)
async def test_one_plan_the_quick_way_sends_and_notes_what_the_whole_way_does(
    form: WireForm,
    history: list[tuple[list[Stored], Stored | None, bool, bool]],
    plans: list[Stored],
    preview: Stored | None,
    ids: list[str],
    passes: bool | None,
    force: bool,
    fails_now: bool,
) -> None:
    # Two outboxes with the same past (plans and other previews shown, previews held back,
    # sends failing, a plan file that reads otherwise each time): one shows what is asked
    # with its quick way for one items plan, the other without it. The client, the gate
    # and the outbox's notes (what the client holds, what is stale, what it worked out for
    # the legacy steps) end the same.
    sends = RecordingSend(), RecordingSend()
    boxes = [Outbox(send, "s", form, Flattener(Limits(), None, reads_anew())) for send in sends]
    boxes[1]._show_one = lambda *args, **kwargs: None  # type: ignore[method-assign]
    for shown, other, fails, gated in history:
        before = {plan.id: plan for plan in shown}
        others = {} if other is None else {other.id: other}
        for box, send in zip(boxes, sends, strict=True):
            send.fail_with = ConnectionError("down") if fails else None
            gate = Decided(False) if gated else None
            await box.show(before, [*before, *others], others, gate=gate)
    for send in sends:
        send.fail_with = ConnectionError("down") if fails_now else None
    now = {plan.id: plan for plan in plans}
    previews = None if preview is None else {preview.id: preview}
    gates = [None if passes is None else Decided(passes) for _ in boxes]
    quick, whole = [
        await box.show(now, ids, previews, force=force, gate=gate)
        for box, gate in zip(boxes, gates, strict=True)
    ]
    assert repr(quick) == repr(whole)  # None, or the same failure
    assert sends[0].sent == sends[1].sent
    asked = [None if gate is None else gate.asked for gate in gates]
    assert asked[0] == asked[1]
    assert boxes[0]._held == boxes[1]._held
    assert boxes[0]._stale == boxes[1]._stale
    assert boxes[0]._legacy_held == boxes[1]._legacy_held
    caches = [{i: c.entries for i, c in box._flattener._cache.items()} for box in boxes]
    assert caches[0] == caches[1]
    read = [{i: c.document for i, c in box._flattener._documents.items()} for box in boxes]
    assert read[0] == read[1]
