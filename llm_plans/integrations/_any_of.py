"""A JSON schema's type lists (`"type": ["string", "null"]`) spelled as `anyOf` branches instead.

pydantic-ai's offline `TestModel` makes up arguments from a tool's schema, one type per schema
node: a type list stops it (`NotImplementedError: Unknown type`). An `anyOf` of one-type branches
accepts exactly the same values, and OpenAI's strict mode takes it too, so `PlanToolset` gives
pydantic-ai this spelling of the `llm_plans.tools` schemas. Those keep their type lists: they are
what every other caller sends.
"""

from __future__ import annotations

from typing import Any

_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
# The keywords that constrain values of one type only. Each goes into its type's branch, so that a
# branch says all that its values must be (strict mode wants an array's `items` beside `"type":
# "array"`); any other keyword, a description say, stays on the node for every branch.
_OF_TYPE = {
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"}),
    "object": frozenset(
        {"properties", "required", "additionalProperties", "patternProperties", "propertyNames"}
        | {"minProperties", "maxProperties"}
    ),
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "number": _NUMBER,
    "integer": _NUMBER,
}
_TYPED = frozenset().union(*_OF_TYPE.values()) | {"type", "enum"}

# Where a schema holds schemas: one, a list of them (`items` too, in drafts before 2020-12), or
# a mapping of names to them.
_ONE = ("items", "additionalProperties", "contains", "not", "propertyNames")
_LIST = ("items", "prefixItems", "anyOf", "oneOf", "allOf")
_NAMED = ("properties", "patternProperties", "$defs", "definitions")


def without_type_lists(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every type list an `anyOf` of one branch per type: the same values valid."""
    node = {key: _inner(key, value) for key, value in schema.items()}
    types = node.get("type")
    if not isinstance(types, list):
        return node
    shared = {key: value for key, value in node.items() if key not in _TYPED}
    branches = [branch for name in types if (branch := _branch(node, name)) is not None]
    if len(branches) == 1:
        return {**shared, **branches[0]}
    return {**shared, "anyOf": branches}


def _inner(key: str, value: Any) -> Any:
    """A keyword's value with the schemas in it rewritten (others, an `enum` say, as they are)."""
    if key in _ONE and isinstance(value, dict):
        return without_type_lists(value)
    if key in _LIST and isinstance(value, list):
        return [_schema(v) for v in value]
    if key in _NAMED and isinstance(value, dict):
        return {name: _schema(v) for name, v in value.items()}
    return value


def _schema(value: Any) -> Any:
    return without_type_lists(value) if isinstance(value, dict) else value  # or `true`/`false`


def _branch(node: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The branch for the values of type `name`; `None` if the node's `enum` allows none."""
    branch: dict[str, Any] = {"type": name}
    of_type = _OF_TYPE.get(name, frozenset())
    branch.update((key, value) for key, value in node.items() if key in of_type)  # in their order
    if "enum" in node:
        allowed = [value for value in node["enum"] if _is(value, name)]
        if not allowed:
            return None
        if name != "null":  # `"type": "null"` allows `null` alone already
            branch["enum"] = allowed
    return branch


def _is(value: Any, name: str) -> bool:
    """Whether a JSON value is of the JSON schema type `name` (booleans are not numbers)."""
    if isinstance(value, bool):
        return name == "boolean"
    kinds: dict[str, Any] = {
        "null": type(None),
        "string": str,
        "integer": int,
        "number": (int, float),
        "array": list,
        "object": dict,
    }
    return name in kinds and isinstance(value, kinds[name])
