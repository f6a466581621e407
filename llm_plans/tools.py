"""The plan tools, ready to pass as `tools=` to each model API.

Every format is derived from the same argument models; only the envelope differs. Each
function takes `dialect=`: ours (`"llm_plans"`, the default: `create_plan`, `update_plan`,
`remove_plan`) or another dialect a session accepts (`"claude_todos"`, ...), whose tools have
the argument shapes its models were trained on, cleaned to the same strict-valid form as ours.

Example:
    client.chat.completions.create(model=..., messages=..., tools=tools.openai_chat())
    client.messages.create(..., tools=tools.anthropic(dialect="claude_todos"))
"""

from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any, cast

from ._core.prompts import prompt
from ._core.tool import PlanTool
from ._errors import ConfigurationError
from ._models import ToolName
from .dialects import _NAMES as DIALECT_NAMES
from .dialects import _OURS as OURS
from .dialects import _tools_of as tools_of

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

NAMES: tuple[ToolName, ...] = ("create_plan", "update_plan", "remove_plan")
"""The plan tools' names: `create_plan`, `update_plan`, `remove_plan`."""

# Never sent: titles and defaults repeat what names and descriptions say; minLength is refused
# by Anthropic's strict mode and checked on our side anyway. Field descriptions (the models'
# docstrings) are left out too: the definitions are paid for on every request, and each tool's
# description already says what its fields mean, in fewer bytes than a description per field.
_ALWAYS_DROP = frozenset({"title", "default", "minLength", "description"})
# Anthropic's structured outputs refuse numeric and string-length bounds (OpenAI's strict mode
# accepts `minimum`); we check them on our side, so the model still learns of a bad step number.
# Array sizes too (it takes `minItems` of 0 or 1 only): a dialect's list bounds are checked on
# our side as well.
_ANTHROPIC_STRICT_DROP = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
    }
)
# Keys in the order a reader wants them; the rest follow in pydantic's order.
_ORDER = ("type", "enum", "items", "minimum", "properties", "required")


def openai_chat(
    strict: bool = True, *, dialect: str = OURS
) -> list[ChatCompletionFunctionToolParam]:
    """The tools of `dialect` for `client.chat.completions.create(tools=...)`.

    Args:
        strict: Mark each tool `strict` (OpenAI's structured outputs): every property is
            listed in `required`, and the model's arguments always match the schema.
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    return [
        cast(
            "ChatCompletionFunctionToolParam",
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description(name, dialect=dialect),
                    "parameters": schema(name, all_required=strict, dialect=dialect),
                    "strict": strict,
                },
            },
        )
        for name in _names(dialect)
    ]


def openai_responses(strict: bool = True, *, dialect: str = OURS) -> list[FunctionToolParam]:
    """The tools of `dialect` for `client.responses.create(tools=...)`.

    Args:
        strict: Mark each tool `strict` (OpenAI's structured outputs): every property is
            listed in `required`, and the model's arguments always match the schema.
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    return [
        cast(
            "FunctionToolParam",
            {
                "type": "function",
                "name": name,
                "description": description(name, dialect=dialect),
                "parameters": schema(name, all_required=strict, dialect=dialect),
                "strict": strict,
            },
        )
        for name in _names(dialect)
    ]


def anthropic(strict: bool = False, *, dialect: str = OURS) -> list[ToolParam]:
    """The tools of `dialect` for `client.messages.create(tools=...)`.

    Args:
        strict: Mark each tool `strict` (Anthropic's structured outputs), leaving out the
            schema keywords it refuses (numeric, length and size bounds, `pattern`), which
            the session checks anyway.
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    return [
        cast(
            "ToolParam",
            {
                "name": name,
                "description": description(name, dialect=dialect),
                "input_schema": schema(
                    name,
                    drop=_ANTHROPIC_STRICT_DROP if strict else frozenset(),
                    dialect=dialect,
                ),
                "strict": strict,
            },
        )
        for name in _names(dialect)
    ]


def description(name: str, *, dialect: str = OURS) -> str:
    """The description the model reads of the tool `name` of `dialect`, from
    `prompts/<dialect>/<name>.md`.

    Args:
        name: The tool's plain name, one of `dialect`'s (ConfigurationError otherwise).
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    return _tool(name, dialect).description


def system_prompt(*, dialect: str = OURS) -> str:
    """Guidance for the agent that plans with `dialect`'s tools, for its system prompt
    (`prompts/<dialect>/system.md`): when to plan and how, which the
    tool descriptions only sketch.

    Args:
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    _tools(dialect)  # an unknown dialect is a ConfigurationError, not a missing file
    return prompt(f"{dialect}/system")


def schema(
    name: str,
    *,
    all_required: bool = False,
    drop: frozenset[str] = frozenset(),
    dialect: str = OURS,
) -> dict[str, Any]:
    """The JSON schema of the arguments of the tool `name` of `dialect` (a fresh copy the
    caller may change).

    Nullable fields are spelled `"type": [..., "null"]` (with `null` in their `enum`), the form
    both OpenAI's and Anthropic's strict modes document; `all_required` lists every property
    in `required`, as OpenAI's strict mode demands.

    Args:
        name: The tool's plain name, one of `dialect`'s (ConfigurationError otherwise).
        all_required: List every property in `required`, as OpenAI's strict mode demands.
        drop: Schema keywords to leave out wherever they occur (`"minimum"`, say), for a
            format that refuses them. Titles, defaults, descriptions and `minLength` are
            always left out.
        dialect: The dialect whose tools these are: `"llm_plans"` (ours, the default),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"` or `"vibe"`.
    """
    tool = _tool(name, dialect)  # checked first: the cache below takes hashable names only
    return copy.deepcopy(_schema(tool, all_required, frozenset(drop)))


@functools.cache
def _schema(tool: PlanTool, all_required: bool, drop: frozenset[str]) -> dict[str, Any]:
    # A tool is described by its definition (the shape its models were trained on; its
    # adapter also takes the variants they send).
    raw = tool.definition.model_json_schema()
    defs = raw.pop("$defs", {})
    return cast("dict[str, Any]", _clean(raw, defs, all_required, drop | _ALWAYS_DROP))


def _names(dialect: object) -> tuple[str, ...]:
    """The tool names of one dialect; ConfigurationError naming the dialects for another."""
    return tuple(_tools(dialect))


def _tools(dialect: object) -> dict[str, PlanTool]:
    if not isinstance(dialect, str):
        raise ConfigurationError(
            f"dialect must be one dialect's name, one of {', '.join(DIALECT_NAMES)}; "
            f"got {dialect!r}"
        )
    return tools_of(dialect)  # ConfigurationError for a name that is no dialect's


def _tool(name: object, dialect: object) -> PlanTool:
    found = _tools(dialect)
    tool = found.get(name) if isinstance(name, str) else None
    if tool is None:
        owners = [d for d in DIALECT_NAMES if isinstance(name, str) and name in tools_of(d)]
        hint = f"; {name!r} is a tool of dialect={owners[0]!r}" if owners else ""
        raise ConfigurationError(
            f"dialect {dialect!r} has no tool named {name!r} (its tools: {', '.join(found)})" + hint
        )
    return tool


def _clean(node: Any, defs: dict[str, Any], all_required: bool, drop: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_clean(n, defs, all_required, drop) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        # Inlined rather than kept in `$defs`: each nested object (Entry, Change) occurs once
        # per tool, and a tool's schema stands alone, so a shared definition would only add
        # `$defs` and `$ref` bytes. OpenAI's strict mode also refuses a `$ref` with siblings.
        return _clean(defs[node["$ref"].rsplit("/", 1)[-1]], defs, all_required, drop)
    variants = node.get("anyOf")
    if isinstance(variants, list) and {"type": "null"} in variants and len(variants) == 2:
        # `X | None`: one schema whose type admits null, rather than an `anyOf` of two.
        (inner,) = (v for v in variants if v != {"type": "null"})
        merged = {**_clean(inner, defs, all_required, drop), **_rest(node, "anyOf", drop)}
        return _nullable(_clean(merged, defs, all_required, drop))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop:
            continue
        if key == "properties":
            out[key] = {k: _clean(v, defs, all_required, drop) for k, v in value.items()}
        else:
            out[key] = _clean(value, defs, all_required, drop)
    if out.get("type") == "object":
        out["additionalProperties"] = False
        if all_required:
            out["required"] = list(out.get("properties", {}))
    return _ordered(out)


def _rest(node: dict[str, Any], skip: str, drop: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != skip and k not in drop}


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    out = dict(node)
    out["type"] = [out["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]  # an enum lists every value it accepts
    return _ordered(out)


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    first = {k: node[k] for k in _ORDER if k in node}
    return {**first, **{k: v for k, v in node.items() if k not in first}}
