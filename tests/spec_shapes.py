"""JSON Schemas of the plan updates as the spec documents draw them, and checks per form.

The v2 forms are checked against the TS SDK's published v2 schemas (`schema/v2/schema.json`
and `schema.unstable.json` of `@agentclientprotocol/sdk`), plan by plan against the items,
markdown and file definitions themselves: v2's open `other` branches (a custom plan type, a
custom status) would accept almost anything.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from acp.schema import SessionNotification
from node_tools import MODULES, node_modules

V2_SCHEMAS = {"v2": "schema.json", "v2-unstable": "schema.unstable.json"}
# The plan kinds each v2 surface defines, by the definition that describes them.
V2_PLANS = {
    "v2": {"items": "PlanItems"},
    "v2-unstable": {"items": "PlanItems", "markdown": "PlanMarkdown", "file": "PlanFile"},
}

ENTRY = {
    "type": "object",
    "required": ["content", "priority", "status"],
    "properties": {
        "content": {"type": "string"},
        "priority": {"enum": ["high", "medium", "low"]},
        "status": {"enum": ["pending", "in_progress", "completed"]},
        "_meta": {"type": "object"},
    },
    "additionalProperties": False,
}


def _plan(kind: str, field: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", "id", field],
        "properties": {
            "type": {"const": kind},
            "id": {"type": "string"},
            field: schema,
            "_meta": {"type": "object"},
        },
        "additionalProperties": False,
    }


LEGACY = {
    "type": "object",
    "required": ["sessionUpdate", "entries"],
    "properties": {
        "sessionUpdate": {"const": "plan"},
        "entries": {"type": "array", "items": ENTRY},
        "_meta": {"type": "object"},
    },
    "additionalProperties": False,
}

DOCUMENTS = {
    "oneOf": [
        {
            "type": "object",
            "required": ["sessionUpdate", "plan"],
            "properties": {
                "sessionUpdate": {"const": "plan_update"},
                "plan": {
                    "oneOf": [
                        _plan("items", "entries", {"type": "array", "items": ENTRY}),
                        _plan("markdown", "content", {"type": "string"}),
                        _plan("file", "uri", {"type": "string"}),
                    ]
                },
            },
            "additionalProperties": False,
        },
        {
            "type": "object",
            "required": ["sessionUpdate", "id"],
            "properties": {"sessionUpdate": {"const": "plan_removed"}, "id": {"type": "string"}},
            "additionalProperties": False,
        },
    ]
}


_VALIDATORS = {
    "legacy": jsonschema.Draft202012Validator(LEGACY),
    "documents": jsonschema.Draft202012Validator(DOCUMENTS),
}


class V2Schema:
    """One of the TS SDK's v2 schemas, with strict checks of its plan definitions."""

    def __init__(self, form: str) -> None:
        node_modules()
        path = MODULES / "@agentclientprotocol" / "sdk" / "schema" / "v2" / V2_SCHEMAS[form]
        self.defs: dict[str, Any] = json.loads(path.read_text())["$defs"]
        self.plans = V2_PLANS[form]
        self.removal = "PlanRemoved" in self.defs

    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": self.defs})

    def known(self, name: str) -> set[str]:
        """The values an enum-like definition names, without its open `other` branch."""
        return {b["const"] for b in self.defs[name]["anyOf"] if "const" in b}

    def strict(self, name: str, value: dict[str, Any], *, also: tuple[str, ...] = ()) -> None:
        """`value` is valid for definition `name`, with no key it does not define."""
        definition = self.defs[name]
        self.validator(name).validate(value)
        extra = set(value) - set(definition["properties"]) - set(also)
        assert not extra, f"{sorted(extra)} not in {name}"
        assert set(definition["required"]) <= set(value), f"{name} needs {definition['required']}"


@cache
def v2_schema(form: str) -> V2Schema:
    return V2Schema(form)


def check_v2(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a `session/update` with a plan update of the v2 `form`."""
    schema = v2_schema(form)
    schema.validator("UpdateSessionNotification").validate(params)
    update = params["update"]
    kind = update["sessionUpdate"]
    if kind == "plan_removed":
        assert schema.removal, "plan_removed is not part of v2's stable surface"
        schema.strict("PlanRemoved", update, also=("sessionUpdate",))
        return
    assert kind == "plan_update", f"{kind!r} is not a v2 plan update"
    schema.strict("PlanUpdate", update, also=("sessionUpdate",))
    plan = update["plan"]
    assert plan["type"] in schema.plans, f"a {plan['type']} plan is not defined in {form}"
    schema.strict(schema.plans[plan["type"]], plan, also=("type",))
    for entry in plan.get("entries", ()):
        schema.strict("PlanEntry", entry)
        assert entry["status"] in schema.known("PlanEntryStatus"), entry
        assert entry["priority"] in schema.known("PlanEntryPriority"), entry


def check(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a compliant `session/update` in `form`."""
    assert set(params) == {"sessionId", "update"}
    assert isinstance(params["sessionId"], str)
    update = params["update"]
    if form in V2_SCHEMAS:
        check_v2(form, params)
    elif form in _VALIDATORS:
        _VALIDATORS[form].validate(update)
    else:
        assert update["sessionUpdate"] in ("plan_update", "plan_removed")
        parsed = SessionNotification.model_validate(params)
        assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == params
