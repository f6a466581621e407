"""The `session/update` payloads, built in one place for each of the three wire forms.

Built as plain dicts rather than through the ACP SDK's models: this is the hot path, the
stored entries are already in ACP's shape, and tests check every form against the SDK's
models and the published schema."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from ._book import Stored
from ._errors import ConfigurationError

Json = dict[str, Any]


class WireForm(str, enum.Enum):
    """How plans reach a client, chosen from what it advertised in `initialize`."""

    DOCUMENTS = "documents"
    """`plan_update` / `plan_removed` keyed by `id`: the client advertised `planCapabilities`."""
    SCHEMA = "schema"
    """`plan_update` / `plan_removed` keyed by `planId`: the client advertised `plan`, as in
    ACP's published schema and the official SDKs."""
    LEGACY = "legacy"
    """One `plan` update with every entry of every plan: the client advertised neither."""


def parse_form(form: WireForm | str) -> WireForm:
    """A wire form given by name, or a ConfigurationError listing the names."""
    try:
        return WireForm(form)
    except ValueError:
        names = ", ".join(repr(f.value) for f in WireForm)
        raise ConfigurationError(f"unknown wire form {form!r}; use one of {names}") from None


def form_for(capabilities: Any) -> WireForm:
    """The wire form for a client's `clientCapabilities` (a dict, an ACP SDK model, or None)."""
    caps = _as_dict(capabilities)
    if isinstance(caps.get("planCapabilities"), Mapping):
        return WireForm.DOCUMENTS
    if isinstance(caps.get("plan"), Mapping):
        return WireForm.SCHEMA
    return WireForm.LEGACY


def _as_dict(capabilities: Any) -> Mapping[str, Any]:
    if capabilities is None:
        return {}
    if isinstance(capabilities, Mapping):
        return capabilities
    dump = getattr(capabilities, "model_dump", None)
    if callable(dump):
        # by_alias gives the wire names; extras (such as a `planCapabilities` the SDK's model
        # does not declare) are kept when the model allows them.
        dumped = dump(by_alias=True, mode="json")
        if isinstance(dumped, Mapping):
            return dumped
    raise ConfigurationError(
        "client_capabilities must be the clientCapabilities dict from initialize, "
        f"an acp.schema.ClientCapabilities, or None; got {type(capabilities).__name__}"
    )


def plan_update(form: WireForm, plan: Stored) -> Json:
    """A `plan_update` carrying the complete plan."""
    body: Json = {"type": plan.type, _id_key(form): plan.id}
    if plan.type == "items":
        body["entries"] = list(plan.entries)
    elif plan.type == "markdown":
        body["content"] = plan.content
    else:
        body["uri"] = plan.uri
    if plan.meta is not None:
        body["_meta"] = plan.meta
    return {"sessionUpdate": "plan_update", "plan": body}


def plan_removed(form: WireForm, plan_id: str) -> Json:
    """A `plan_removed` for one plan."""
    return {"sessionUpdate": "plan_removed", _id_key(form): plan_id}


def legacy_plan(entries: list[Json]) -> Json:
    """The legacy `plan` update: the complete list the client replaces its plan with."""
    return {"sessionUpdate": "plan", "entries": entries}


def notification(session_id: str, update: Json) -> Json:
    """The params of a `session/update` notification."""
    return {"sessionId": session_id, "update": update}


def _id_key(form: WireForm) -> str:
    if form is WireForm.LEGACY:
        raise ValueError("the legacy form has no plan_update or plan_removed")
    return "id" if form is WireForm.DOCUMENTS else "planId"
