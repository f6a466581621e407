"""Strict JSON in: whatever the model sends, a call either validates or gets a clear problem."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import TypeAdapter

from llm_plans import CreatePlanArgs, Limits, PlanSession, RemovePlanArgs, UpdatePlanArgs
from llm_plans._arguments import _ADAPTERS, Rejection, parse
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
    caps = {"documents": {"planCapabilities": {}}, "schema": {"plan": {}}, "legacy": None}[form]
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
        parse("create_plan", arguments, limits)
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
    fast = _ADAPTERS[tool].json_schema()  # type: ignore[index]
    public = TypeAdapter(model).json_schema()
    assert list(fast["properties"]) == list(public["properties"])
    assert fast.get("required") == public.get("required")
