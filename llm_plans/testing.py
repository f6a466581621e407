"""Helpers for testing code that uses llm_plans: a `send` that records what it is given."""

from __future__ import annotations

import json
from typing import Any


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
        self.fail_with: BaseException | None = None

    async def __call__(self, params: dict[str, Any]) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        # Round-tripping proves the params are plain JSON and decouples them from the caller.
        self.sent.append(json.loads(json.dumps(params)))

    @property
    def updates(self) -> list[dict[str, Any]]:
        """The `update` objects, in order."""
        return [params["update"] for params in self.sent]

    def clear(self) -> None:
        self.sent.clear()
