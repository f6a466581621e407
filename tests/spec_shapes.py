"""JSON Schemas of the plan updates as the spec documents draw them, and checks per form."""

from __future__ import annotations

from typing import Any

import jsonschema
from acp.schema import SessionNotification

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


def check(form: str, params: dict[str, Any]) -> None:
    """Raise unless `params` is a compliant `session/update` in `form`."""
    assert set(params) == {"sessionId", "update"}
    assert isinstance(params["sessionId"], str)
    update = params["update"]
    if form in _VALIDATORS:
        _VALIDATORS[form].validate(update)
    else:
        assert update["sessionUpdate"] in ("plan_update", "plan_removed")
        parsed = SessionNotification.model_validate(params)
        assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == params
