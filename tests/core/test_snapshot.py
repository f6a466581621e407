"""snapshot() and restore(): restored plans are checked as strictly as a model's calls."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import strategies
from client_view import ClientView, expected
from conftest import CAPABILITIES
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from llm_plans import ConfigurationError, Limits, PlanSession
from llm_plans._models import Plan
from llm_plans.testing import RecordingSend


def snapshot_of(*plans: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "next_number": 1, "plans": list(plans)}


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"type": "file", "id": "f", "uri": "file:///etc/passwd"}, "inside the workspace"),
        ({"type": "markdown", "id": "\udfff", "content": "x"}, r"plans\[1\]"),
        ({"type": "items", "id": "x" * 200, "entries": []}, "at most 64 characters"),
        (
            {
                "type": "items",
                "id": "i",
                "entries": [
                    {
                        "content": "a",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"n": float("nan")},
                    }
                ],
            },
            "NaN",
        ),
        (
            {
                "type": "items",
                "id": "i",
                "entries": [{"content": "a" * 5000, "priority": "medium", "status": "pending"}],
            },
            "at most 1000",
        ),
    ],
)
def test_restore_refuses_what_a_call_would_refuse(
    tmp_path: Path, plan: dict[str, Any], message: str
) -> None:
    session = PlanSession(RecordingSend(), session_id="s", workspace=tmp_path)
    good = {"type": "markdown", "id": "kept", "content": "- [ ] a"}
    session.restore(snapshot_of(good))
    with pytest.raises(ConfigurationError, match=message):
        session.restore(snapshot_of(good, plan))
    assert list(session.plans) == ["kept"]  # nothing changed


def test_restore_keeps_meta_and_the_id_counter() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    meta = {"source": "test"}
    session.restore(
        {
            "version": 1,
            "next_number": 7,
            "plans": [{"type": "markdown", "id": "m", "content": "x", "_meta": meta}],
        }
    )
    assert session.plans["m"].meta == meta
    assert session.snapshot()["next_number"] == 7


async def test_restore_waits_for_no_stream_and_replay_takes_back_what_is_gone() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    empty = session.snapshot()
    await session.call("create_plan", {"type": "markdown", "id": "old", "content": "x"})
    await session.feed("c", "create_plan", '{"type": "items", "entries": [{"content": "a"},')
    with pytest.raises(ConfigurationError, match="abort_all"):
        session.restore(empty)
    await session.abort_all()
    session.restore(empty)
    await session.replay()
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "old"}


# ---- partial restore ---------------------------------------------------------------------------


def test_partial_restore_keeps_what_validates_and_says_what_it_skipped(tmp_path: Path) -> None:
    outside = {"type": "file", "id": "moved", "uri": "file:///elsewhere/plan.md"}
    snapshot = {
        "version": 1,
        "next_number": 9,
        "plans": [
            {"type": "markdown", "id": "kept", "content": "- [ ] a"},
            outside,
            {"type": "items", "id": "kept", "entries": [{"content": "a"}]},  # a duplicate
            {"type": "diagram", "id": "odd", "content": "x"},  # an unknown kind
            "not a plan",
            {"type": "markdown", "id": "s\udfff", "content": "x"},  # an id JSON cannot carry
            {"type": "items", "id": "also-kept", "entries": [{"content": "b"}]},
        ],
    }
    strict = PlanSession(RecordingSend(), session_id="s", workspace=tmp_path)
    with pytest.raises(ConfigurationError) as refused:
        strict.restore(snapshot)
    assert strict.plans == {}

    session = PlanSession(RecordingSend(), session_id="s", workspace=tmp_path)
    skipped = session.restore(snapshot, partial=True)
    assert list(session.plans) == ["kept", "also-kept"]
    assert session.snapshot()["next_number"] == 9  # the id counter survives
    assert [(s.index, s.id) for s in skipped] == [
        (1, "moved"),
        (2, "kept"),
        (3, "odd"),
        (4, None),
        (5, None),
    ]
    assert "inside the workspace" in skipped[0].reason
    assert "a plan with this id exists" in skipped[1].reason
    # Each reason is the text the all-or-nothing error gives for that plan.
    for skip in skipped:
        assert skip.reason in str(refused.value)
        # One line a person can read in a log or a message, not the model's retry prompt.
        assert "\n" not in skip.reason
        assert "again" not in skip.reason
        assert f"plans[{skip.index}]" in str(refused.value)
    with pytest.raises(dataclasses.FrozenInstanceError):
        skipped[0].reason = "changed"  # type: ignore[misc]


def test_partial_restore_of_a_sound_snapshot_skips_nothing() -> None:
    snapshot = {
        "version": 1,
        "next_number": 3,
        "plans": [{"type": "markdown", "id": "a", "content": "x"}],
    }
    session = PlanSession(RecordingSend(), session_id="s")
    assert session.restore(snapshot) == []
    assert session.restore(snapshot, partial=True) == []
    assert list(session.plans) == ["a"]


@pytest.mark.parametrize(
    "snapshot",
    [
        {"version": 3, "next_number": 1, "plans": []},
        {"version": 1, "next_number": 1, "plans": {"a": {}}},
        {"version": 1, "next_number": 0, "plans": []},
        ["not", "a", "snapshot"],
    ],
)
def test_partial_restore_still_refuses_what_is_not_a_snapshot(snapshot: Any) -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    session.restore(snapshot_of({"type": "markdown", "id": "kept", "content": "x"}))
    with pytest.raises(ConfigurationError):
        session.restore(snapshot, partial=True)
    assert list(session.plans) == ["kept"]


# ---- restore() and the session lock ------------------------------------------------------------


class Gate(RecordingSend):
    """A send that, once closed, waits at the gate until it is opened."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False
        self.waiting = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, params: dict[str, Any]) -> None:
        if self.closed:
            self.waiting.set()
            await self.open.wait()
        await super().__call__(params)


async def test_restore_is_refused_while_a_call_is_awaiting_send(form: str) -> None:
    send = Gate()
    caps = CAPABILITIES[form]
    session = PlanSession(send, session_id="s", client_capabilities=caps)
    await session.call("create_plan", {"type": "markdown", "id": "old", "content": "x"})
    empty = {"version": 1, "next_number": 1, "plans": []}
    send.closed = True
    call = asyncio.ensure_future(
        session.call("create_plan", {"type": "items", "id": "new", "entries": ["a"]})
    )
    await send.waiting.wait()  # the new plan is on its way to the client
    before = session.snapshot()
    for partial in (False, True):
        with pytest.raises(ConfigurationError, match="a call holds the session"):
            session.restore(empty, partial=partial)
    assert session.snapshot() == before
    send.open.set()
    assert (await call).ok
    # The client holds exactly the session's plans, so a later restore can take them back.
    assert_client_shows(send, form, session)
    session.restore(empty)
    await session.replay()
    assert_client_shows(send, form, session)
    assert session.plans == {}


def assert_client_shows(send: RecordingSend, form: str, session: PlanSession) -> None:
    view = ClientView(form).apply_all(send.updates)
    if form == "legacy":
        keys = ("content", "priority", "status")
        flat = [{k: e[k] for k in keys} for e in session.legacy_update()["entries"]]
        assert view.shown_entries() == flat
    else:
        assert view.shown() == expected(session.plans)


async def test_restore_from_inside_send_or_on_commit_raises_reentrancy_error() -> None:
    seen: list[str] = []
    snapshot = snapshot_of({"type": "markdown", "id": "other", "content": "x"})

    def attempt() -> None:
        try:
            session.restore(snapshot)
        except Exception as exc:
            seen.append(type(exc).__name__)

    async def later() -> None:
        attempt()

    class Reentrant(RecordingSend):
        async def __call__(self, params: dict[str, Any]) -> None:
            await super().__call__(params)
            attempt()
            await asyncio.ensure_future(later())  # a task started in send

    session = PlanSession(Reentrant(), session_id="s", on_commit=lambda _: attempt())
    result = await session.call("create_plan", {"type": "markdown", "id": "mine", "content": "x"})
    assert result.ok
    assert result.failure is None
    assert seen == ["ReentrancyError"] * 3
    assert list(session.plans) == ["mine"]
    await asyncio.sleep(0)
    session.restore(snapshot)  # once the call returned, restore runs
    assert list(session.plans) == ["other"]


# ---- any accepted sequence of calls round-trips -----------------------------------------------

# Default limits, and tight ones the strategies' plans run into (ids, steps, step length, text,
# plan count), so that a rule one path applies and another skips shows up as a failed restore.
LIMITS = [
    Limits(),
    Limits(max_id_length=6, max_entries=3, max_entry_chars=12, max_markdown_chars=40, max_plans=3),
    # A snapshot writes each step in full: a plan sent in few bytes restores past a small call
    # limit all the same.
    Limits(max_arguments_bytes=160, max_entries=5),
]


@st.composite
def edge_call(draw: st.DrawFn, plans: dict[str, Any], limits: Limits) -> tuple[str, Any]:
    """A call at the edges of the rules, through each path that writes a plan."""
    items = sorted(i for i, p in plans.items() if p.type == "items")
    target = draw(st.sampled_from(sorted(plans))) if plans else "ghost"
    near = st.integers(limits.max_entry_chars - 1, limits.max_entry_chars + 1).map("w".__mul__)
    text = draw(st.one_of(near, near, strategies.step_text, st.sampled_from([" pad ", "\x1fx"])))
    way = draw(st.sampled_from(["change", "entries", "empty", "switch", "markdown", "create"]))
    if way == "change" and items:
        changed = draw(st.sampled_from(items))
        step = draw(st.integers(1, len(plans[changed].entries)))
        return "update_plan", {"id": changed, "changes": [{"step": step, "content": text}]}
    if way == "entries":
        return "update_plan", {"id": target, "entries": [text] * draw(st.integers(1, 4))}
    if way == "empty":
        return "update_plan", {
            "id": target,
            "type": draw(st.sampled_from([None, "items"])),
            "entries": [],
        }
    if way == "switch":
        kind = draw(st.sampled_from(strategies.KINDS))
        return "update_plan", {"id": target, "type": kind, strategies.FIELD_FOR[kind]: text}
    if way == "markdown":
        return "update_plan", {"id": target, "content": "m" * draw(st.integers(39, 41))}
    plan_id = draw(st.sampled_from([None, "x" * 7, "ok"]))
    return "create_plan", {"type": "items", "id": plan_id, "entries": [text]}


@st.composite
def any_call(draw: st.DrawFn, plans: dict[str, Any], limits: Limits) -> tuple[str, Any]:
    ids = tuple(sorted(plans))
    kinds = ["create", "update", "remove", "hostile", "repairable", "edge", "edge", "edge"]
    kind = draw(st.sampled_from(kinds))
    if kind == "create" or (not ids and kind in ("update", "remove")):
        return "create_plan", draw(strategies.as_sent(draw(strategies.create_args())))
    if kind == "repairable":
        return "create_plan", draw(strategies.repairable(draw(strategies.create_args())))
    target = draw(st.sampled_from(ids)) if ids else "ghost"
    if kind == "update":
        steps = len(getattr(plans[target], "entries", ()))
        return "update_plan", draw(strategies.update_args(target, steps))
    if kind == "remove":
        return "remove_plan", {"id": target}
    if kind == "hostile":
        call = draw(strategies.hostile(ids))
        return call.tool, call.arguments
    return draw(edge_call(plans, limits))


async def streamed(session: PlanSession, call_id: str, tool: str, pieces: list[Any]) -> None:
    for piece in pieces:
        await session.feed(call_id, tool, piece)
    await session.finish(call_id)


async def replayed(session: PlanSession, send: RecordingSend) -> list[dict[str, Any]]:
    start = len(send.sent)
    await session.replay()
    return send.updates[start:]


@given(
    data=st.data(),
    form=st.sampled_from(sorted(CAPABILITIES)),
    limits=st.sampled_from(LIMITS),
    in_workspace=st.booleans(),
)
@settings(max_examples=150)  # about 12 s: a sequence of up to 12 calls, restored and replayed
def test_any_accepted_sequence_restores_and_replays_the_same(
    data: st.DataObject, form: str, limits: Limits, in_workspace: bool
) -> None:
    asyncio.run(round_trip(data, form, limits, in_workspace))


async def round_trip(data: st.DataObject, form: str, limits: Limits, in_workspace: bool) -> None:
    workspace = strategies.FILE_DIR if in_workspace else None
    setup: dict[str, Any] = {
        "client_capabilities": CAPABILITIES[form],
        "limits": limits,
        "workspace": workspace,
        "stream_interval": 0,  # every fragment that completes a step is previewed
    }
    send = RecordingSend()
    session = PlanSession(send, session_id="s", **setup)
    for number in range(data.draw(st.integers(1, 12), label="calls")):
        tool, arguments = data.draw(any_call(dict(session.plans), limits), label="call")
        if isinstance(arguments, str | bytes) and data.draw(st.booleans(), label="streamed"):
            pieces = data.draw(strategies.fragments(arguments), label="fragments")
            await streamed(session, f"call-{number}", tool, pieces)
        else:
            await session.call(tool, arguments)
    snapshot = session.snapshot()
    assert snapshot == model_dump(session)  # built from the wire values, as the models dump
    assert json.dumps(snapshot) == json.dumps(model_dump(session))  # key order too
    scribble(snapshot)
    assert session.snapshot() == model_dump(session)  # the caller's copy is the caller's
    snapshot = session.snapshot()

    again = RecordingSend()
    restored = PlanSession(again, session_id="s", **setup)
    assert restored.restore(snapshot) == []  # everything the session held restores
    assert restored.snapshot() == snapshot
    assert restored.plans == session.plans
    # What a client of each form shows after session/load is what the original would show it.
    from_restored, from_original = await replayed(restored, again), await replayed(session, send)
    assert seen(form, from_restored) == seen(form, from_original)
    if form != "legacy":  # the same notifications, keyed by id or planId
        assert from_restored == from_original


_PLAN: TypeAdapter[Any] = TypeAdapter(Plan)


def model_dump(session: PlanSession) -> dict[str, Any]:
    """What snapshot() gave when it dumped the typed models: the output it must keep."""
    plans = [
        _PLAN.dump_python(p, mode="json", by_alias=True, exclude_none=True)
        for p in session.plans.values()
    ]
    return {"version": 2, "next_number": session.snapshot()["next_number"], "plans": plans}


def scribble(value: Any) -> None:
    """Change every dict and list inside `value`, as a careless caller might."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            scribble(item)
        value.append("scribbled")


async def test_a_snapshot_is_the_callers_to_change() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    meta = {"source": {"tool": "x", "tags": ["a"]}}
    entries = [{"content": "a", "_meta": meta}, {"content": "b"}]
    await session.call("create_plan", {"type": "items", "id": "p", "entries": entries})
    markdown = {"type": "markdown", "id": "m", "content": "x", "_meta": meta}
    plans = [*session.snapshot()["plans"], markdown]
    session.restore({"version": 1, "next_number": 3, "plans": plans})
    before = session.snapshot()
    held = dict(session.plans)
    taken = session.snapshot()
    scribble(taken)
    taken["plans"].clear()
    assert session.snapshot() == before
    assert session.plans == held
    await session.replay()
    assert send.updates[-2]["plan"]["entries"][0]["_meta"] == meta  # the client's view too
    assert send.updates[-1]["plan"]["_meta"] == meta


async def test_a_legacy_update_is_the_callers_to_change() -> None:
    # legacy_update() once handed out the session's own entries: changing them changed the
    # plans, every later snapshot and the next notification.
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    meta = {"source": {"tool": "x", "tags": ["a"]}}
    entries: list[dict[str, Any]] = [
        {"content": "a", "_meta": meta},
        {"content": "b", "status": "cancelled"},
    ]
    await session.call("create_plan", {"type": "items", "id": "p", "entries": entries})
    before, update = session.snapshot(), session.legacy_update()
    scribble(update)
    assert session.legacy_update() != update
    assert session.snapshot() == before
    await session.replay()
    assert send.updates[-1]["plan"]["entries"][0] == {
        **entries[0],
        "priority": "medium",
        "status": "pending",
    }


def seen(form: str, updates: list[dict[str, Any]]) -> Any:
    """What a client that just loaded the session shows after these updates."""
    view = ClientView(form).apply_all(updates)
    return view.shown_entries() if form == "legacy" else view.shown()


# ---- regressions of the round trip ------------------------------------------------------------


async def test_a_plan_grown_past_the_call_size_limit_restores() -> None:
    # The snapshot writes every step in full, and `changes` grow a plan in small calls: the
    # limit on one call's size is no limit on what a plan may hold.
    session = PlanSession(RecordingSend(), session_id="s")
    assert (await session.call("create_plan", {"type": "items", "entries": ["x"] * 200})).ok
    for first in range(1, 201, 20):
        changes = [{"step": n, "content": "漢" * 1000} for n in range(first, first + 20)]
        assert (await session.call("update_plan", {"id": "plan-1", "changes": changes})).ok
    restored = PlanSession(RecordingSend(), session_id="s")
    assert restored.restore(session.snapshot()) == []
    assert restored.plans == session.plans

    tight = Limits(max_arguments_bytes=120)
    small = PlanSession(RecordingSend(), session_id="s", limits=tight)
    compact = '{"type":"items","entries":[{"content":"aaaaaaaaaa"},{"content":"bbbbbbbbbb"}]}'
    assert (await small.call("create_plan", compact)).ok
    again = PlanSession(RecordingSend(), session_id="s", limits=tight)
    assert again.restore(small.snapshot()) == []


@pytest.mark.parametrize("depth", [190, 196, 197, 198, 199, 230])
async def test_a_step_sent_as_json_text_restores_at_any_depth(depth: int) -> None:
    # A step sent as JSON text is parsed from its own root: the repaired call is held to the
    # depth of one JSON text, as its snapshot will be when restored.
    meta: Any = 1
    for _ in range(depth):
        meta = [meta]
    step = {"content": "x", "_meta": {"m": meta}}
    as_text = PlanSession(RecordingSend(), session_id="s")
    as_object = PlanSession(RecordingSend(), session_id="s")
    text_result = await as_text.call(
        "create_plan", {"type": "items", "id": "a", "entries": [json.dumps(step)]}
    )
    object_result = await as_object.call(
        "create_plan", {"type": "items", "id": "a", "entries": [step]}
    )
    for session, result in ((as_text, text_result), (as_object, object_result)):
        if result.ok:
            assert PlanSession(RecordingSend(), session_id="s").restore(session.snapshot()) == []
    if object_result.ok:  # what is accepted as an object is accepted as text
        assert as_text.plans == as_object.plans


async def test_plan_meta_that_is_not_utf8_is_refused_by_restore() -> None:
    snapshot = snapshot_of(
        {"type": "markdown", "id": "a", "content": "x", "_meta": {"k": "\udfff"}}
    )
    session = PlanSession(RecordingSend(), session_id="s")
    with pytest.raises(ConfigurationError, match="_meta is not strict JSON"):
        session.restore(snapshot)
    assert session.plans == {}


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_only_the_integer_version_is_a_snapshot(version: Any) -> None:
    snapshot = {"version": version, "next_number": 1, "plans": []}
    with pytest.raises(ConfigurationError, match="unsupported snapshot version"):
        PlanSession(RecordingSend(), session_id="s").restore(snapshot, partial=True)


async def test_a_counter_no_session_could_reach_is_refused() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    for huge in (10**5000, 10**70):
        with pytest.raises(ConfigurationError, match="next_number"):
            session.restore({"version": 1, "next_number": huge, "plans": []})
    assert (await session.call("create_plan", {"type": "markdown", "content": "x"})).ok
    json.dumps(session.snapshot())


def test_the_all_or_nothing_error_is_bounded_and_counts_the_rest() -> None:
    bad = [{"type": "markdown", "id": f"p{n}", "content": ""} for n in range(5000)]
    session = PlanSession(RecordingSend(), session_id="s")
    with pytest.raises(ConfigurationError) as raised:
        session.restore({"version": 1, "next_number": 1, "plans": bad})
    message = str(raised.value)
    assert len(message) < 4000
    assert message.endswith("... and 4990 more plans left out")
    skipped = session.restore({"version": 1, "next_number": 1, "plans": bad}, partial=True)
    assert len(skipped) == 5000


def test_a_plan_of_too_many_steps_is_refused_before_its_steps_are_read() -> None:
    entries: list[Any] = [object()] * 1_000_000  # validating these would fail one by one
    plan = {"type": "items", "id": "big", "entries": entries}
    session = PlanSession(RecordingSend(), session_id="s")
    [skipped] = session.restore({"version": 1, "next_number": 1, "plans": [plan]}, partial=True)
    assert skipped.id == "big"
    assert "1000000 steps; at most 200" in skipped.reason


def test_a_skipped_plan_names_the_field_that_failed() -> None:
    plan = {"type": "items", "id": "a", "entries": [{"content": "ok"}, {"status": "done"}]}
    session = PlanSession(RecordingSend(), session_id="s")
    [skipped] = session.restore({"version": 1, "next_number": 1, "plans": [plan]}, partial=True)
    assert skipped.reason.startswith("items.entries[1].content: Field required")


async def test_empty_lists_restore_where_list_dialects_are_on() -> None:
    """A session with list dialects holds empty lists (its own, and one written apart with
    `call(list_id=...)`); its snapshot restores them. Ours alone never holds one: skipped."""
    lists = PlanSession(RecordingSend(), session_id="s", dialects=["claude_todos"])
    assert (await lists.call("TodoWrite", {"todos": []})).ok
    assert (await lists.call("TodoWrite", {"todos": []}, list_id="sub-1")).ok
    snapshot = lists.snapshot()
    again = PlanSession(RecordingSend(), session_id="s", dialects=["claude_todos"])
    assert again.restore(snapshot) == []
    assert again.snapshot() == snapshot
    ours = PlanSession(RecordingSend(), session_id="s")
    skipped = ours.restore(snapshot, partial=True)
    assert [s.id for s in skipped] == ["main", "sub-1"]
    assert dict(ours.plans) == {}
