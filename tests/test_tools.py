"""The tool definitions: one source of truth, each provider's strict rules, the SDKs' types."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import ToolParam
from inline_snapshot import snapshot
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from llm_plans import tools

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


@pytest.mark.parametrize(
    "schema",
    [t["function"]["parameters"] for t in tools.openai_chat()]
    + [t["parameters"] for t in tools.openai_responses()],
)
def test_openai_strict_rules(schema: dict[str, Any]) -> None:
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & set(schema)
    for node in walk(schema):
        assert not keywords(node) & OPENAI_STRICT_REJECTS, node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


@pytest.mark.parametrize("tool", tools.anthropic(strict=True))
def test_anthropic_strict_rules(tool: dict[str, Any]) -> None:
    assert tool["strict"] is True
    for node in walk(tool["input_schema"]):
        assert not keywords(node) & ANTHROPIC_STRICT_REJECTS, node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False


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


def test_remove_plan_schema() -> None:
    assert tools.schema("remove_plan", all_required=True) == snapshot(
        {
            "additionalProperties": False,
            "properties": {
                "id": {"description": "The id of the plan to remove.", "type": "string"}
            },
            "required": ["id"],
            "type": "object",
        }
    )


def test_descriptions_come_from_prompts() -> None:
    assert "exactly one step `in_progress`" in tools.description("update_plan")
    assert tools.openai_chat()[0]["function"]["description"] == tools.description("create_plan")
