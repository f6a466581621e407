"""Checks per wire form: the legacy list and the spec documents' draft by JSON Schemas drawn
from the documents; the stable forms (`schema`, `v2`) by the stable schema
(tests/support/stable_schema.py) and by the TS SDK 2.4.0's unstable schemas of their version,
plan by plan against the items and markdown definitions themselves (v2's open `other` branches, a
custom plan type or status, would accept almost anything).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
from acp.schema import SessionNotification
from node_tools import MODULES, node_modules
from stable_schema import check_stable

# The TS SDK 2.4.0 schema each stable form is also checked against (they predate the
# stabilization: `path` passes there because neither sets `additionalProperties: false`), and
# the notification definition of that file.
PUBLISHED = {
    "schema": ("v1", "SessionNotification"),
    "v2": ("v2", "UpdateSessionNotification"),
}
# The plan kinds the stable forms send, by the published definition that describes them.
PLAN_DEFINITIONS = {"items": "PlanItems", "markdown": "PlanMarkdown"}
# The stable version of each form (tests/support/stable_schema.py).
STABLE_VERSION = {"schema": "v1", "v2": "v2"}

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


class Published:
    """One of the TS SDK 2.4.0's unstable schemas, with strict checks of its plan definitions."""

    def __init__(self, version: str) -> None:
        node_modules()
        path = (
            MODULES / "@agentclientprotocol" / "sdk" / "schema" / version / "schema.unstable.json"
        )
        self.defs: dict[str, Any] = json.loads(path.read_text())["$defs"]

    def validator(self, name: str) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": self.defs})

    def known(self, name: str) -> set[str]:
        """The values an enum-like definition names, without an open `other` branch."""
        definition = self.defs[name]
        return {
            b["const"] for b in definition.get("anyOf", definition.get("oneOf", ())) if "const" in b
        }

    def strict(self, name: str, value: dict[str, Any], *, also: tuple[str, ...] = ()) -> None:
        """`value` is valid for definition `name`, with no key it does not define."""
        definition = self.defs[name]
        self.validator(name).validate(value)
        extra = set(value) - set(definition["properties"]) - set(also)
        assert not extra, f"{sorted(extra)} not in {name}"
        assert set(definition["required"]) <= set(value), f"{name} needs {definition['required']}"


@cache
def published(version: str) -> Published:
    return Published(version)


def check_stable_form(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a `session/update` with a plan update of the stable `form`
    ("schema" or "v2"): by the stable schema, and by the TS SDK 2.4.0's unstable schema of its
    version, each plan against that file's own items / markdown definition."""
    update = params["update"]
    check_stable(STABLE_VERSION[form], update)
    version, notification = PUBLISHED[form]
    schema = published(version)
    schema.validator(notification).validate(params)
    kind = update["sessionUpdate"]
    if kind == "plan_removed":
        schema.strict("PlanRemoved", update, also=("sessionUpdate",))
        return
    assert kind == "plan_update", f"{kind!r} is not a plan update"
    schema.strict("PlanUpdate", update, also=("sessionUpdate",))
    plan = update["plan"]
    # `path` is the stable markdown plan's; 2.4.0's PlanMarkdown predates it.
    schema.strict(PLAN_DEFINITIONS[plan["type"]], plan, also=("type", "path"))
    for entry in plan.get("entries", ()):
        schema.strict("PlanEntry", entry)
        assert entry["status"] in schema.known("PlanEntryStatus"), entry
        assert entry["priority"] in schema.known("PlanEntryPriority"), entry


def check_sdk_round_trip(params: dict[str, Any]) -> None:
    """The official Python SDK parses `params` and writes them back unchanged, but for a
    markdown plan's `path`, which its models (0.12.1, 1.0.0rc3) do not declare and drop."""
    parsed = SessionNotification.model_validate(params)
    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_none=True)
    plan = params["update"].get("plan")
    if isinstance(plan, dict) and "path" in plan:
        params = {**params, "update": {**params["update"], "plan": _without(plan, "path")}}
    assert dumped == params


def _without(value: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


def check_subagent(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a `subagent_update` by the TS SDK 2.4.0's schema of the form's
    ACP version (a pre-stable draft of the stable subagent sessions, taken as equal), as a
    member of the `SessionUpdate` union and against `SubagentUpdate` itself, with no key it
    does not define."""
    version, notification = PUBLISHED.get(form, ("v1", "SessionNotification"))
    schema = published(version)
    schema.validator(notification).validate(params)
    update = params["update"]
    schema.strict("SubagentUpdate", update, also=("sessionUpdate",))
    state = update.get("state")
    if state is not None:
        assert state in ({"state": "running"}, {"state": "idle"}), state


def check(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a compliant `session/update` in `form`."""
    assert set(params) == {"sessionId", "update"}
    assert isinstance(params["sessionId"], str)
    update = params["update"]
    if update.get("sessionUpdate") == "subagent_update":
        check_subagent(form, params)
        return
    if form in STABLE_VERSION:
        check_stable_form(form, params)
        if form == "schema":
            check_sdk_round_trip(params)
    else:
        _VALIDATORS[form].validate(update)
