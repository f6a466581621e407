"""Strict JSON in: whatever the model sends, a call either validates or gets a clear problem."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from registry import OUR_TOOLS

from llm_plans import (
    CreatePlanArgs,
    Limits,
    PlanSession,
    RemovePlanArgs,
    UpdatePlanArgs,
)
from llm_plans._core import arguments
from llm_plans._core.arguments import ADAPTERS, Rejection, parse
from llm_plans._core.tool import PlanTool
from llm_plans.dialects.llm_plans import CREATE_PLAN, UPDATE_PLAN
from llm_plans.testing import RecordingSend

DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (DEEP, "nested too deeply"),
        ('{"type": "items", "entries": "' + "[" * 50_000 + '"}', "entries: sent"),
        ({"type": "items", "entries": json.dumps([[[["a"]]]] * 2)}, "entries[0]"),
        ('{"type": "items", "entries": [{"content": "a", "_meta": {"x": NaN}}]}', "NaN"),
        ('{"type": "items", "entries": [{"content": "a", "_meta": {"x": -Infinity}}]}', "NaN"),
        ({"type": "items", "entries": [{"content": "a", "_meta": {"x": math.nan}}]}, "NaN"),
        ({"type": "items", "entries": [{"content": "a", "_meta": {"x": math.inf}}]}, "NaN"),
        # jiter reads 1e999 as Infinity even in strict mode: the core refuses it in _meta
        ('{"type": "items", "entries": [{"content": "a", "_meta": {"x": [1e999]}}]}', "NaN"),
        ('{"type": "items", "entries": [{"content": "a", "_meta": {"x": -1e400}}]}', "NaN"),
        ('{"type": "markdown", "content": "# \\udfff"}', "lone surrogate"),
        ('{"type": "markdown", "id": "\\ud800", "content": "x"}', "lone surrogate"),
        ({"type": "markdown", "content": "# \udfff"}, "invalid Unicode"),
        ('{"type": "markdown", "id": "\udfff", "content": "x"}', "invalid Unicode"),
        (b'{"type": "markdown", "content": "\xff"}', "not UTF-8"),
        ('{"type": "items", "id": "a", "entries": ["x"], "id": "b"}', 'key "id" appears twice'),
        ({"type": "items", "entries": [{1, 2}]}, "not JSON"),
    ],
)
async def test_hostile_arguments_are_rejected_clearly(
    arguments: Any, message: str, form: str
) -> None:
    send = RecordingSend()
    caps: dict[str, Any] | None = {
        "documents": {"planCapabilities": {}},
        "schema": {"plan": {}},
        "legacy": None,
    }[form]
    session = PlanSession(send, session_id="s", client_capabilities=caps)
    await session.call("create_plan", {"type": "markdown", "id": "keep", "content": "- [ ] a"})
    before, sent = session.snapshot(), len(send.sent)
    result = await session.call("create_plan", arguments)
    assert not result.ok
    assert message in result.content
    assert session.snapshot() == before
    assert len(send.sent) == sent
    # and the session keeps working
    assert (await session.call("remove_plan", {"id": "keep"})).ok
    for params in send.sent:
        json.dumps(params, allow_nan=False).encode("utf-8")


async def test_handle_and_finish_reject_deep_nesting_too() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    call = {"type": "function", "id": "c", "function": {"name": "create_plan", "arguments": DEEP}}
    result = await session.handle(call)
    assert result is not None
    assert "nested too deeply" in result["content"]
    for start in range(0, len(DEEP), 4096):
        await session.feed("c", "create_plan", DEEP[start : start + 4096])
    finished = await session.finish("c")
    assert not finished.ok
    assert "nested too deeply" in finished.content


@pytest.mark.parametrize(
    "arguments",
    [
        '{"type": "markdown", "content": "' + "é" * 600 + '"}',
        {"type": "markdown", "content": "é" * 600},
    ],
)
def test_the_size_limit_counts_bytes_for_text_and_dicts(arguments: Any) -> None:
    limits = Limits(max_arguments_bytes=1000)  # 600 characters, 1,200 bytes
    with pytest.raises(Rejection) as caught:
        parse(CREATE_PLAN, arguments, limits)
    assert "at most 1000 are accepted" in caught.value.problems[0].message


@pytest.mark.parametrize(
    ("model", "tool"),
    [
        (CreatePlanArgs, "create_plan"),
        (UpdatePlanArgs, "update_plan"),
        (RemovePlanArgs, "remove_plan"),
    ],
)
def test_the_hot_path_validators_mirror_the_public_models(model: Any, tool: str) -> None:
    fast = ADAPTERS[tool].json_schema()  # type: ignore[index]
    public = TypeAdapter(model).json_schema()
    assert list(fast["properties"]) == list(public["properties"])
    assert fast.get("required") == public.get("required")


# ---- the one-pass parse answers as the strict parse does -------------------------------------

_COLONY = st.sampled_from(["a", ":", "a:b", " :: ", "x\u003ay", "é:", "\u2028:"])


@st.composite
def _json_text(draw: st.DrawFn, value: Any) -> str:
    """`value` as JSON text in any layout, some keys said twice (with any value), some keys
    no field has (in any object), some colons in strings written as escapes."""
    if isinstance(value, dict):
        parts = []
        for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2]))):
            # a key the object does not have, with or without colons of its own
            extra = draw(st.sampled_from(["extra", "a:b", "", "Content", "entries2", ":"]))
            item = draw(st.sampled_from(["null", "1", '":"', '"x"', "{}", '{"k":":"}', "[1,{}]"]))
            parts.append(f"{json.dumps(extra)}:{item}")
        for key, item in draw(st.permutations(list(value.items()))):
            colon = draw(st.sampled_from([":", ": ", " : ", "\n:", "\t:\r\n"]))
            parts.append(f"{json.dumps(key)}{colon}{draw(_json_text(item))}")
            for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2]))):
                # said again, before or after: the last one said is the one kept
                again = draw(st.one_of(_COLONY, st.none(), st.just({"k": ":"}), st.just(1)))
                parts.insert(
                    draw(st.integers(0, len(parts))), f"{json.dumps(key)}:{json.dumps(again)}"
                )
        return "{" + draw(st.sampled_from([",", ", ", ",\n "])).join(parts) + "}"
    if isinstance(value, list):
        return "[" + ",".join(draw(_json_text(item)) for item in value) + "]"
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if isinstance(value, str) and ":" in text and draw(st.booleans()):
        text = text.replace(":", "\\u003a", 1)
    return text


def _one_pass_inputs() -> st.SearchStrategy[tuple[str, Any]]:
    step = st.fixed_dictionaries(
        {"content": st.one_of(strategies.step_text, _COLONY)},
        optional={
            "priority": st.sampled_from([None, "high", "medium", "low", "High"]),
            "status": st.sampled_from([None, "pending", "in_progress", "done", "cancelled"]),
            "_meta": st.sampled_from([None, {}, {"a": ":"}, {"n": 1.5}]),
        },
    )
    change = st.fixed_dictionaries(
        {"step": st.sampled_from([1, 2, 0, "2", 1.0, True, 10**20, -0, 1.5, None])},
        optional={"status": st.sampled_from([None, "completed"]), "content": st.none() | _COLONY},
    )
    update = st.fixed_dictionaries(
        {"id": st.sampled_from(["p", "p:1", "a:b:c", ":"])},
        optional={
            "type": st.sampled_from([None, "items", "markdown"]),
            "entries": st.none() | st.lists(step, max_size=4),
            "content": st.none() | _COLONY,
            "uri": st.none(),
            "changes": st.none() | st.lists(change, max_size=3),
        },
    )
    create = st.fixed_dictionaries(
        {"type": st.sampled_from(["items", "markdown", "file"])},
        optional={
            "id": st.none() | st.sampled_from(["p", "p:1"]),
            "entries": st.lists(step, max_size=4),
            "content": _COLONY,
        },
    )
    remove = st.fixed_dictionaries({"id": _COLONY})
    calls = st.one_of(
        update.map(lambda a: ("update_plan", a)),
        create.map(lambda a: ("create_plan", a)),
        remove.map(lambda a: ("remove_plan", a)),
    )
    return calls.flatmap(
        lambda call: st.tuples(st.just(call[0]), _json_text(call[1]), st.booleans()).map(
            lambda sent: (sent[0], sent[1].encode() if sent[2] else sent[1])
        )
    )


_WIRE_ORDER = ("content", "priority", "status", "_meta")


def _strict(tool: PlanTool) -> PlanTool:
    """`tool` without its quick parse: every call takes the strict path."""
    return dataclasses.replace(tool, quick_parse=None)


def _answer(tool: PlanTool, text: str | bytes, limits: Limits) -> Any:
    try:
        return ("ok", parse(tool, text, limits))
    except Rejection as rejection:
        return ("rejected", [(p.path, p.message, p.sent) for p in rejection.problems])


@settings(max_examples=1000)
@given(_one_pass_inputs(), st.sampled_from([1, 8, 40, 1000]))
def test_the_one_pass_parse_answers_as_the_strict_parse_does(
    call: tuple[str, Any], chars: int
) -> None:
    tool, text = OUR_TOOLS[call[0]], call[1]
    limits = Limits(max_entry_chars=chars)
    fast = _answer(tool, text, limits)
    strict = _answer(_strict(tool), text, limits)
    assert fast == strict
    if fast[0] == "ok":
        # What the one pass vouches for: every entry's text within the limit.
        args, bounded = arguments.parse_bounded(tool, text, limits)
        if bounded:
            assert all(len(entry["content"]) <= chars for entry in args.get("entries") or ())
        assert json.dumps(fast[1]) == json.dumps(strict[1])
        # Whatever order the keys came in, an entry's are in the wire's order: the builder
        # keeps validated entries as they are.
        for entry in fast[1].get("entries") or ():
            assert list(entry) == [k for k in _WIRE_ORDER if k in entry]


def test_a_length_limit_pydantic_cannot_hold_leaves_the_texts_to_the_builder() -> None:
    """`max_entry_chars` as a float (`math.inf` for no limit, a number read from a config
    file), negative, or past the longest text there can be: the one pass answers as the
    strict path does and never raises; only a whole number vouches for the texts."""
    text = json.dumps({"id": "p", "entries": [{"content": "Read the parser", "status": None}]})
    for chars in (math.inf, 1e4, 10.0, -1, 10**30, 2**64):
        limits = Limits(max_entry_chars=chars)  # type: ignore[arg-type]
        fast = _answer(UPDATE_PLAN, text, limits)
        assert fast == _answer(_strict(UPDATE_PLAN), text, limits)
        bounded = arguments.parse_bounded(UPDATE_PLAN, text, limits)[1]
        assert bounded is (type(chars) is int and chars >= 0)


def test_the_one_pass_parse_is_taken_for_the_usual_call() -> None:
    text = json.dumps({"id": "p:1", "entries": [{"content": "Run: tests", "status": None}]})
    assert arguments.one_pass("update_plan", text.encode(), 10) is not None
    assert arguments.parse_bounded(UPDATE_PLAN, text, Limits(max_entry_chars=10))[1]
    # A text past the limit is left to the strict path, which the limits then refuse.
    assert arguments.one_pass("update_plan", text.encode(), 9) is None
    assert not arguments.parse_bounded(UPDATE_PLAN, text, Limits(max_entry_chars=9))[1]
    twice = '{"id": "p", "id": "q:", "entries": null}'
    assert arguments.one_pass("update_plan", twice.encode(), 1000) is None
    # It ignores a key no field has, and its count sends the call to the strict path.
    for extra in ('{"id": "p", "x": 1}', '{"id": "p", "entries": [{"content": "a", "x": 1}]}'):
        assert arguments.one_pass("update_plan", extra.encode(), 1000) is None
        with pytest.raises(Rejection):
            parse(UPDATE_PLAN, extra, Limits())
