"""The client's side of a session under test: what it was sent, and what it shows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._wire.forms import as_read


class RecordingSend:
    """A `send` for `PlanSession` that keeps every notification, as JSON round-tripped data.

    Set `fail_with` to an exception to make the next sends raise it, as a broken pipe would.

    Example:
        send = RecordingSend()
        session = PlanSession(send, session_id="s1")
        await session.call("create_plan", {...})
        assert send.updates[-1]["sessionUpdate"] == "plan"
    """

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        """Every `session/update` params dict sent, in order."""
        self.fail_with: BaseException | None = None
        """When set, each send raises it instead of recording."""

    async def __call__(self, params: dict[str, Any]) -> None:
        """Record one notification, as a JSON round trip; raise `fail_with` instead if set.

        Args:
            params: The `session/update` params a session sends.
        """
        if self.fail_with is not None:
            raise self.fail_with
        # Round-tripping proves the params are plain JSON and decouples them from the caller.
        self.sent.append(json.loads(json.dumps(params)))

    @property
    def updates(self) -> list[dict[str, Any]]:
        """The `update` objects, in order."""
        return [params["update"] for params in self.sent]

    def clear(self) -> None:
        """Forget what was sent so far."""
        self.sent.clear()


def client_view(updates: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The plans a client shows after `updates` (`plan_update` / `plan_removed`), by id.

    Each plan is as last sent, its id under `id` whichever key the wire form used (`planId`
    in ACP's stable v1 and v2 forms, `id` in the spec documents' draft), with every other key
    kept: a stable markdown plan's `path`, a draft `file` plan's `uri` (a client may get those
    from another agent). A v1 step that reads as cancelled (`completed`, its content starting
    with `Cancelled: `) shows as `cancelled`, without the prefix, as a v2 client shows it.
    Compare it with `session.plans` to prove the client ends where the session is.

    Given whole notifications (`RecordingSend.sent`: params with `sessionId`) instead of
    updates, it returns the plans of each session, `{session_id: {plan_id: plan}}`: a
    subagent's child session apart from its parent's.

    Args:
        updates: The `update`s of `session/update` notifications in the order sent, or the
            whole params of each.
    """
    listed = list(updates)
    if listed and all("update" in item and "sessionId" in item for item in listed):
        sessions: dict[str, dict[str, dict[str, Any]]] = {}
        for params in listed:
            sessions.setdefault(params["sessionId"], {})
        for session_id in sessions:
            mine = [p["update"] for p in listed if p["sessionId"] == session_id]
            sessions[session_id] = client_view(mine)
        return sessions
    view: dict[str, dict[str, Any]] = {}
    for update in listed:
        kind = update.get("sessionUpdate")
        if kind == "plan_update":
            plan = dict(update["plan"])
            plan_id = plan.pop("planId", None) or plan.pop("id")
            if isinstance(plan.get("entries"), list):
                plan["entries"] = [as_read(entry) for entry in plan["entries"]]
            view[plan_id] = {"id": plan_id, **plan}
        elif kind == "plan_removed":
            view.pop(update.get("planId") or update["id"], None)
    return view
