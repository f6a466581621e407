"""Binding to the official ACP Python SDK (`agent-client-protocol`, import `acp`)."""

from __future__ import annotations

from typing import Any

from .._errors import ConfigurationError
from .forms import Json
from .outbox import Send


def acp_send(conn: Any, *, validate: bool = False) -> Send:
    """A `send` for `PlanSession` that writes through an ACP SDK agent-side connection.

    Notifications go out as the JSON-RPC `session/update` they are, on the SDK's own
    connection: PlanSession builds them compliant by construction, and re-parsing each into
    the SDK's models would cost more than everything else llm_plans does per call. With
    `validate=True`, the updates the SDK's models carry whole (legacy `plan`, and
    `plan_update` / `plan_removed` keyed by `planId`) go through its typed `session_update`
    instead. What those models cannot carry always goes raw: the spec documents' form (keyed
    by `id`), v2's `cancelled` steps (re-modelled as v1 they would be refused), a key they
    do not declare (the stable markdown plan's `path`, which they would silently drop), and
    any other kind of update.

    Args:
        conn: The ACP SDK's agent-side connection (`AgentSideConnection`, as passed to
            `Agent.on_connect`), or anything with its `session_update`.
        validate: Send what the SDK's models can carry through its typed `session_update`,
            which checks each update against them, at the cost of re-parsing it.

    Example:
        # recorder: a ClientCapabilitiesRecorder observing the connection
        session = PlanSession(acp_send(conn), session_id=sid, client_capabilities=recorder)
    """
    session_update = getattr(conn, "session_update", None)
    if not callable(session_update):
        raise ConfigurationError(
            f"acp_send needs an ACP agent-side connection (acp.core.AgentSideConnection, as "
            f"passed to Agent.on_connect); got {type(conn).__name__}"
        )
    raw = _raw_connection(conn)

    async def send(params: Json) -> None:
        update = params["update"]
        if raw is not None and not (validate and _v1_sdk_form(update)):
            await raw.send_notification("session/update", params)
            return
        if _documents_form(update):
            raise ConfigurationError(
                "this ACP connection cannot send the planCapabilities form; force "
                "form=WireForm.SCHEMA on the PlanSession or upgrade agent-client-protocol"
            )
        if not _v1_sdk_form(update):
            raise ConfigurationError(
                f"this ACP connection cannot send a {update.get('sessionUpdate')!r} update "
                "whole: the SDK's models would refuse or drop part of it (v2's cancelled "
                "steps, a markdown plan's path). Use a connection of agent-client-protocol "
                "0.12 or later, or the legacy form (form=WireForm.LEGACY)"
            )
        from acp.schema import SessionNotification

        notification = SessionNotification.model_validate(params)
        await session_update(session_id=notification.session_id, update=notification.update)

    return send


def _documents_form(update: Json) -> bool:
    kind = update.get("sessionUpdate")
    if kind == "plan_removed":
        return "id" in update
    return kind == "plan_update" and "id" in update.get("plan", {})


_V1_STATUSES = frozenset(("pending", "in_progress", "completed"))
# The keys the SDK's models (0.12.1, 1.0.0rc3) declare, by what they model: a key beyond
# these would be dropped without a word when the update is re-modelled.
_DECLARED = {
    "plan": frozenset(("sessionUpdate", "entries", "_meta")),
    "plan_update": frozenset(("sessionUpdate", "plan", "_meta")),
    "plan_removed": frozenset(("sessionUpdate", "planId", "_meta")),
}
_PLAN_KEYS = {
    "items": frozenset(("type", "planId", "entries", "_meta")),
    "markdown": frozenset(("type", "planId", "content", "_meta")),
}
_ENTRY_KEYS = frozenset(("content", "priority", "status", "_meta"))


def _v1_sdk_form(update: Json) -> bool:
    # What the SDK's v1 models parse and write back unchanged. A `cancelled` step is what
    # only v2 sends (the v1 forms show it as a completed step).
    declared = _DECLARED.get(update.get("sessionUpdate"))  # type: ignore[arg-type]
    if declared is None or not declared.issuperset(update) or _documents_form(update):
        return False
    entries = update.get("entries")
    if "plan" in update:
        plan = update["plan"]
        if not _PLAN_KEYS.get(plan.get("type"), frozenset()).issuperset(plan):
            return False
        entries = plan.get("entries")
    return not entries or all(
        e.get("status") in _V1_STATUSES and _ENTRY_KEYS.issuperset(e) for e in entries
    )


def _raw_connection(conn: Any) -> Any:
    # The SDK has no public way to send a session/update as given; its JSON-RPC connection
    # object is the one place that writes a notification without re-modelling it.
    raw = getattr(conn, "_conn", None)
    return raw if callable(getattr(raw, "send_notification", None)) else None


class ClientCapabilitiesRecorder:
    """An ACP SDK stream observer that keeps what `initialize` settled: the raw client
    capabilities and the negotiated `protocolVersion`.

    The SDK's `ClientCapabilities` model drops keys it does not declare, among them the spec
    documents' `planCapabilities`; the raw JSON keeps them so `PlanSession` picks the right
    form. Pass the recorder itself as `client_capabilities=` and a client that negotiated
    protocol version 2 gets the v2 form.

    Example:
        recorder = ClientCapabilitiesRecorder()
        await acp.run_agent(agent, observers=[recorder])
        ...
        PlanSession(acp_send(conn), session_id=sid, client_capabilities=recorder)
    """

    def __init__(self) -> None:
        self.capabilities: Json | None = None
        """The raw client capabilities of the last `initialize` seen (`clientCapabilities`
        in v1, `capabilities` in v2), or None before it."""
        self.protocol_version: int | None = None
        """The `protocolVersion` the last `initialize` settled on: the agent's answer once
        the observer has seen it, the client's request until then; None before it."""
        self._request: tuple[object, object] | None = None  # (direction, id) of initialize

    def __call__(self, event: Any) -> None:
        """Read one message the connection saw: the `initialize` request and its answer.

        Args:
            event: The ACP SDK's observer event (its `message` and `direction`).
        """
        message = getattr(event, "message", None)
        if not isinstance(message, dict):
            return
        direction = getattr(event, "direction", None)
        if message.get("method") == "initialize":
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            caps = params.get("clientCapabilities", params.get("capabilities"))
            self.capabilities = caps if isinstance(caps, dict) else None
            self.protocol_version = _version(params.get("protocolVersion"))
            self._request = (direction, message.get("id"))
        elif "method" not in message and self._request is not None:
            asked_by, request_id = self._request
            # The answer travels the other way; ids are only unique per direction.
            if message.get("id") != request_id or direction == asked_by:
                return
            self._request = None
            result = message.get("result")
            answered = _version(result.get("protocolVersion")) if isinstance(result, dict) else None
            if answered is not None:
                self.protocol_version = answered


def _version(value: object) -> int | None:
    return value if type(value) is int and 0 <= value <= 0xFFFF else None
