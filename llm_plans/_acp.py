"""Binding to the official ACP Python SDK (`agent-client-protocol`, import `acp`)."""

from __future__ import annotations

from typing import Any

from ._errors import ConfigurationError
from ._outbox import Send
from ._wire import Json


def acp_send(conn: Any, *, validate: bool = False) -> Send:
    """A `send` for `PlanSession` that writes through an ACP SDK agent-side connection.

    Notifications go out as the JSON-RPC `session/update` they are, on the SDK's own
    connection: PlanSession builds them compliant by construction, and re-parsing each into
    the SDK's models would cost more than everything else llm_plans does per call. With
    `validate=True`, the forms the SDK's models know (legacy `plan`, and `plan_update` /
    `plan_removed` keyed by `planId`) go through its typed `session_update` instead. The
    spec documents' form (keyed by `id`) is unknown to those models and always goes raw.

    Example:
        caps = recorder.capabilities  # see ClientCapabilitiesRecorder
        session = PlanSession(acp_send(conn), session_id=sid, client_capabilities=caps)
    """
    session_update = getattr(conn, "session_update", None)
    if not callable(session_update):
        raise ConfigurationError(
            f"acp_send needs an ACP agent-side connection (acp.core.AgentSideConnection, as "
            f"passed to Agent.on_connect); got {type(conn).__name__}"
        )
    raw = _raw_connection(conn)

    async def send(params: Json) -> None:
        if raw is not None and not (validate and not _documents_form(params["update"])):
            await raw.send_notification("session/update", params)
            return
        if _documents_form(params["update"]):
            raise ConfigurationError(
                "this ACP connection cannot send the planCapabilities form; force "
                "form=WireForm.SCHEMA on the PlanSession or upgrade agent-client-protocol"
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


def _raw_connection(conn: Any) -> Any:
    # The SDK has no public way to send a session/update as given; its JSON-RPC connection
    # object is the one place that writes a notification without re-modelling it.
    raw = getattr(conn, "_conn", None)
    return raw if callable(getattr(raw, "send_notification", None)) else None


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
        """The raw `clientCapabilities` of the last `initialize` seen, or None before it."""

    def __call__(self, event: Any) -> None:
        message = getattr(event, "message", None)
        if not isinstance(message, dict) or message.get("method") != "initialize":
            return
        params = message.get("params")
        caps = params.get("clientCapabilities") if isinstance(params, dict) else None
        self.capabilities = caps if isinstance(caps, dict) else None
