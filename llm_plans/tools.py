"""The three plan tools, ready to pass as `tools=` to each model API.

Every format is derived from the same argument models; only the envelope differs.

Example:
    client.chat.completions.create(model=..., messages=..., tools=tools.openai_chat())
"""

from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any, cast

from ._models import ARGUMENT_MODELS, TOOL_NAMES, ToolName
from ._prompts import prompt

if TYPE_CHECKING:
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

__all__ = [
    "NAMES",
    "anthropic",
    "description",
    "openai_chat",
    "openai_responses",
    "schema",
    "system_prompt",
]

NAMES: tuple[ToolName, ...] = TOOL_NAMES
"""The plan tools' names: `create_plan`, `update_plan`, `remove_plan`."""

# Keywords each strict mode refuses. OpenAI documents `minimum` as supported; Anthropic's
# structured outputs reject numeric and string-length bounds.
# Never sent: titles and defaults repeat what names and descriptions say, and minLength
# (checked on our side anyway) is refused by Anthropic's and OpenAI's strict modes.
_ALWAYS_DROP = frozenset({"title", "default", "properties", "minLength"})
_ANTHROPIC_STRICT_DROP = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
    }
)


def openai_chat(strict: bool = True) -> list[ChatCompletionFunctionToolParam]:
    """The tools for `client.chat.completions.create(tools=...)`."""
    return [
        cast(
            "ChatCompletionFunctionToolParam",
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description(name),
                    "parameters": schema(name, all_required=strict),
                    "strict": strict,
                },
            },
        )
        for name in NAMES
    ]


def openai_responses(strict: bool = True) -> list[FunctionToolParam]:
    """The tools for `client.responses.create(tools=...)`."""
    return [
        cast(
            "FunctionToolParam",
            {
                "type": "function",
                "name": name,
                "description": description(name),
                "parameters": schema(name, all_required=strict),
                "strict": strict,
            },
        )
        for name in NAMES
    ]


def anthropic(strict: bool = False) -> list[ToolParam]:
    """The tools for `client.messages.create(tools=...)`."""
    return [
        cast(
            "ToolParam",
            {
                "name": name,
                "description": description(name),
                "input_schema": schema(
                    name, drop=_ANTHROPIC_STRICT_DROP if strict else frozenset()
                ),
                "strict": strict,
            },
        )
        for name in NAMES
    ]


def description(name: ToolName) -> str:
    """The tool description the model reads, from `prompts/<name>.md`."""
    return prompt(name)


def system_prompt() -> str:
    """A system prompt for a coding agent that plans with these tools (`prompts/system.md`)."""
    return prompt("system")


def schema(
    name: ToolName, *, all_required: bool = False, drop: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The JSON schema of a tool's arguments (a fresh copy the caller may change)."""
    return copy.deepcopy(_schema(name, all_required, drop))


@functools.cache
def _schema(name: ToolName, all_required: bool, drop: frozenset[str]) -> dict[str, Any]:
    raw = ARGUMENT_MODELS[name].model_json_schema()
    defs = raw.pop("$defs", {})
    out = _clean(raw, defs, all_required, drop)
    out.pop("description", None)  # the tool's description says it better
    return cast("dict[str, Any]", out)


def _clean(node: Any, defs: dict[str, Any], all_required: bool, drop: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_clean(n, defs, all_required, drop) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        # Inlined: the schemas are small, and a flat schema reads better to the model.
        target = dict(defs[node["$ref"].rsplit("/", 1)[-1]])
        target.pop("description", None)  # a class docstring, written for programmers
        return _clean(
            {**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs, all_required, drop
        )
    out = {
        k: _clean(v, defs, all_required, drop)
        for k, v in node.items()
        if k not in _ALWAYS_DROP and k not in drop
    }
    if "properties" in node:
        out["properties"] = {
            name: _clean(prop, defs, all_required, drop)
            for name, prop in node["properties"].items()
        }
    if out.get("type") == "object":
        out["additionalProperties"] = False
        if all_required:
            out["required"] = list(out.get("properties", {}))
    return out
