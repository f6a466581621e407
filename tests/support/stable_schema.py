"""The plan updates of ACP as stabilized on 2026-11-20, as JSON Schemas, for v1 and v2.

No SDK release carries them yet (`@agentclientprotocol/sdk` 2.4.0 and `agent-client-protocol`
0.12.1 predate them), so they are written here from their sources:

- the announcement "Plan operations are stabilized" (agentclientprotocol.com, 2026-11-20), for
  upstream PR #2898, which moved the Plan Operations RFD to Completed;
- the Rust types of `agent-client-protocol-schema` 1.20.0 (released that day; not the July
  `schema-v1.20.0` tag, which still has the `file` plan type);
- the v2 Preview announcement (PR #2961, the same day).

Each rule below names its source. The schemas are strict (`additionalProperties: false`):
they say exactly what llm_plans may send a client of the stable forms, where the SDKs'
published schemas are open to keys they do not declare.
"""

from __future__ import annotations

from typing import Any

import jsonschema

# Every object may carry `_meta`, an object or null (ACP's extensibility rule, unchanged).
META = {"type": ["object", "null"]}

# "planId": the id key of the plan operations since "Unify the ID naming conventions"; the
# stable types keep it (Rust `PlanId`, a string).
PLAN_ID = {"type": "string"}

PRIORITY = {"enum": ["high", "medium", "low"]}
# v1's statuses are unchanged by the stabilization; v2 adds `cancelled` (Rust v2
# `PlanEntryStatus::Cancelled`; the v2 Preview announcement lists it among v2's changes).
STATUSES = {
    "v1": ["pending", "in_progress", "completed"],
    "v2": ["pending", "in_progress", "completed", "cancelled"],
}

# `path`: "an optional absolute filesystem path" naming the plan's file (announcement), a
# `PathBuf` in the Rust types: not a URI. Absolute on POSIX, or a drive path on Windows.
ABSOLUTE_PATH = {"type": "string", "pattern": r"^(/|[A-Za-z]:[\\/])"}


def _entry(version: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["content", "priority", "status"],
        "properties": {
            "content": {"type": "string"},
            "priority": PRIORITY,
            "status": {"enum": STATUSES[version]},
            "_meta": META,
        },
        "additionalProperties": False,
    }


def _schema(version: str) -> dict[str, Any]:
    items = {
        # "`plan_update.plan` is items (`planId`, `entries`) or markdown" (announcement).
        "type": "object",
        "required": ["type", "planId", "entries"],
        "properties": {
            "type": {"const": "items"},
            "planId": PLAN_ID,
            "entries": {"type": "array", "items": _entry(version)},
            "_meta": META,
        },
        "additionalProperties": False,
    }
    markdown = {
        # `content` is always the complete document: "clients do not need the file to
        # display it" (announcement); `path` is optional.
        "type": "object",
        "required": ["type", "planId", "content"],
        "properties": {
            "type": {"const": "markdown"},
            "planId": PLAN_ID,
            "content": {"type": "string"},
            "path": ABSOLUTE_PATH,
            "_meta": META,
        },
        "additionalProperties": False,
    }
    return {
        "oneOf": [
            {
                # An update "replaces the whole plan with this planId, even if its type
                # changes" (announcement). There is no `file` type any more (Rust types).
                "type": "object",
                "required": ["sessionUpdate", "plan"],
                "properties": {
                    "sessionUpdate": {"const": "plan_update"},
                    "plan": {"oneOf": [items, markdown]},
                    "_meta": META,
                },
                "additionalProperties": False,
            },
            {
                # `plan_removed` names the plan by `planId` (Rust `PlanRemoved`).
                "type": "object",
                "required": ["sessionUpdate", "planId"],
                "properties": {
                    "sessionUpdate": {"const": "plan_removed"},
                    "planId": PLAN_ID,
                    "_meta": META,
                },
                "additionalProperties": False,
            },
        ]
    }


STABLE = {"v1": _schema("v1"), "v2": _schema("v2")}
"""The stable `session/update` plan updates: v1 for clients that advertised `plan: {}`, v2
(where items, markdown and `plan_removed` are baseline, with no capability)."""

_VALIDATORS = {version: jsonschema.Draft202012Validator(s) for version, s in STABLE.items()}


def check_stable(version: str, update: dict[str, Any]) -> None:
    """Raise unless `update` is a stable plan update of ACP `version` ("v1" or "v2")."""
    _VALIDATORS[version].validate(update)
