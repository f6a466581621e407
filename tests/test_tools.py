"""The tool definitions: one source of truth, each provider's strict rules, the SDKs' types,
their size, and that the argument models accept whatever the schemas let a model send."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import dialect_calls
import jsonschema
import pytest
from anthropic.types import ToolParam
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter
from registry import DIALECTS, NAMES, OUR_TOOLS, OURS

from llm_plans import ConfigurationError, tools

OPENAI_STRICT_REJECTS = {
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "default",
    "title",
    "minLength",
    "maxLength",
    "$ref",  # accepted alone, but never next to other keys; we inline instead
}
ANTHROPIC_STRICT_REJECTS = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "multipleOf",
    "pattern",
    "oneOf",
    "not",
}
# Anthropic's structured outputs refuse a request whose strict schemas together have more than
# 16 parameters with union types (type arrays or anyOf) or more than 24 optional parameters.
ANTHROPIC_MAX_UNIONS = 16
ANTHROPIC_MAX_OPTIONAL = 24
MAX_DEFINITION_BYTES = 3_000  # issue 13: every format's three tools, compact JSON

FORMATS: dict[str, Callable[[], list[Any]]] = {
    "openai_chat": tools.openai_chat,
    "openai_responses": tools.openai_responses,
    "anthropic": tools.anthropic,
    "anthropic_strict": lambda: tools.anthropic(strict=True),
}

# Every dialect, those registered after this file was written included: read at import.
DIALECT_FORMATS: dict[str, Any] = {
    "openai_chat": lambda d: tools.openai_chat(dialect=d),
    "openai_chat_loose": lambda d: tools.openai_chat(strict=False, dialect=d),
    "openai_responses": lambda d: tools.openai_responses(dialect=d),
    "anthropic": lambda d: tools.anthropic(dialect=d),
    "anthropic_strict": lambda d: tools.anthropic(strict=True, dialect=d),
}


def schemas_of(fmt: str, dialect: str) -> list[dict[str, Any]]:
    listed = DIALECT_FORMATS[fmt](dialect)
    return [
        t["function"]["parameters"]
        if "function" in t
        else t.get("parameters", t.get("input_schema"))
        for t in listed
    ]


def walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [n for item in node for n in walk(item)]
    if not isinstance(node, dict):
        return []
    found = [node]
    for key, value in node.items():
        if key == "properties":
            found += [n for v in value.values() for n in walk(v)]
        else:
            found += walk(value)
    return found


def keywords(node: dict[str, Any]) -> set[str]:
    return set(node) - {"properties"}


def openai_strict(schema: dict[str, Any]) -> None:
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & set(schema)
    for node in walk(schema):
        assert not keywords(node) & OPENAI_STRICT_REJECTS, node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


def anthropic_strict(tool: dict[str, Any]) -> None:
    assert tool["strict"] is True
    for node in walk(tool["input_schema"]):
        assert not keywords(node) & ANTHROPIC_STRICT_REJECTS, node
        assert node.get("minItems", 0) <= 1, node  # it takes 0 or 1 only
        if node.get("type") == "object":
            assert node["additionalProperties"] is False


@pytest.mark.parametrize(
    "schema",
    [t["function"]["parameters"] for t in tools.openai_chat()]
    + [t["parameters"] for t in tools.openai_responses()],
)
def test_openai_strict_rules(schema: dict[str, Any]) -> None:
    openai_strict(schema)


@pytest.mark.parametrize("tool", tools.anthropic(strict=True))
def test_anthropic_strict_rules(tool: dict[str, Any]) -> None:
    anthropic_strict(tool)


@pytest.mark.parametrize("dialect", NAMES)
def test_every_dialect_is_strict_valid_in_every_strict_format(dialect: str) -> None:
    chat = tools.openai_chat(dialect=dialect)
    responses = tools.openai_responses(dialect=dialect)
    assert chat
    assert len(chat) == len(responses)
    for listed in chat:
        assert listed["function"]["strict"] is True
        openai_strict(dict(listed["function"]["parameters"]))
    for each in responses:
        assert each["strict"] is True
        parameters = each["parameters"]
        assert parameters is not None
        openai_strict(dict(parameters))
    for tool in tools.anthropic(strict=True, dialect=dialect):
        anthropic_strict(dict(tool))
    schemas = [t["input_schema"] for t in tools.anthropic(strict=True, dialect=dialect)]
    nodes = [n for s in schemas for n in walk(dict(s))]
    unions = [n for n in nodes if isinstance(n.get("type"), list) or "anyOf" in n]
    optional = [
        name
        for n in nodes
        if n.get("type") == "object"
        for name in n["properties"]
        if name not in n.get("required", [])
    ]
    assert len(unions) <= ANTHROPIC_MAX_UNIONS
    assert len(optional) <= ANTHROPIC_MAX_OPTIONAL


@pytest.mark.parametrize("dialect", NAMES)
@pytest.mark.parametrize("fmt", sorted(DIALECT_FORMATS))
def test_every_dialect_in_every_format(fmt: str, dialect: str) -> None:
    listed = DIALECT_FORMATS[fmt](dialect)
    expected = list(tools.NAMES) if dialect == OURS else [t.name for t in DIALECTS[dialect].tools]
    assert [t.get("function", t)["name"] for t in listed] == expected
    for tool, name in zip(listed, expected, strict=True):
        assert tool.get("function", tool)["description"] == tools.description(name, dialect=dialect)
    for schema in schemas_of(fmt, dialect):
        jsonschema.Draft202012Validator.check_schema(schema)
        for node in walk(schema):
            assert "anyOf" not in node, node  # nullable fields are type arrays, as ours
            assert not {"title", "default", "description", "$ref", "$defs"} & keywords(node)
            if node.get("type") == "object":
                assert node["additionalProperties"] is False
    compact = json.dumps(listed, separators=(",", ":"))
    assert len(compact) <= MAX_DEFINITION_BYTES
    kinds = {
        "openai_chat": ChatCompletionFunctionToolParam,
        "openai_chat_loose": ChatCompletionFunctionToolParam,
        "openai_responses": FunctionToolParam,
        "anthropic": ToolParam,
        "anthropic_strict": ToolParam,
    }
    TypeAdapter(list[kinds[fmt]]).validate_python(listed)  # type: ignore[valid-type]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_another_dialect_is_its_definition_cleaned_as_ours(dialect: str) -> None:
    for tool in DIALECTS[dialect].tools:
        properties = tool.definition.model_json_schema().get("properties", {})
        for strict in (True, False):
            schema = tools.schema(tool.name, all_required=strict, dialect=dialect)
            assert list(schema["properties"]) == list(properties)
            required = tool.definition.model_json_schema().get("required", [])
            assert schema.get("required", []) == (list(properties) if strict else required)
        assert tools.description(tool.name, dialect=dialect) == tool.description


def test_the_default_dialect_is_ours() -> None:
    assert tools.openai_chat() == tools.openai_chat(dialect="llm_plans")
    assert tools.anthropic(strict=True) == tools.anthropic(strict=True, dialect="llm_plans")
    assert tools.system_prompt() == tools.system_prompt(dialect="llm_plans")
    assert tools.schema("update_plan") == tools.schema("update_plan", dialect="llm_plans")


@pytest.mark.parametrize(
    "call",
    [
        lambda: tools.openai_chat(dialect="todo"),
        lambda: tools.openai_responses(dialect="Claude_Todos"),
        lambda: tools.anthropic(dialect=""),
        lambda: tools.system_prompt(dialect="prompts"),
        lambda: tools.schema("create_plan", dialect="nope"),
        lambda: tools.description("create_plan", dialect="../system"),
    ],
)
def test_an_unknown_dialect_is_a_configuration_error_naming_the_dialects(call: Any) -> None:
    with pytest.raises(ConfigurationError) as error:
        call()
    assert all(name in str(error.value) for name in NAMES)


@pytest.mark.parametrize("dialect", [["claude_todos"], None, 1, ("llm_plans",)])
def test_a_dialect_is_one_name(dialect: Any) -> None:
    with pytest.raises(ConfigurationError, match="one dialect's name"):
        tools.openai_chat(dialect=dialect)
    with pytest.raises(ConfigurationError, match="one dialect's name"):
        tools.schema("create_plan", dialect=dialect)


def test_a_tool_of_another_dialect_is_named_with_its_dialect() -> None:
    with pytest.raises(ConfigurationError) as error:
        tools.schema("TodoWrite")
    assert str(error.value) == (
        "dialect 'llm_plans' has no tool named 'TodoWrite' (its tools: create_plan, "
        "update_plan, remove_plan); 'TodoWrite' is a tool of dialect='claude_todos'"
    )
    with pytest.raises(ConfigurationError, match="has no tool named 'create_plan'"):
        tools.description("create_plan", dialect="claude_todos")
    with pytest.raises(ConfigurationError, match="has no tool named"):
        tools.schema(["create_plan"])  # type: ignore[arg-type]


def test_anthropic_strict_stays_within_the_request_limits() -> None:
    schemas = [t["input_schema"] for t in tools.anthropic(strict=True)]
    nodes = [n for s in schemas for n in walk(s)]
    unions = [n for n in nodes if isinstance(n.get("type"), list) or "anyOf" in n]
    optional = [
        name
        for n in nodes
        if n.get("type") == "object"
        for name in n["properties"]
        if name not in n.get("required", [])
    ]
    assert len(unions) <= ANTHROPIC_MAX_UNIONS
    assert len(optional) <= ANTHROPIC_MAX_OPTIONAL


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_nullable_fields_are_type_arrays_with_null_in_their_enum(fmt: str) -> None:
    for tool in FORMATS[fmt]():
        params = tool.get("function", tool)
        schema = params.get("parameters") or params["input_schema"]
        for node in walk(schema):
            assert "anyOf" not in node, node
            if isinstance(node.get("type"), list):
                assert node["type"][-1] == "null"
                if "enum" in node:
                    assert node["enum"][-1] is None


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_definitions_fit_the_byte_budget(fmt: str) -> None:
    compact = json.dumps(FORMATS[fmt](), separators=(",", ":"))
    assert len(compact) <= MAX_DEFINITION_BYTES


def test_schemas_are_valid_json_schema() -> None:
    for name in tools.NAMES:
        for strict in (True, False):
            jsonschema.Draft202012Validator.check_schema(tools.schema(name, all_required=strict))


def test_strict_is_always_sent_explicitly() -> None:
    assert {t["function"]["strict"] for t in tools.openai_chat()} == {True}
    assert {t["function"]["strict"] for t in tools.openai_chat(strict=False)} == {False}
    assert {t["strict"] for t in tools.openai_responses(strict=False)} == {False}
    assert {t["strict"] for t in tools.anthropic()} == {False}


def test_non_strict_keeps_optional_fields_optional() -> None:
    create = tools.openai_chat(strict=False)[0]["function"]["parameters"]
    assert create["required"] == ["type"]
    assert "minimum" in str(tools.anthropic(strict=False)[1]["input_schema"])


def test_lists_match_the_sdk_request_types() -> None:
    TypeAdapter(list[ChatCompletionFunctionToolParam]).validate_python(tools.openai_chat())
    TypeAdapter(list[FunctionToolParam]).validate_python(tools.openai_responses())
    TypeAdapter(list[ToolParam]).validate_python(tools.anthropic())


def test_one_source_of_truth() -> None:
    chat = [t["function"]["parameters"] for t in tools.openai_chat()]
    responses = [t["parameters"] for t in tools.openai_responses()]
    assert chat == responses
    assert [t["name"] for t in tools.anthropic()] == list(tools.NAMES)


def test_openai_definitions() -> None:
    assert tools.openai_chat() == snapshot(
        [
            {
                "type": "function",
                "function": {
                    "name": "create_plan",
                    "description": "Show the user a plan they watch as you work, for tasks of 3+ steps or several requests. `type`: `items`, a checklist in working order (first step `in_progress`; `high` priority on the critical path; null status is pending, null priority medium); `markdown`, notes or options as prose; `file`, a plan in a workspace file (absolute path or `file:` URI). Fill only that type's field, null the others. Null `id` gets `plan-1`, `plan-2`, ...",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string", "enum": ["items", "markdown", "file"]},
                            "id": {"type": ["string", "null"]},
                            "entries": {
                                "type": ["array", "null"],
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "content": {"type": "string"},
                                        "priority": {
                                            "type": ["string", "null"],
                                            "enum": ["high", "medium", "low", None],
                                        },
                                        "status": {
                                            "type": ["string", "null"],
                                            "enum": [
                                                "pending",
                                                "in_progress",
                                                "completed",
                                                "cancelled",
                                                None,
                                            ],
                                        },
                                    },
                                    "required": ["content", "priority", "status"],
                                    "additionalProperties": False,
                                },
                            },
                            "content": {"type": ["string", "null"]},
                            "uri": {"type": ["string", "null"]},
                        },
                        "required": ["type", "id", "entries", "content", "uri"],
                        "additionalProperties": False,
                    },
                    "strict": True,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "update_plan",
                    "description": 'Keep a plan current: send `changes` by step number (1-based, from the last result) as each step starts and ends, e.g. `[{"step":2,"status":"completed"},{"step":3,"status":"in_progress"}]` (null keeps a value). Keep exactly one step `in_progress`. To add, drop or reorder steps, send all `entries` (or new `content` or `uri`); set `type` only to change the plan\'s kind. Null unused fields.',
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "type": {
                                "type": ["string", "null"],
                                "enum": ["items", "markdown", "file", None],
                            },
                            "entries": {
                                "type": ["array", "null"],
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "content": {"type": "string"},
                                        "priority": {
                                            "type": ["string", "null"],
                                            "enum": ["high", "medium", "low", None],
                                        },
                                        "status": {
                                            "type": ["string", "null"],
                                            "enum": [
                                                "pending",
                                                "in_progress",
                                                "completed",
                                                "cancelled",
                                                None,
                                            ],
                                        },
                                    },
                                    "required": ["content", "priority", "status"],
                                    "additionalProperties": False,
                                },
                            },
                            "content": {"type": ["string", "null"]},
                            "uri": {"type": ["string", "null"]},
                            "changes": {
                                "type": ["array", "null"],
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "step": {"type": "integer", "minimum": 1},
                                        "status": {
                                            "type": ["string", "null"],
                                            "enum": [
                                                "pending",
                                                "in_progress",
                                                "completed",
                                                "cancelled",
                                                None,
                                            ],
                                        },
                                        "priority": {
                                            "type": ["string", "null"],
                                            "enum": ["high", "medium", "low", None],
                                        },
                                        "content": {"type": ["string", "null"]},
                                    },
                                    "required": ["step", "status", "priority", "content"],
                                    "additionalProperties": False,
                                },
                            },
                        },
                        "required": ["id", "type", "entries", "content", "uri", "changes"],
                        "additionalProperties": False,
                    },
                    "strict": True,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "remove_plan",
                    "description": "Remove a stale plan: abandoned, replaced, or finished and cluttering the view.",
                    "parameters": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}},
                        "required": ["id"],
                        "additionalProperties": False,
                    },
                    "strict": True,
                },
            },
        ]
    )


def test_openai_responses_definitions_differ_only_in_the_envelope() -> None:
    assert tools.openai_responses() == [
        {"type": "function", **t["function"]} for t in tools.openai_chat()
    ]


def test_anthropic_definitions() -> None:
    assert [t["input_schema"] for t in tools.anthropic()] == snapshot(
        [
            {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["items", "markdown", "file"]},
                    "id": {"type": ["string", "null"]},
                    "entries": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string"},
                                "priority": {
                                    "type": ["string", "null"],
                                    "enum": ["high", "medium", "low", None],
                                },
                                "status": {
                                    "type": ["string", "null"],
                                    "enum": [
                                        "pending",
                                        "in_progress",
                                        "completed",
                                        "cancelled",
                                        None,
                                    ],
                                },
                            },
                            "required": ["content"],
                            "additionalProperties": False,
                        },
                    },
                    "content": {"type": ["string", "null"]},
                    "uri": {"type": ["string", "null"]},
                },
                "required": ["type"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "type": {
                        "type": ["string", "null"],
                        "enum": ["items", "markdown", "file", None],
                    },
                    "entries": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string"},
                                "priority": {
                                    "type": ["string", "null"],
                                    "enum": ["high", "medium", "low", None],
                                },
                                "status": {
                                    "type": ["string", "null"],
                                    "enum": [
                                        "pending",
                                        "in_progress",
                                        "completed",
                                        "cancelled",
                                        None,
                                    ],
                                },
                            },
                            "required": ["content"],
                            "additionalProperties": False,
                        },
                    },
                    "content": {"type": ["string", "null"]},
                    "uri": {"type": ["string", "null"]},
                    "changes": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "properties": {
                                "step": {"type": "integer", "minimum": 1},
                                "status": {
                                    "type": ["string", "null"],
                                    "enum": [
                                        "pending",
                                        "in_progress",
                                        "completed",
                                        "cancelled",
                                        None,
                                    ],
                                },
                                "priority": {
                                    "type": ["string", "null"],
                                    "enum": ["high", "medium", "low", None],
                                },
                                "content": {"type": ["string", "null"]},
                            },
                            "required": ["step"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["id"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
                "additionalProperties": False,
            },
        ]
    )


def test_anthropic_strict_definitions_only_drop_what_strict_mode_refuses() -> None:
    def without_bounds(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: without_bounds(v) for k, v in node.items() if k != "minimum"}
        if isinstance(node, list):
            return [without_bounds(v) for v in node]
        return node

    plain = [t["input_schema"] for t in tools.anthropic()]
    strict = [t["input_schema"] for t in tools.anthropic(strict=True)]
    assert strict == without_bounds(plain)
    assert strict != plain  # the step number's minimum is the one bound it drops


def test_system_prompt() -> None:
    assert tools.system_prompt() == snapshot("""\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- Write an `items` plan for the work itself: short imperative steps in the order you will do them. Use a `markdown` plan for design notes or options you are weighing (with `- [ ]` / `- [x]` for any steps in it), and a `file` plan when the plan already lives in a workspace file. You may keep several plans at once, for example a strategy and a checklist; give them short ids such as `"refactor"` if you like.
- Keep the plan current as you go, not in a batch at the end: when a step is done, mark it `completed` and the next one `in_progress` in the same `update_plan` call, using `changes` with the step numbers from the last plan result. Keep exactly one step in progress while you work.
- Mark a step completed only when it is really done. If it is blocked, keep it in progress and add a step for what unblocks it.
- Remove plans that no longer matter: abandoned, replaced, or finished and cluttering the view. A finished checklist can stay to show what was done.

Read before you write. Keep changes small and explain them briefly when you are done.\
""")


def test_dialect_system_prompts() -> None:
    assert {d: tools.system_prompt(dialect=d) for d in sorted(DIALECTS)} == snapshot(
        {
            "claude_tasks": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan: one `TaskCreate` per step, in the order you will do them (`subject`: "Run the tests", `description`: what done means, `activeForm`: "Running the tests"). Skip it for a single quick change or a question you can simply answer.
- Each result gives the task's number (`Task #3 created successfully: ...`); pass it as `taskId`.
- Keep tasks current as you go, not in a batch at the end: `TaskUpdate` a task to `in_progress` when you start it and to `completed` as soon as it is done. Keep exactly one task in progress while you work.
- Mark a task completed only when it is really done. If it is blocked, keep it in progress and create a task for what unblocks it.
- Set a task that no longer applies to `deleted`. When unsure which tasks exist, ask `TaskList` (or `TaskGet` for one task) rather than guessing numbers.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "claude_todos": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `TodoWrite` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- Write short imperative todos in the order you will do them (`content`: "Run the tests"), each with the wording shown while it runs (`activeForm`: "Running the tests").
- Keep the list current as you go, not in a batch at the end: when a todo is done, send the whole list again with it `completed` and the next one `in_progress`. Keep exactly one todo in progress while you work.
- Mark a todo completed only when it is really done. If it is blocked, keep it in progress and add a todo for what unblocks it.
- Leave out todos that no longer apply when you next send the list.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "codex": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `update_plan` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- `plan` is the whole list every time: short imperative steps in the order you will do them, each with a `status` of `pending`, `in_progress`, `completed` or `cancelled`. Say why in `explanation` when the plan changes course.
- Keep the plan current as you go, not in a batch at the end: when a step is done, send the plan again with it `completed` and the next one `in_progress`. Keep exactly one step in progress while you work.
- Mark a step completed only when it is really done; a step you decide not to do is `cancelled`. If a step is blocked, keep it in progress and add a step for what unblocks it.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "cursor": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `todo_write` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- Write the list with `merge: false`: every todo, in the order you will do them, each with a short `id` you choose ("1", "tests"), an imperative `content` and a `status` of `pending`, `in_progress`, `completed` or `cancelled`.
- Keep it current as you go, not in a batch at the end: with `merge: true`, send only the todos that change, by `id`; when one is done, mark it `completed` and the next one `in_progress` in the same call. Keep exactly one todo in progress while you work.
- Mark a todo completed only when it is really done; one you decide not to do is `cancelled`. If a todo is blocked, keep it in progress and add a todo for what unblocks it.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "opencode": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `todowrite` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- `todos` is the whole list every time: short imperative steps (`content`) in the order you will do them, each with a `status` of `pending`, `in_progress`, `completed` or `cancelled` and a `priority` of `high`, `medium` or `low`.
- Keep the list current as you go, not in a batch at the end: when a todo is done, send the list again with it `completed` and the next one `in_progress`. Keep exactly one todo in progress while you work.
- Mark a todo completed only when it is really done; one you decide not to do is `cancelled`. If a todo is blocked, keep it in progress and add a todo for what unblocks it.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "vibe": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `todo` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- Write the list with `action: "write"`: every todo, in the order you will do them, each with a short `id` you choose ("1", "tests") and keep, an imperative `content`, a `status` of `pending`, `in_progress`, `completed` or `cancelled` and a `priority` of `high`, `medium` or `low`. A write replaces the whole list, so include every todo you want to keep.
- Keep the list current as you go, not in a batch at the end: when a todo is done, write the list again with it `completed` and the next one `in_progress`. Keep exactly one todo in progress while you work. When unsure what the list holds, send `action: "read"`.
- Mark a todo completed only when it is really done; one you decide not to do is `cancelled`. If a todo is blocked, keep it in progress and add a todo for what unblocks it.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
            "write_todos": """\
You are a careful coding agent working in the user's project through the tools you are given.

Planning:
- Show your plan with `write_todos` before you act on any task that takes three or more distinct steps, when the user gives you several things to do, or when they ask for a plan. Skip it for a single quick change or a question you can simply answer.
- `todos` is the whole list every time: short imperative steps (`content`) in the order you will do them, each with a `status` of `pending`, `in_progress`, `completed` or `cancelled`.
- Keep the list current as you go, not in a batch at the end: when a todo is done, send the list again with it `completed` and the next one `in_progress`. Keep exactly one todo in progress while you work.
- Mark a todo completed only when it is really done; one you decide not to do is `cancelled`. If a todo is blocked, keep it in progress and add a todo for what unblocks it.

Read before you write. Keep changes small and explain them briefly when you are done.\
""",
        }
    )


def test_descriptions_come_from_prompts() -> None:
    assert "exactly one step `in_progress`" in tools.description("update_plan")
    assert tools.openai_chat()[0]["function"]["description"] == tools.description("create_plan")


def test_descriptions_still_teach_each_behaviour() -> None:
    create, update, remove = (tools.description(n) for n in tools.NAMES)
    assert "3+ steps" in create  # when to plan
    assert all(f"`{kind}`" in create for kind in ("items", "markdown", "file"))  # which kind
    assert "exactly one step `in_progress`" in update
    assert "as each step starts and ends" in update  # update as work happens
    assert "`changes` by step number" in update
    assert "stale" in remove
    system = tools.system_prompt()
    assert "three or more distinct steps" in system
    assert "Keep exactly one step in progress" in system
    assert "Remove plans that no longer matter" in system


# ---- what each schema lets the model send, the argument models accept ----------------------


def from_schema(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Instances of the JSON-schema subset the tools use (type, type arrays, enum, minimum,
    items, properties with required and additionalProperties false)."""
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if "const" in node:
        return st.just(node["const"])
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    return st.one_of(*(_of_type(kind, node) for kind in kinds))


def _of_type(kind: str, node: dict[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "string":
        # Not blank: the schemas cannot say so (Anthropic's strict mode refuses minLength), and
        # the models reject blank text on purpose, with a result naming the field.
        return st.text(min_size=1).filter(str.strip)
    if kind == "integer":
        return st.integers(min_value=node.get("minimum", 1), max_value=2**31)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        least = node.get("minItems", 0)
        return st.lists(from_schema(node["items"]), min_size=least, max_size=max(4, least))
    assert kind == "object", node
    properties = node.get("properties", {})
    required = node.get("required", [])
    optional = [k for k in properties if k not in required]
    return st.fixed_dictionaries(
        {k: from_schema(properties[k]) for k in required},
        optional={k: from_schema(properties[k]) for k in optional},
    )


@pytest.mark.parametrize("name", tools.NAMES)
@pytest.mark.parametrize("strict", [True, False])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_argument_models_accept_what_the_schema_allows(
    name: str, strict: bool, data: st.DataObject
) -> None:
    schema = tools.schema(name, all_required=strict)
    arguments = data.draw(from_schema(schema))
    jsonschema.validate(arguments, schema)
    OUR_TOOLS[name].definition.model_validate_json(json.dumps(arguments))


def test_the_update_plan_example_is_valid_in_strict_form() -> None:
    example = json.loads(tools.description("update_plan").split("e.g. `")[1].split("`")[0])
    changes = [{"priority": None, "content": None, **change} for change in example]
    arguments: dict[str, Any] = {
        "id": "plan-1",
        "type": None,
        "entries": None,
        "content": None,
        "uri": None,
    }
    arguments["changes"] = changes
    jsonschema.validate(arguments, tools.schema("update_plan", all_required=True))


DIALECT_TOOLS = [(d, t.name) for d in sorted(DIALECTS) for t in DIALECTS[d].tools]


@pytest.mark.parametrize(("dialect", "name"), DIALECT_TOOLS)
@pytest.mark.parametrize("strict", [True, False])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_dialect_takes_whatever_its_schema_allows(
    dialect: str, name: str, strict: bool, data: st.DataObject
) -> None:
    """A model held to the schema (strict mode) never sends what the dialect refuses to
    validate: its adapter (what the session validates with) and its definition accept it."""
    schema = tools.schema(name, all_required=strict, dialect=dialect)
    arguments = data.draw(from_schema(schema))
    jsonschema.validate(arguments, schema)
    (tool,) = (t for t in DIALECTS[dialect].tools if t.name == name)
    tool.adapter.validate_json(json.dumps(arguments))
    tool.definition.model_validate_json(json.dumps(arguments))


@pytest.mark.parametrize("dialect", NAMES)
def test_every_dialect_has_guidance_for_its_own_tools(dialect: str) -> None:
    text = tools.system_prompt(dialect=dialect)
    assert 200 < len(text.encode()) < 2_500  # guidance, not a manual
    names = tools.NAMES if dialect == OURS else [t.name for t in DIALECTS[dialect].tools]
    # The tools that keep the plan current (ours: `update_plan`; the reads and `create_plan`
    # need no reminder) are named as the model calls them.
    writers = [n for n in names if n not in ("create_plan", "remove_plan", "TaskList", "TaskGet")]
    assert all(f"`{n}`" in text for n in writers), (dialect, writers)
    others = {t.name for d, each in DIALECTS.items() if d != dialect for t in each.tools} - set(
        names
    )
    assert not {n for n in others if f"`{n}`" in text}  # no other dialect's tool named
    assert "in progress" in text or "in_progress" in text


# ---- what the models trained on a dialect send, its definition describes -----------------------


def _adapter_only(dialect: str, sent: Any) -> bool:
    """Calls the adapter takes beyond the trained shape (so beyond the definition): a Cursor
    merge that leaves out an existing todo's `content`."""
    arguments = sent.arguments
    return (
        dialect == "cursor"
        and arguments.get("merge") is True
        and any("content" not in todo for todo in arguments.get("todos", []))
    )


@pytest.mark.parametrize("dialect", dialect_calls.covered())
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_trained_shape_fits_the_definition(dialect: str, data: st.DataObject) -> None:
    """A call in the shape the models were trained on (written from the peers' own
    definitions) is valid against our definition of it, as each provider sends it
    non-strict, and the definition's model accepts it: the model is told no other shape
    than the one it knows. Fields the definitions leave out on purpose (Claude's free-form
    `metadata`, which no strict schema can describe) are taken by the definition's model
    all the same."""
    sent = data.draw(dialect_calls.valid(dialect, ("1", "2", "3")))
    if _adapter_only(dialect, sent):
        return
    (tool,) = (t for t in DIALECTS[dialect].tools if t.name == sent.tool)
    tool.definition.model_validate_json(json.dumps(sent.arguments))
    schema = tools.schema(sent.tool, dialect=dialect)
    visible = {k: v for k, v in sent.arguments.items() if k in schema["properties"]}
    jsonschema.validate(visible, schema)
