"""Binding to the official ACP Python SDK (`agent-client-protocol`, import `acp`)."""

from __future__ import annotations

from typing import Any

from ._errors import ConfigurationError
from ._session import Send
from ._wire import Json


def acp_send(conn: Any) -> Send:
    """A `send` for `PlanSession` that writes through an ACP SDK agent-side connection.

    Updates the SDK can type (legacy `plan`, and `plan_update` / `plan_removed` keyed by
    `planId`) go through its `session_update`, so they are validated like any other update.
    The spec documents' form (keyed by `id`) is unknown to the SDK's models and goes out as
    the same JSON-RPC notification, unchanged.

    Example:
        caps = params.client_capabilities  # from Agent.initialize
        session = PlanSession(acp_send(conn), session_id=sid, client_capabilities=caps)
    """
    from acp.schema import SessionNotification

    session_update = getattr(conn, "session_update", None)
    if not callable(session_update):
        raise ConfigurationError(
            f"acp_send needs an ACP agent-side connection (acp.core.AgentSideConnection, as "
            f"passed to Agent.on_connect); got {type(conn).__name__}"
        )

    async def send(params: Json) -> None:
        update = params["update"]
        if _documents_form(update):
            await _raw_connection(conn).send_notification("session/update", params)
            return
        notification = SessionNotification.model_validate(params)
        await session_update(session_id=notification.session_id, update=notification.update)

    return send


def _documents_form(update: Json) -> bool:
    kind = update.get("sessionUpdate")
    if kind == "plan_removed":
        return "id" in update
    return kind == "plan_update" and "id" in update.get("plan", {})


def _raw_connection(conn: Any) -> Any:
    # The SDK has no public way to send a session/update its models do not describe; its
    # JSON-RPC connection object is the one place that writes a notification as given.
    raw = getattr(conn, "_conn", None)
    if raw is None or not callable(getattr(raw, "send_notification", None)):
        raise ConfigurationError(
            "this ACP connection cannot send the planCapabilities form; force "
            "form=WireForm.SCHEMA on the PlanSession or upgrade agent-client-protocol"
        )
    return raw


class ClientCapabilitiesRecorder:
    """An ACP SDK stream observer that keeps the raw `clientCapabilities` of `initialize`.

    The SDK's `ClientCapabilities` model drops keys it does not declare, among them the spec
    documents' `planCapabilities`; the raw JSON keeps them so `PlanSession` picks the right form.

    Example:
        recorder = ClientCapabilitiesRecorder()
        await acp.run_agent(agent, observers=[recorder])
        ...
        PlanSession(acp_send(conn), session_id=sid, client_capabilities=recorder.capabilities)
    """

    def __init__(self) -> None:
        self.capabilities: Json | None = None

    def __call__(self, event: Any) -> None:
        message = getattr(event, "message", None)
        if not isinstance(message, dict) or message.get("method") != "initialize":
            return
        params = message.get("params")
        caps = params.get("clientCapabilities") if isinstance(params, dict) else None
        self.capabilities = caps if isinstance(caps, dict) else None
