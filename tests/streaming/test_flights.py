"""Streamed calls end exactly as the same call sent whole would, whatever the key order."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from client_view import ClientView, check_compliant, expected
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from registry import OUR_TOOLS
from strategies import PRIORITIES, STATUSES, step_text

from llm_plans import Limits, PlanSession, WireForm
from llm_plans.testing import RecordingSend

SCHEMA: dict[str, Any] = {"plan": {}}


def session_of(send: RecordingSend, **kwargs: Any) -> PlanSession:
    kwargs.setdefault("client_capabilities", SCHEMA)
    return PlanSession(send, session_id="s", stream_interval=0, **kwargs)


async def stream(
    session: PlanSession, call_id: str, tool: str, text: str | bytes, size: int = 1
) -> None:
    for start in range(0, len(text), size):
        await session.feed(call_id, tool, text[start : start + size])


def counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """The calls the session makes to its core function `name` from now on, one item each."""
    import llm_plans._session

    calls: list[int] = []
    real = getattr(llm_plans._session, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(llm_plans._session, name, counting)
    return calls


@pytest.fixture
def worked_out(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The previews the session works out (its core's `preview` calls), one item each."""
    return counted(monkeypatch, "preview")


def client_matches(session: PlanSession, send: RecordingSend) -> None:
    for params in send.sent:
        check_compliant(session.form, params)
    view = ClientView(session.form).apply_all(send.updates)
    assert view.shown() == expected(session.plans)


async def test_an_id_that_arrives_after_the_entries_moves_the_preview() -> None:
    send = RecordingSend()
    session = session_of(send)
    text = '{"type": "items", "entries": [{"content": "a"}, {"content": "b"}], "id": "x"}'
    await stream(session, "c", "create_plan", text)
    first = {"content": "a", "priority": "medium", "status": "pending"}
    preview = {"type": "items", "planId": "plan-1", "entries": [first]}
    assert {"sessionUpdate": "plan_update", "plan": preview} in send.updates
    result = await session.finish("c")
    assert result.ok
    assert result.plan_id == "x"
    client_matches(session, send)
    assert session.snapshot()["next_number"] == 1  # plan-1 was only ever a preview


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "items", "id": "a", "entries": [{"content": "a"}], "id": "b"}',
        '{"id": "old", "entries": [{"content": "new"}], "id": "other"}',
    ],
)
async def test_a_duplicated_id_key_is_rejected_and_its_previews_taken_back(text: str) -> None:
    send = RecordingSend()
    session = session_of(send)
    for plan_id in ("old", "other"):
        await session.call("create_plan", {"type": "items", "id": plan_id, "entries": ["keep"]})
    before = session.snapshot()
    tool = "create_plan" if text.startswith('{"type"') else "update_plan"
    await stream(session, "c", tool, text)
    result = await session.finish("c")
    assert not result.ok
    assert 'key "id" appears twice' in result.content
    assert session.snapshot() == before
    client_matches(session, send)


async def test_a_plain_call_may_take_an_id_a_stream_only_previewed() -> None:
    send = RecordingSend()
    session = session_of(send)
    text = json.dumps({"type": "items", "entries": [{"content": "a"}, {"content": "b"}]})
    await stream(session, "c", "create_plan", text[: text.index("}") + 1])
    assert send.updates[-1]["plan"]["planId"] == "plan-1"
    taken = await session.call("create_plan", {"type": "items", "id": "plan-1", "entries": ["x"]})
    assert taken.ok
    generated = await session.call("create_plan", {"type": "items", "entries": ["y"]})
    assert generated.plan_id == "plan-2"
    await stream(session, "c", "create_plan", text[text.index("}") + 1 :])
    result = await session.finish("c")
    assert result.ok, result.content
    assert result.plan_id == "plan-3"
    client_matches(session, send)


async def test_a_rejected_stream_consumes_no_generated_number() -> None:
    send = RecordingSend()
    session = session_of(send)
    await stream(
        session,
        "c",
        "create_plan",
        '{"type": "items", "entries": [{"content": "a"}, {"content": 7}]}',
    )
    assert not (await session.finish("c")).ok
    created = await session.call("create_plan", {"type": "items", "entries": ["x"]})
    assert created.plan_id == "plan-1"
    client_matches(session, send)


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "markdown", "content": "' + "é" * 600 + '"}',
        b'{"type": "markdown", "content": "\xff\xfe"}',
        '{"type": "markdown", "content": "\\udfff"}',
        '{"type": "items", "entries": [{"content": "a", "_meta": {"x": NaN}}]}',
    ],
)
async def test_streamed_and_whole_calls_get_the_same_answer(text: str | bytes) -> None:
    limits = Limits(max_arguments_bytes=1000)
    whole = await session_of(RecordingSend(), limits=limits).call("create_plan", text)
    send = RecordingSend()
    session = session_of(send, limits=limits)
    await stream(session, "c", "create_plan", text, size=7)
    streamed = await session.finish("c")
    assert (streamed.ok, streamed.content) == (whole.ok, whole.content)
    assert not streamed.ok
    client_matches(session, send)


async def test_each_step_shows_when_its_closing_brace_arrives_in_spaced_json() -> None:
    send = RecordingSend()
    session = session_of(send)
    steps = [{"content": f"Step {n}", "status": "pending"} for n in range(5)]
    text = json.dumps({"type": "items", "entries": steps}, indent=2)
    shown = []
    for index, char in enumerate(text):
        await session.feed("c", "create_plan", char)
        if char == "}" and index < len(text) - 1:
            shown.append(len(send.updates[-1]["plan"]["entries"]))
    assert shown == [1, 2, 3, 4, 5]
    await session.finish("c")
    assert len(send.updates) == 5  # the last preview was the plan: not sent twice


async def test_steps_sent_as_text_show_one_by_one_as_their_commas_arrive(
    worked_out: list[int],
) -> None:
    """A step sent as text (which the core repairs) ends at the comma after it, not at a
    brace; a comma inside a step's text asks for no preview."""
    send = RecordingSend()
    session = session_of(send)
    steps = [f"Step {n}, then the next" for n in range(5)]
    text = json.dumps({"type": "items", "entries": steps})
    await stream(session, "c", "create_plan", text)
    assert [len(u["plan"]["entries"]) for u in send.updates] == [1, 2, 3, 4, 5]
    assert len(worked_out) == 6  # one a step, and one as the arguments close
    assert (await session.finish("c")).ok
    assert [e["content"] for e in send.updates[-1]["plan"]["entries"]] == steps
    client_matches(session, send)


@given(
    steps=st.lists(step_text, min_size=2, max_size=12),
    size=st.integers(1, 9),
    indent=st.none() | st.just(2),
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
async def test_previews_of_steps_sent_as_text_are_the_plan_so_far(
    steps: list[str], size: int, indent: int | None
) -> None:
    """Whatever the fragments: a step sent as text shows before the list closes, and every
    preview shows the steps so far, as the finished call makes them."""
    send = RecordingSend()
    session = session_of(send)
    text = json.dumps({"type": "items", "entries": steps}, indent=indent)
    closing = text.rindex("]")
    await stream(session, "c", "create_plan", text[:closing], size=size)
    before_the_end = len(send.updates)
    await stream(session, "c", "create_plan", text[closing:], size=size)
    assert (await session.finish("c")).ok
    final = send.updates[-1]["plan"]["entries"]
    assert [e["content"] for e in final] == steps
    assert before_the_end >= 1
    for update in send.updates:
        entries = update["plan"]["entries"]
        assert entries == final[: len(entries)]
    client_matches(session, send)


async def test_a_dialects_list_looks_at_no_comma(worked_out: list[int]) -> None:
    """A dialect's list items are objects (text items are refused): commas in its stream ask
    for no preview, so items sent as text cost what they did before."""
    send = RecordingSend()
    session = session_of(send, dialects=["claude_todos"])
    text = json.dumps({"todos": [f"Todo {n}, then more" for n in range(5)]})
    await stream(session, "c", "TodoWrite", text)
    assert len(worked_out) <= 2  # at the list's `]` and the arguments' `}`
    assert not (await session.finish("c")).ok


def test_an_empty_bytes_fragment_keeps_a_streams_text_as_text() -> None:
    """Provider adapters open a call with `b""`: the text after it is still taken on the
    fast path, and the finished call gets it as the text it was."""
    from llm_plans._streaming.flights import ArgumentText

    text = ArgumentText.for_tool(OUR_TOOLS["create_plan"], limit=1000)
    assert not text.add(b"")
    assert text.add('{"type":"items","entries":[{"content":"a"}')
    assert text.arguments() == ('{"type":"items","entries":[{"content":"a"}', None)


async def test_a_legacy_markdown_preview_waits_for_list_items() -> None:
    send = RecordingSend()
    session = session_of(send, client_capabilities=None)
    content = "# Release\n\nSome words first.\n\n- [ ] Tag\n- [x] Build\n"
    await stream(session, "c", "create_plan", json.dumps({"type": "markdown", "content": content}))
    contents = [[e["content"] for e in u["entries"]] for u in send.updates]
    assert contents[0] == ["Tag"]  # never the heading alone
    assert "Release" not in {c for entries in contents for c in entries}
    await session.finish("c")
    assert send.updates[-1]["entries"][-1] == {
        "content": "Build",
        "priority": "medium",
        "status": "completed",
    }


async def test_a_markdown_preamble_does_not_spend_the_previews_its_checklist_needs(
    worked_out: list[int],
) -> None:
    # The legacy list shows a markdown plan's list items only: lines of prose before them
    # change nothing the client sees, so they are neither worked out nor counted.
    send = RecordingSend()
    session = session_of(send, form="legacy")
    prose = "".join(f"Context line {n}, which says why the work matters.\n" for n in range(300))
    items = "".join(f"- [ ] Step {n}\n" for n in range(30))
    text = json.dumps({"type": "markdown", "content": f"# Plan\n\n{prose}\n{items}"})
    await stream(session, "c", "create_plan", text, size=4)
    shown = [len(u["plan"]["entries"] if "plan" in u else u["entries"]) for u in send.updates]
    assert len(shown) >= 5
    assert shown == sorted(shown)
    assert len(worked_out) <= len(shown) + 2
    assert (await session.finish("c")).ok
    last = send.updates[-1]
    steps = last["plan"]["entries"] if "plan" in last else last["entries"]
    assert [e["content"] for e in steps] == [f"Step {n}" for n in range(30)]


async def test_previews_of_a_long_plan_stay_within_the_default_budget() -> None:
    send = RecordingSend()
    session = session_of(send)
    content = "".join(f'- [ ] line {n} with "quotes" and a \\ backslash\n' for n in range(2000))
    text = json.dumps({"type": "markdown", "content": content})
    await stream(session, "c", "create_plan", text, size=8)
    assert (await session.finish("c")).ok
    sizes = [len(json.dumps(params)) for params in send.sent]
    assert sum(sizes[:-1]) <= 8 * sizes[-1]
    assert len(sizes) > 5  # still shown as it grows
    client_matches(session, send)


def _plan_call(kind: str, texts: list[str], statuses: list[str]) -> tuple[str, dict[str, Any]]:
    if kind == "todos":
        todos = [
            {"content": t, "status": s if s != "cancelled" else "pending", "activeForm": t[::-1]}
            for t, s in zip(texts, statuses, strict=True)
        ]
        return "TodoWrite", {"todos": todos}
    if kind == "markdown":
        args: dict[str, Any] = {
            "type": "markdown",
            "content": "\n".join(f"- {t}" for t in texts),
        }
    else:
        args = {
            "type": "items",
            "entries": [
                {"content": t, "priority": PRIORITIES[k % 3], "status": s}
                for k, (t, s) in enumerate(zip(texts, statuses, strict=True))
            ],
        }
    if kind == "replacement":  # of the other plan's steps
        return "update_plan", {"id": "other", **args}
    if kind == "late id":  # the id after the steps: the previews move to it
        args["id"] = "late"
    return "create_plan", args


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["items", "markdown", "todos", "replacement", "late id"]),
    steps=st.lists(st.tuples(step_text, st.sampled_from(STATUSES)), min_size=1, max_size=40),
    form=st.sampled_from([form for form in WireForm if form is not WireForm.V2_UNSTABLE]),
    other=st.integers(0, 30),
    session_id=st.sampled_from(["s", "sess_" + "7f3a" * 8, "séance", "x" * 300]),
    indent=st.sampled_from([None, 2]),
    ascii_only=st.booleans(),
    size=st.integers(1, 16),
    budget=st.sampled_from([1, 1.5, 2, 4, 8, 16]),
)
# A legacy label under the generated id, which an id sent late replaces with a shorter one.
@example(
    kind="late id",
    steps=[("Read the parser", "pending")],
    form=WireForm.LEGACY,
    other=1,
    session_id="s",
    indent=None,
    ascii_only=False,
    size=1,
    budget=1,
)
async def test_previews_stay_within_the_budget_times_the_final_notification(
    kind: str,
    steps: list[tuple[str, str]],
    form: WireForm,
    other: int,
    session_id: str,
    indent: int | None,
    ascii_only: bool,
    size: int,
    budget: float,
) -> None:
    # A preview at every chance (no interval): the budget alone holds them back. Measured as
    # the ACP SDK's transports write them (compact JSON, non-ASCII escaped), whatever the
    # plan, the form and the other plans every legacy update carries.
    send = RecordingSend()
    session = PlanSession(
        send,
        session_id=session_id,
        form=form,
        stream_interval=0,
        preview_budget=budget,
        dialects=("llm_plans", "claude_todos"),
    )
    if other or kind == "replacement":
        entries = [{"content": f"Other step {n}"} for n in range(max(other, 1))]
        created = {"type": "items", "id": "other", "entries": entries}
        assert (await session.call("create_plan", created)).ok
    tool, args = _plan_call(kind, [t for t, _ in steps], [s for _, s in steps])
    text = json.dumps(args, indent=indent, ensure_ascii=ascii_only)
    before = len(send.sent)
    await stream(session, "c", tool, text, size=size)
    previews = send.sent[before:]
    assert (await session.finish("c")).ok
    final = send.sent[before + len(previews) :]  # (with a moved id, the old one's removal)
    if not final:  # the last preview showed it all already
        previews, final = previews[:-1], previews[-1:]
    compact = functools.partial(json.dumps, separators=(",", ":"))
    size = sum(len(compact(p)) for p in final)
    assert sum(len(compact(p)) for p in previews) <= budget * size
    for params in send.sent:
        check_compliant(session.form, params)


async def test_a_changes_stream_keeps_showing_steps_once_they_start_to_grow() -> None:
    # Statuses first (the plan hardly grows), then new texts (it grows fourfold): the pace
    # the previews learnt from the first part must not keep the second part from showing.
    send = RecordingSend()
    session = session_of(send)
    entries = [{"content": f"Step {n}"} for n in range(60)]
    await session.call("create_plan", {"type": "items", "id": "p", "entries": entries})
    changes: list[dict[str, Any]] = [{"step": n, "status": "completed"} for n in range(1, 11)]
    changes += [{"step": n, "content": f"Rewritten: step {n} " * 6} for n in range(11, 61)]
    text = json.dumps({"id": "p", "changes": changes})
    middle = text.index('"step": 11')
    await stream(session, "c", "update_plan", text[:middle], size=4)
    before = len(send.sent)
    await stream(session, "c", "update_plan", text[middle:], size=4)
    rewritten = [
        sum(e["content"].startswith("Rewritten") for e in params["update"]["plan"]["entries"])
        for params in send.sent[before:]
    ]
    assert len(rewritten) >= 3
    assert rewritten == sorted(rewritten)
    assert rewritten[0] > 0
    assert (await session.finish("c")).ok
    client_matches(session, send)


@pytest.mark.parametrize("kind", ["items", "markdown"])
async def test_the_previews_worked_out_stay_few_for_thousands_of_tiny_steps(
    kind: str, worked_out: list[int]
) -> None:
    # Tiny steps make each notification weigh several times its text (in the legacy form
    # most): previews held back must not make the work grow with the steps.
    send = RecordingSend()
    session = session_of(send, form="legacy", limits=Limits(max_entries=10_000))
    if kind == "items":
        args: dict[str, Any] = {
            "type": "items",
            "entries": [{"content": f"s{k}"} for k in range(5000)],
        }
    else:
        args = {"type": "markdown", "content": "\n".join(f"- s{k}" for k in range(5000))}
    await stream(session, "c", "create_plan", json.dumps(args), size=1)
    assert (await session.finish("c")).ok
    assert len(send.sent) > 20
    assert len(worked_out) < 150
    assert len(send.sent[-1]["update"]["entries"]) == 5000  # the legacy list, every step


async def test_abort_takes_back_every_preview_and_frees_the_id() -> None:
    send = RecordingSend()
    session = session_of(send)
    await session.call("create_plan", {"type": "items", "id": "p", "entries": ["old"]})
    await stream(session, "u", "update_plan", '{"id": "p", "entries": [{"content": "new"}, {"c')
    await stream(session, "c", "create_plan", '{"type": "items", "entries": [{"content": "a"}, {"c')
    assert sorted(await session.abort_all()) == ["c", "u"]
    client_matches(session, send)
    assert (
        await session.call("create_plan", {"type": "items", "entries": ["x"]})
    ).plan_id == "plan-1"


async def test_a_plan_a_call_created_is_shown_rather_than_a_stream_preview_of_its_id() -> None:
    send = RecordingSend()
    session = session_of(send)
    await stream(session, "c", "create_plan", '{"type": "items", "entries": [{"content": "a"}, {')
    assert send.updates[-1]["plan"]["planId"] == "plan-1"
    await session.call("create_plan", {"type": "markdown", "id": "plan-1", "content": "mine"})
    assert send.updates[-1] == {
        "sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "plan-1", "content": "mine"},
    }
    await session.abort("c")
    client_matches(session, send)


async def test_removing_a_plan_an_update_is_streaming_to_removes_it_at_once() -> None:
    send = RecordingSend()
    session = session_of(send)
    await session.call("create_plan", {"type": "items", "id": "p", "entries": ["old"]})
    await stream(session, "u", "update_plan", '{"id": "p", "entries": [{"content": "new"}, {')
    await session.call("remove_plan", {"id": "p"})
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "p"}
    assert not (await session.finish("u")).ok
    client_matches(session, send)


@pytest.mark.parametrize(
    "text",
    [
        # the first step is invalid, so the core refuses every preview after it
        '{"type":"items","entries":[{"content":"a","status":5}' + ',{"content":"b"}' * 5000 + "]}",
        # more steps than the limit: previews past step 200 are refused
        json.dumps({"type": "items", "entries": [{"content": "b"}] * 5000}),
    ],
)
async def test_previews_the_core_refuses_still_count_against_the_budget(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = counted(monkeypatch, "apply")
    session = session_of(RecordingSend())
    await stream(session, "c", "create_plan", text, size=4)
    assert not (await session.finish("c")).ok
    assert len(attempts) < 100  # not one per step: the work stays linear in the text


@pytest.mark.parametrize("cut", [1, 2, 3])
async def test_text_after_bytes_cut_inside_a_character_is_never_previewed(cut: int) -> None:
    # The bytes so far end inside "€" (3 bytes); text after them makes the call not UTF-8,
    # which the core refuses: no step of it may reach the client, and finish says why.
    head = '{"type": "items", "entries": [{"content": "a€'.encode()
    head = head[: len(head) - 3 + cut] if cut < 3 else head
    send = RecordingSend()
    session = PlanSession(send, session_id="s", stream_interval=0, preview_budget=1e9)
    await session.feed("c", "create_plan", head)
    await session.feed("c", "create_plan", '"}, {"content": "b"}, {"content": "c"}]}')
    result = await session.finish("c")
    if cut < 3:
        assert not result.ok
        assert "not UTF-8" in result.content
        assert send.sent == []
    else:  # whole characters: text after them is fine
        assert result.ok
        assert [e["content"] for e in send.updates[-1]["entries"]] == ["a€", "b", "c"]
