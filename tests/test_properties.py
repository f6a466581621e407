"""Arbitrary model input: a ToolResult always, compliant notifications, all-or-nothing calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spec_shapes import check

from llm_plans import PlanSession, ToolResult
from llm_plans.testing import RecordingSend

# Under the "ci" profile (500 examples) 4 tests x 2,500: the 10,000 examples CI runs; a local
# run under the quick "dev" profile does 5 x its count.
EXAMPLES = settings(
    max_examples=5 * settings().max_examples,  # the loaded profile's
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LOOP = asyncio.new_event_loop()
FORMS: dict[str, dict[str, Any] | None] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": None,
}
SEED = [
    ("create_plan", {"type": "items", "id": "work", "entries": ["Read", "Write", "Test"]}),
    ("create_plan", {"type": "markdown", "id": "notes", "content": "# N\n- [ ] a"}),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
statuses = st.sampled_from(["pending", "in_progress", "completed", "done", "In Progress", "x"])
priorities = st.sampled_from(["high", "medium", "low", "HIGH", None, "urgent"])
entries = st.lists(
    st.fixed_dictionaries(
        {"content": st.text(max_size=30)}, optional={"status": statuses, "priority": priorities}
    ),
    max_size=5,
)
ids = st.sampled_from(["work", "notes", "new", "", "x" * 70, "bad\x00id", None])
plausible = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["items", "markdown", "file", "Items", "x"])},
        optional={
            "id": ids,
            "entries": entries,
            "content": st.text(max_size=40),
            "uri": st.sampled_from(["/tmp/p.md", "file:///x", "http://e", "rel/p.md", "data:x"]),
        },
    ),
    st.fixed_dictionaries(
        {"id": ids},
        optional={
            "changes": st.lists(
                st.fixed_dictionaries(
                    {"step": st.integers(-1, 5)},
                    optional={
                        "status": statuses,
                        "priority": priorities,
                        "content": st.text(max_size=10),
                    },
                ),
                max_size=3,
            ),
            "entries": entries,
            "content": st.text(max_size=20),
            "type": st.sampled_from(["items", "markdown", None]),
        },
    ),
)


def one_field_wrong(value: dict[str, Any], key: str, wrong: Any) -> dict[str, Any]:
    return {**value, key: wrong}


def seeded_snapshot() -> dict[str, Any]:
    session = PlanSession(RecordingSend(), session_id="seed")
    for tool, arguments in SEED:
        assert LOOP.run_until_complete(session.call(tool, arguments)).ok
    return session.snapshot()


SNAPSHOT = seeded_snapshot()


def run(form: str, tool: str, arguments: Any) -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="sess_p", client_capabilities=FORMS[form])
    session.restore(SNAPSHOT)

    async def go() -> ToolResult:
        before = dict(session.plans)
        result = await session.call(tool, arguments)
        if not result.ok:
            assert send.sent == []
            assert dict(session.plans) == before
        else:
            assert len(send.sent) == 1
        return result

    result = LOOP.run_until_complete(go())
    assert isinstance(result, ToolResult)
    assert result.content
    for params in send.sent:
        check(form, params)


tools_ = st.sampled_from(["create_plan", "update_plan", "remove_plan"])
forms = st.sampled_from(sorted(FORMS))


@EXAMPLES
@given(forms, tools_, json_values)
def test_any_json_value(form: str, tool: str, value: Any) -> None:
    run(form, tool, json.dumps(value))


@EXAMPLES
@given(forms, tools_, st.text() | st.binary().map(lambda b: b.decode("latin-1")))
def test_any_text(form: str, tool: str, text: str) -> None:
    run(form, tool, text)


@EXAMPLES
@given(forms, st.sampled_from(["create_plan", "update_plan"]), plausible)
def test_plausible_plans(form: str, tool: str, value: dict[str, Any]) -> None:
    run(form, tool, value)


@EXAMPLES
@given(forms, st.sampled_from(["type", "id", "entries", "content", "uri", "changes"]), json_values)
def test_valid_plan_with_one_field_wrong(form: str, key: str, wrong: Any) -> None:
    valid: dict[str, Any] = {
        "type": "items",
        "id": "fresh",
        "entries": [{"content": "a"}],
        "content": None,
        "uri": None,
    }
    tool = "update_plan" if key == "changes" else "create_plan"
    if tool == "update_plan":
        valid = {"id": "work", "changes": [{"step": 1, "status": "completed"}]}
    run(form, tool, one_field_wrong(valid, key, wrong))
