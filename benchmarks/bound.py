"""The leanest composition of a usual update_plan's work, timed beside the session and the floor.

The floor (run.py) is what any adapter pays for a call. The per-call goals ask llm_plans to
stay within a multiple of it, so the question a missed goal raises is whether the gap is in
the work or in the layers around it. `Lean` answers it: one function that does exactly the
work of the usual `update_plan` and keeps every guarantee, with nothing between the steps.
It takes the session lock with its re-entrancy mark, parses strictly in one pass with its
duplicate-key proof, applies the entries or changes with the library's own checks, keeps the
state, skips a notification the client already holds, marks what did not arrive as stale,
builds and awaits the notification, and writes the same result text.

`Lean` is a measuring instrument, not a second path: the library never uses it. It handles
only the usual call of this benchmark, and `check` holds its notifications and result texts
byte-identical to the session's before anything is timed, so it cannot time less work. It
reaches into the library's internals for each step, which run.py otherwise never does.
"""

from __future__ import annotations

from typing import Any

from llm_plans import PlanSession
from llm_plans._core.apply import _changed
from llm_plans._core.arguments import one_pass
from llm_plans._core.builder import usual_items
from llm_plans._core.outcome import Applied
from llm_plans._core.plans import Book, Stored
from llm_plans._core.results import ToolResult
from llm_plans._lock import SessionLock
from llm_plans._wire.forms import notification, plan_update
from llm_plans._wire.outbox import Send
from llm_plans.dialects.llm_plans import _UPDATED


class Lean:
    """The usual `update_plan` of one session's plan, every step of it in one function."""

    def __init__(self, send: Send, session: PlanSession) -> None:
        self._send = send
        self._session_id = session.session_id
        self._form = session.form
        self._rules = session._rules
        self._plans: dict[str, Stored] = dict(session._book.plans)
        self._held: dict[str, Stored] = {}
        self._stale: dict[str, None] = {}
        self._lock = SessionLock()

    async def update(self, arguments: str) -> ToolResult:
        async with self._lock.held():
            data = arguments.encode()
            args = None
            if len(data) <= self._rules.limits.max_arguments_bytes:
                args = one_pass("update_plan", data, self._rules.limits.max_entry_chars)
            if args is None:
                raise ValueError("not the usual call: Lean times only that")
            current = self._plans[args["id"]]
            changes = args["changes"]
            steps: tuple[int, ...] = ()
            if changes:
                plan: Stored | None = _changed(current, None, changes, self._rules)
                steps = tuple(c["step"] for c in changes)
            else:
                plan = usual_items(
                    current.id, args["entries"], self._rules, current.meta, bounded=True
                )
            if plan is None:
                raise ValueError("not the usual call: Lean times only that")
            self._plans = plans = {**self._plans, plan.id: plan}
            failure = None
            held = self._held.get(plan.id)
            if plan.id in self._stale or held is None or not held.same(plan):
                self._held[plan.id] = plan
                self._stale[plan.id] = None
                try:
                    await self._send(notification(self._session_id, plan_update(self._form, plan)))
                    del self._stale[plan.id]
                except Exception as exc:
                    failure = exc
            said = Applied("update_plan", Book(plans), plan.id, plan, _UPDATED, steps)
            text = said.text(discipline=True)
            return ToolResult(True, text, "update_plan", plan.id, failure=failure)


async def check(lean: Lean, session: PlanSession, arguments: list[str], sent: Any) -> None:
    """Raise unless `lean` sends and answers exactly what `session` does for `arguments`
    (`sent` is the send both were given, keeping the last params as `last`)."""
    for text in arguments * 2:
        ours = await session.call("update_plan", text)
        ours_params = sent.last
        theirs = await lean.update(text)
        if (
            (theirs.ok, theirs.content) != (ours.ok, ours.content)
            or sent.last is ours_params  # sent nothing
            or sent.last != ours_params
        ):
            raise AssertionError("Lean no longer does what the session does: fix bound.py")
