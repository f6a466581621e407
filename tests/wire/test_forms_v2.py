"""ACP's stable forms and v2 on the wire, and `cancelled` / `activeForm` in every form.

Every notification is checked against its form's schema (`spec_shapes.check`: the stable
schemas and the TS SDK's unstable ones plan definition by plan definition, the spec
documents' shapes), and what a client reads back is compared with an oracle written here, apart from
the code under test: v2 carries statuses natively; v1 shows a cancelled step as completed with
its content prefixed `Cancelled: `; every form shows a step in progress by its non-empty
`_meta.llm_plans.activeForm`; `_meta` and priorities go out unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from node_tools import validate_published
from plan_kinds import items_plan
from spec_shapes import check

from llm_plans import ConfigurationError, Limits, PlanSession, WireForm
from llm_plans._core.plans import Stored, extra_of
from llm_plans._wire.flatten import Flattener, read_plan_file
from llm_plans._wire.forms import shown_entries
from llm_plans._wire.outbox import Outbox
from llm_plans.testing import RecordingSend

MAX_ENTRY_CHARS = Limits().max_entry_chars  # every session here has the default

FORMS = ("documents", "schema", "legacy", "v2")
V1 = ("documents", "schema", "legacy")
STATUSES = ("pending", "in_progress", "completed", "cancelled")
PRIORITIES = ("high", "medium", "low")
ID_KEY = {"documents": "id", "schema": "planId", "v2": "planId"}
STABLE = ("schema", "v2")  # the forms of ACP's stable plan operations


def session(form: str, send: RecordingSend, **kwargs: Any) -> PlanSession:
    return PlanSession(send, session_id="sess_v2", form=form, **kwargs)


def client_entries(form: str, update: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries a client of `form` reads from one notification."""
    if form == "legacy":
        assert update["sessionUpdate"] == "plan"
        return list(update["entries"])
    assert update["sessionUpdate"] == "plan_update"
    return list(update["plan"]["entries"])


def oracle(form: str, entry: dict[str, Any]) -> dict[str, Any]:
    """How a client of `form` must show one stored entry (the rules, written independently)."""
    content, status = entry["content"], entry["status"]
    meta = entry.get("_meta")
    active = meta.get("llm_plans", {}).get("activeForm") if isinstance(meta, dict) else None
    if status == "in_progress" and isinstance(active, str) and active.strip():
        content = active
    if status == "cancelled" and form in V1:
        prefix = "" if content.startswith("Cancelled: ") else "Cancelled: "
        content, status = prefix + content, "completed"
        if len(content) > MAX_ENTRY_CHARS:  # the prefix counts toward the entry limit
            content = content[: MAX_ENTRY_CHARS - 3] + "..."
    shown = {"content": content, "priority": entry["priority"], "status": status}
    if meta is not None:
        shown["_meta"] = meta
    return shown


# ---- every plan kind, status and removal in the v2 forms ----------------------------------

ALL_STATUSES: list[dict[str, Any]] = [
    {"content": "Reproduce the bug", "priority": "high", "status": "completed"},
    {
        "content": "Run the tests",
        "priority": "medium",
        "status": "in_progress",
        "_meta": {"llm_plans": {"activeForm": "Running the tests", "taskId": "2"}},
    },
    {"content": "Try the old parser", "priority": "low", "status": "cancelled"},
    {"content": "Write the changelog", "priority": "low", "status": "pending"},
]
STEPS_MD = "# Approach\n- [x] Read the parser\n- [ ] Patch it\n"


async def run_every_kind(form: str, tmp_path: Path) -> list[dict[str, Any]]:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("- [ ] one\n- [x] two\n")
    send = RecordingSend()
    s = session(form, send, workspace=tmp_path)
    # The first plan keeps what only the session writes (`_meta["llm_plans"]`): a snapshot
    # brings it, shown by `replay()`, as no model's call may set it.
    main = {"type": "items", "id": "main", "entries": ALL_STATUSES}
    assert s.restore({"version": 1, "next_number": 1, "last_task": 2, "plans": [main]}) == []
    await s.replay()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_plan", {"type": "markdown", "id": "notes", "content": STEPS_MD}),
        ("create_plan", {"type": "file", "id": "design", "uri": str(plan_file)}),
        ("update_plan", {"id": "main", "changes": [{"step": 4, "status": "cancelled"}]}),
        ("remove_plan", {"id": "notes"}),
        ("remove_plan", {"id": "design"}),
        ("remove_plan", {"id": "main"}),
    ]
    for tool, arguments in calls:
        result = await s.call(tool, arguments)
        assert result.ok, result.content
    for params in send.sent:
        check(form, params)
    return send.updates


async def test_items_plans_carry_cancelled_natively_in_v2(tmp_path: Path) -> None:
    form = "v2"
    updates = await run_every_kind(form, tmp_path)
    first = updates[0]["plan"]
    assert first["type"] == "items"
    assert first["planId"] == "main"
    assert first["entries"] == [oracle(form, e) for e in ALL_STATUSES]
    assert [e["status"] for e in first["entries"]] == [e["status"] for e in ALL_STATUSES]
    assert first["entries"][1]["content"] == "Running the tests"
    assert updates[3]["plan"]["entries"][3]["status"] == "cancelled"


@pytest.mark.parametrize("form", STABLE)
async def test_the_stable_forms_send_markdown_and_file_plans_as_markdown(
    form: str, tmp_path: Path
) -> None:
    """A markdown plan as it is; a file plan as a markdown plan of its file's whole text, with
    the file's path; a removal as `plan_removed`."""
    updates = await run_every_kind(form, tmp_path)
    notes, design = updates[1]["plan"], updates[2]["plan"]
    assert notes == {"type": "markdown", "planId": "notes", "content": STEPS_MD}
    assert design == {
        "type": "markdown",
        "planId": "design",
        "content": "- [ ] one\n- [x] two\n",
        "path": str(tmp_path / "plan.md"),
    }
    assert updates[4:] == [
        {"sessionUpdate": "plan_removed", "planId": plan_id}
        for plan_id in ("notes", "design", "main")
    ]


@pytest.mark.parametrize("form", STABLE)
async def test_plan_meta_round_trips(form: str) -> None:
    # A plan's own `_meta` comes from restored snapshots and the dialects, not from our tools.
    send = RecordingSend()
    box = Outbox(send, "s", WireForm(form), flattener())
    meta = {"llm_plans": {"dialect": "claude_tasks"}, "vendor": {"n": 1}}
    entry = {"content": "a", "priority": "high", "status": "cancelled", "_meta": {"x": [1]}}
    plans = {
        "items": Stored("items", "items", (entry,), meta=meta),
        "markdown": Stored("markdown", "markdown", content="- [ ] a", meta=meta),
        "file": Stored("file", "file", uri="file:///nowhere/p.md", meta=meta),
    }
    assert await box.show(plans, list(plans)) is None
    for params in send.sent:
        check(form, params)
        assert params["update"]["plan"]["_meta"] == meta
    assert send.updates[0]["plan"]["entries"] == [oracle(form, entry)]


@pytest.mark.parametrize("form", STABLE)
async def test_a_file_edited_on_disk_reaches_the_client_with_the_next_change(
    form: str, tmp_path: Path
) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("- [ ] one\n")
    send = RecordingSend()
    s = session(form, send, workspace=tmp_path)
    assert (await s.call("create_plan", {"type": "file", "id": "f", "uri": str(plan_file)})).ok
    plan_file.write_text("- [x] one\n- [ ] two\n")
    assert (await s.call("create_plan", {"type": "items", "id": "i", "entries": ["x"]})).ok
    by_plan = {u["plan"]["planId"]: u["plan"] for u in send.updates}
    assert by_plan["f"]["content"] == "- [x] one\n- [ ] two\n"
    for params in send.sent:
        check(form, params)
    sent = len(send.sent)
    assert (await s.call("update_plan", {"id": "i", "entries": ["y"]})).ok
    assert len(send.sent) == sent + 1, "an unchanged file is not sent again"


async def test_a_streamed_markdown_plan_reaches_v2_as_markdown() -> None:
    send = RecordingSend()
    s = session("v2", send, stream_interval=0)
    content = "# Title\n\nSome prose\n- [ ] first\n- [ ] second\n"
    text = json.dumps({"type": "markdown", "id": "m", "content": content})
    for n in range(0, len(text), 5):
        await s.feed("call-1", "create_plan", text[n : n + 5])
    assert (await s.finish("call-1")).ok
    for params in send.sent:
        check("v2", params)
        assert content.startswith(params["update"]["plan"]["content"])
    assert send.updates[-1]["plan"] == {"type": "markdown", "planId": "m", "content": content}


async def test_an_aborted_streamed_create_is_taken_back_in_v2() -> None:
    send = RecordingSend()
    s = session("v2", send, stream_interval=0)
    steps = [{"content": "Reproduce the bug"}, {"content": "Fix it"}, {"content": "Test it"}]
    text = json.dumps({"type": "items", "id": "p", "entries": steps})
    for n in range(0, len(text) - 20, 7):  # the last step never completes
        await s.feed("c", "create_plan", text[n : n + 7])
    assert send.updates, "the complete steps were previewed"
    assert await s.abort("c")
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "p"}
    for params in send.sent:
        check("v2", params)


async def test_replay_sends_every_plan_in_v2() -> None:
    send = RecordingSend()
    s = session("v2", send)
    assert (await s.call("create_plan", {"type": "markdown", "id": "m", "content": "- [ ] a"})).ok
    assert (await s.call("create_plan", {"type": "items", "id": "i", "entries": ["b"]})).ok
    sent = len(send.sent)
    await s.replay()
    assert [u["plan"]["planId"] for u in send.updates[sent:]] == ["m", "i"]


# ---- cancelled and activeForm in every form, for any entries --------------------------------

ACTIVE_FORMS = st.one_of(
    st.text(max_size=30), st.just(""), st.just("   "), st.integers(), st.none()
)
META = st.one_of(
    st.none(),
    st.fixed_dictionaries({"llm_plans": st.fixed_dictionaries({"activeForm": ACTIVE_FORMS})}),
    st.fixed_dictionaries(
        {"llm_plans": st.fixed_dictionaries({"status": st.just("blocked")}), "other": st.booleans()}
    ),
)


@st.composite
def entries(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 8))):
        entry: dict[str, Any] = {
            "content": draw(
                st.text(st.characters(codec="utf-8"), min_size=1, max_size=30).filter(str.strip)
            ),
            "priority": draw(st.sampled_from(PRIORITIES)),
            "status": draw(st.sampled_from(STATUSES)),
        }
        meta = draw(META)
        if meta is not None:
            entry["_meta"] = meta
        out.append(entry)
    return out


@pytest.mark.parametrize("form", FORMS)
@given(steps=entries())
async def test_every_form_shows_cancelled_and_active_form_by_its_rules(
    form: str, steps: list[dict[str, Any]]
) -> None:
    send = RecordingSend()
    s = session(form, send)
    # What only the session writes (`_meta["llm_plans"]`) comes from a snapshot, which holds
    # it to its field's rules: an activeForm that is no text is refused there.
    snapshot = {
        "version": 1,
        "next_number": 1,
        "plans": [{"type": "items", "id": "p", "entries": steps}],
    }
    if any(not isinstance(extra_of(e).get("activeForm", ""), str) for e in steps):
        with pytest.raises(ConfigurationError, match=r"_meta\.llm_plans\.activeForm"):
            s.restore(snapshot)
        assert (s.plans, send.sent) == ({}, [])
        return
    assert s.restore(snapshot) == []
    await s.replay()
    stored = [
        {"content": e.content, "priority": e.priority, "status": e.status}
        | ({} if e.meta is None else {"_meta": e.meta})
        for e in items_plan(s.plans["p"]).entries
    ]
    (params,) = send.sent
    check(form, params)
    if form in ("schema", "legacy"):
        validate_published(params)  # v1's published JSON Schema, whose statuses are closed
    assert client_entries(form, params["update"]) == [oracle(form, e) for e in stored]
    if form in V1:
        assert all(e["status"] != "cancelled" for e in client_entries(form, params["update"]))


def stored_plan(steps: list[dict[str, Any]]) -> Stored:
    return Stored("items", "p", tuple(steps))


@given(steps=entries())
def test_one_function_decides_for_plan_update_and_the_legacy_list(
    steps: list[dict[str, Any]],
) -> None:
    plan = stored_plan(steps)
    flat = flattener().entries([plan])
    assert flat == list(shown_entries(plan, WireForm.SCHEMA))
    assert flat == list(shown_entries(plan, WireForm.DOCUMENTS))


def flattener() -> Flattener:
    return Flattener(Limits(), None, read_plan_file)


@given(
    steps=entries().map(
        lambda es: [
            {k: v for k, v in e.items() if k != "_meta"}
            | {"status": "completed" if e["status"] == "cancelled" else e["status"]}
            for e in es
        ]
    )
)
def test_plans_with_nothing_to_render_go_out_as_stored(steps: list[dict[str, Any]]) -> None:
    """The hot path: no cancelled step, no activeForm, no per-entry rebuild in any form."""
    plan = stored_plan(steps)
    for form in WireForm:
        assert shown_entries(plan, form) is plan.entries


def test_cancelled_needs_no_rebuild_in_v2() -> None:
    plan = stored_plan([{"content": "a", "priority": "low", "status": "cancelled"}])
    assert shown_entries(plan, WireForm.V2) is plan.entries
    assert shown_entries(plan, WireForm.LEGACY) == (
        {"content": "Cancelled: a", "priority": "low", "status": "completed"},
    )


def test_a_rendered_legacy_plan_is_cached_until_it_changes() -> None:
    flat = flattener()
    plan = stored_plan([{"content": "a", "priority": "low", "status": "cancelled"}])
    first = flat.entries([plan])
    assert flat.steps(plan) is flat.steps(plan)
    assert flat.entries([plan]) == first
    changed = stored_plan([{"content": "a", "priority": "low", "status": "pending"}])
    assert flat.entries([changed]) == [{"content": "a", "priority": "low", "status": "pending"}]


async def test_a_rejected_call_sends_nothing_in_v2_even_after_a_file_edit(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text("- [ ] one\n")
    send = RecordingSend()
    s = session("v2", send, workspace=tmp_path)
    assert (await s.call("create_plan", {"type": "file", "id": "f", "uri": str(plan_file)})).ok
    plan_file.write_text("- [x] one\n")
    sent = len(send.sent)
    assert not (await s.call("update_plan", {"id": "nope", "entries": ["x"]})).ok
    assert len(send.sent) == sent


async def test_a_cancelled_step_that_already_says_so_is_not_prefixed_twice() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", form="schema")
    entry = {"content": "Cancelled: flaky test", "status": "cancelled"}
    assert (await session.call("create_plan", {"type": "items", "entries": [entry]})).ok
    [shown] = send.updates[-1]["plan"]["entries"]
    assert (shown["content"], shown["status"]) == ("Cancelled: flaky test", "completed")


@pytest.mark.parametrize("form", ["documents", "schema", "legacy"])
@given(
    limit=st.integers(20, 60),
    content=st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=60
    ).filter(str.strip),
)
async def test_the_cancelled_prefix_counts_toward_the_entry_limit(
    form: str, limit: int, content: str
) -> None:
    """A v1 client's cancelled step, prefix and text together, is at most max_entry_chars,
    and reads back as cancelled."""
    send = RecordingSend()
    s = session(form, send, limits=Limits(max_entry_chars=limit))
    content = content[:limit].strip() or "x"
    step = {"content": content, "status": "cancelled"}
    result = await s.call("create_plan", {"type": "items", "id": "p", "entries": [step]})
    assert result.ok, result.content
    [shown] = client_entries(form, send.updates[-1])
    assert len(shown["content"]) <= limit
    assert shown["content"].startswith("Cancelled: ")
    assert shown["status"] == "completed"
