"""`PlanToolset` with pydantic-ai's offline models: `TestModel`, and a `FunctionModel` that
does not stream, previews on or off; and the schemas the toolset gives pydantic-ai, which
accept exactly what the `llm_plans.tools` schemas accept."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plan_kinds import items_plan
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from llm_plans import PlanSession, tools
from llm_plans.dialects import _NAMES as DIALECT_NAMES
from llm_plans.dialects import _tools_of as tools_of
from llm_plans.integrations._any_of import without_type_lists
from llm_plans.integrations.pydantic_ai import PlanToolset
from llm_plans.testing import RecordingSend

CREATE = {
    "type": "items",
    "id": None,
    "entries": [
        {"content": "Reproduce", "priority": None, "status": "in_progress"},
        {"content": "Fix", "priority": "high", "status": None},
    ],
    "content": None,
    "uri": None,
}
TOOLS = [(dialect, name) for dialect in DIALECT_NAMES for name in tools_of(dialect)]


def new_session(send: RecordingSend, dialect: str = "llm_plans") -> PlanSession:
    return PlanSession(
        send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0, dialects=dialect
    )


def calls_and_results(messages: list[ModelMessage]) -> tuple[list[str], list[ToolReturnPart]]:
    """The ids of the tool calls the model made, and the tool results it was sent."""
    calls = [
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    ]
    results = [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    return calls, results


# ---- TestModel ------------------------------------------------------------------------------


async def test_model_run_with_previews_gives_each_plan_call_a_result() -> None:
    send = RecordingSend()
    plans = PlanToolset(new_session(send))
    agent = Agent(TestModel(), toolsets=[plans], capabilities=[plans.previews()])
    result = await agent.run("Plan the fix.")
    calls, results = calls_and_results(result.all_messages())
    assert sorted(r.tool_name for r in results) == sorted(tools.NAMES)  # it called each tool
    assert [r.tool_call_id for r in results] == calls
    # TestModel fills every field; llm_plans answers each call (here by rejecting it).
    assert all(r.outcome in ("success", "failed") and r.content for r in results)


@given(
    seed=st.integers(0, 100),
    dialect=st.sampled_from(DIALECT_NAMES),
    some=st.data(),
    previews=st.booleans(),
)
def test_any_test_model_run_completes_with_a_result_per_call(
    seed: int, dialect: str, some: st.DataObject, previews: bool
) -> None:
    names = tuple(tools_of(dialect))
    chosen = some.draw(st.sets(st.sampled_from(names), min_size=1), label="call_tools")
    send = RecordingSend()
    session = new_session(send, dialect)
    plans = PlanToolset(session)
    model = TestModel(seed=seed, call_tools=sorted(chosen))
    agent = Agent(model, toolsets=[plans], capabilities=[plans.previews()] if previews else [])
    result = asyncio.run(agent.run("Plan the fix."))
    calls, results = calls_and_results(result.all_messages())
    assert sorted(r.tool_name for r in results) == sorted(chosen)
    assert [r.tool_call_id for r in results] == calls
    assert all(r.outcome in ("success", "failed") for r in results)
    assert not any(session.is_streaming(call) for call in calls)  # no preview left behind


# ---- a FunctionModel that does not stream ---------------------------------------------------


def creates_then_answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("create_plan", json.dumps(CREATE), "c1")])
    return ModelResponse(parts=[TextPart("Planned.")])


@pytest.mark.parametrize("previews", [True, False])
@pytest.mark.parametrize("overridden", [False, True])
@pytest.mark.parametrize("fallback", [False, True])
async def test_function_model_without_a_stream_function_creates_the_plan(
    previews: bool, overridden: bool, fallback: bool
) -> None:
    send = RecordingSend()
    session = new_session(send)
    plans = PlanToolset(session)
    caps = [plans.previews()] if previews else []
    model: Model = FunctionModel(creates_then_answers)
    if fallback:  # a run streams only if every model it may fall back to can
        model = FallbackModel(model, FunctionModel(creates_then_answers))  # no stream_function
    if overridden:  # pydantic-ai's way to test an agent: the run's model is the one judged
        agent = Agent(TestModel(), toolsets=[plans], capabilities=caps)
        with agent.override(model=model):
            result = await agent.run("Plan the fix.")
    else:
        result = await Agent(model, toolsets=[plans], capabilities=caps).run("Plan the fix.")
    assert result.output == "Planned."
    (plan_result,) = calls_and_results(result.all_messages())[1]
    assert plan_result.outcome == "success"
    assert isinstance(plan_result.content, str)
    assert plan_result.content.startswith('Created plan "plan-1"')
    assert [(e.content, e.status) for e in items_plan(session.plans["plan-1"]).entries] == [
        ("Reproduce", "in_progress"),
        ("Fix", "pending"),
    ]
    # One notification, the whole plan: without a stream there were no previews first.
    assert send.updates == [
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "planId": "plan-1",
                "type": "items",
                "entries": [
                    {"content": "Reproduce", "priority": "medium", "status": "in_progress"},
                    {"content": "Fix", "priority": "high", "status": "pending"},
                ],
            },
        }
    ]


# ---- the schemas pydantic-ai is given --------------------------------------------------------


def test_no_schema_given_to_pydantic_ai_has_a_type_list() -> None:
    def type_lists(node: Any) -> int:
        if isinstance(node, dict):
            here = isinstance(node.get("type"), list)
            return here + sum(type_lists(v) for v in node.values())
        if isinstance(node, list):
            return sum(type_lists(v) for v in node)
        return 0

    schemas = [tools.schema(n, all_required=True, dialect=d) for d, n in TOOLS]
    assert sum(type_lists(s) for s in schemas) > 0  # there was something to rewrite
    assert sum(type_lists(without_type_lists(s)) for s in schemas) == 0


def test_the_tools_module_keeps_its_type_lists() -> None:
    # The rewriting copies: llm_plans.tools' own definitions stay as every other caller gets them.
    schema = tools.schema("create_plan", all_required=True)
    before = json.dumps(schema)
    without_type_lists(schema)
    assert json.dumps(schema) == before
    assert schema["properties"]["id"] == {"type": ["string", "null"]}


SAMPLES = [
    (CREATE, True),
    ({**CREATE, "entries": None, "type": "markdown", "content": "# Notes"}, True),
    ({**CREATE, "id": 7}, False),
    ({**CREATE, "entries": "[]"}, False),
    ({**CREATE, "entries": [{"content": "A", "priority": "urgent", "status": None}]}, False),
    ({**CREATE, "entries": [{"content": "A", "priority": None, "status": "done"}]}, False),
    ({**CREATE, "entries": [{"content": None, "priority": None, "status": None}]}, False),
    ({k: v for k, v in CREATE.items() if k != "uri"}, False),
    ({**CREATE, "extra": 1}, False),
    ({**CREATE, "type": None}, False),  # create_plan's type is not nullable
]


@pytest.mark.parametrize(("arguments", "valid"), SAMPLES)
def test_samples_are_judged_alike(arguments: dict[str, Any], valid: bool) -> None:
    ours = tools.schema("create_plan", all_required=True)
    assert jsonschema.Draft202012Validator(ours).is_valid(arguments) is valid
    assert jsonschema.Draft202012Validator(without_type_lists(ours)).is_valid(arguments) is valid


def test_update_samples_are_judged_alike() -> None:
    ours = tools.schema("update_plan", all_required=True)
    base = {"id": "plan-1", "type": None, "entries": None, "content": None, "uri": None}
    change = {"step": 1, "status": "completed", "priority": None, "content": None}
    samples = [
        ({**base, "changes": [change]}, True),
        ({**base, "changes": None, "type": "markdown", "content": "x"}, True),
        ({**base, "changes": [{**change, "step": 0}]}, False),
        ({**base, "changes": [{**change, "step": "1"}]}, False),
        ({**base, "changes": [{**change, "status": None, "content": 3}]}, False),
        ({**base, "changes": [{**change, "priority": True}]}, False),
    ]
    for converted in (ours, without_type_lists(ours)):
        validator = jsonschema.Draft202012Validator(converted)
        assert [validator.is_valid(a) for a, _ in samples] == [v for _, v in samples]


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.floats(-2, 2) | st.text(max_size=3),
    _containers,
    max_leaves=6,
)


def near(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values for `schema`: mostly fitting it, sometimes any JSON at any depth, keys now and
    then missing or extra; so both valid and invalid arguments come up often."""
    return st.integers(0, 7).flatmap(lambda n: JSON if n == 0 else _fitting(schema))


def _fitting(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    types = schema["type"]  # every schema here says its type
    kinds = types if isinstance(types, list) else [types]
    return st.one_of([_of_type(schema, kind) for kind in kinds])


def _of_type(schema: dict[str, Any], kind: str) -> st.SearchStrategy[Any]:
    if kind == "object":
        fields = {k: near(v) for k, v in schema.get("properties", {}).items()}
        return st.tuples(st.fixed_dictionaries(fields), st.integers(0, 9)).map(_maybe_broken)
    if kind == "array":
        return st.lists(near(schema["items"]), max_size=3)
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "string": st.text(max_size=4),
        "integer": st.integers(-1, 4),
        "boolean": st.booleans(),
        "null": st.none(),
    }
    return strategies[kind]


def _maybe_broken(drawn: tuple[dict[str, Any], int]) -> dict[str, Any]:
    value, how = drawn
    if how == 0 and value:
        value.pop(next(iter(value)))
    elif how == 1:
        value["extra"] = 1
    return value


@pytest.mark.parametrize(("dialect", "name"), TOOLS)
@given(data=st.data())
def test_the_rewritten_schema_accepts_exactly_what_ours_accepts(
    dialect: str, name: str, data: st.DataObject
) -> None:
    ours = tools.schema(name, all_required=True, dialect=dialect)
    theirs = without_type_lists(ours)
    jsonschema.Draft202012Validator.check_schema(theirs)
    arguments = data.draw(near(ours))
    assert jsonschema.Draft202012Validator(theirs).is_valid(arguments) == (
        jsonschema.Draft202012Validator(ours).is_valid(arguments)
    )
