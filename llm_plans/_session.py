"""`PlanSession`: plan tool calls in, `session/update` notifications out, for one ACP session."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import TypeAdapter

from . import _feedback, _wire
from ._apply import AnyPlan, Applied, Book, Rejected, Rules, apply
from ._calls import native_result, parse_call
from ._errors import ConfigurationError
from ._feedback import ToolResult
from ._inflight import InFlight
from ._legacy import ReadText, plan_entries, read_plan_file
from ._limits import Limits
from ._models import ItemsPlan, Plan
from ._registry import DEFAULT_PREFIXES, Names
from ._streaming import Streaming
from ._wire import Json, WireForm

Send = Callable[[Json], Awaitable[Any]]
"""Sends the params of one `session/update` notification: `{"sessionId": ..., "update": ...}`."""

_PLAN_ADAPTER: TypeAdapter[AnyPlan] = TypeAdapter(Plan)
_SNAPSHOT_VERSION = 1
# Editors redraw on every update; ten a second looks live without flooding the pipe.
DEFAULT_STREAM_INTERVAL = 0.1


class PlanSession(Streaming):
    """The plans of one ACP session, forwarded to its client in the form the client supports.

    State commits before sending: when `send` fails, the call still counts (the model's
    result says the client was not reached) and the next call re-sends what the client missed.

    Example:
        session = PlanSession(send, session_id="sess_1", client_capabilities=caps)
        result = await session.call("create_plan", '{"type": "items", "entries": [...]}')
    """

    def __init__(
        self,
        send: Send,
        *,
        session_id: str,
        client_capabilities: Any = None,
        form: WireForm | str | None = None,
        limits: Limits | None = None,
        workspace: str | os.PathLike[str] | None = None,
        discipline: bool = True,
        read_text: ReadText = read_plan_file,
        stream_interval: float = DEFAULT_STREAM_INTERVAL,
        on_commit: Callable[[PlanSession], None] | None = None,
        tool_prefixes: Iterable[str] = DEFAULT_PREFIXES,
    ) -> None:
        if not callable(send):
            raise ConfigurationError(
                "send must be an async callable taking the session/update params dict; "
                f"got {type(send).__name__}. With the ACP SDK, use llm_plans.acp_send(conn)."
            )
        self._send = send
        self.session_id = session_id
        self._form = _wire.form_for(client_capabilities) if form is None else _wire.parse_form(form)
        self._rules = Rules(limits or Limits(), Path(workspace) if workspace else None)
        self._discipline = discipline
        self._read_text = read_text
        self._book = Book()
        self._lock = asyncio.Lock()
        self._stale: set[str] = set()  # ids whose last notification did not reach the client
        self._stream_interval = stream_interval
        self._on_commit = on_commit
        self._inflight: dict[str, InFlight] = {}
        self._last_preview = float("-inf")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._flushes: set[asyncio.Task[None]] = set()
        self._names = Names(tool_prefixes)

    @property
    def form(self) -> WireForm:
        """The wire form this session sends."""
        return self._form

    @property
    def limits(self) -> Limits:
        return self._rules.limits

    @property
    def plans(self) -> Mapping[str, AnyPlan]:
        """Plan id to current plan, in creation order (read-only)."""
        return MappingProxyType(self._book.plans)

    async def call(self, name: str, arguments: Any) -> ToolResult:
        """Run one plan tool call (arguments as JSON text or a decoded dict)."""
        async with self._lock:
            return await self._call_locked(name, arguments)

    def plan_tool(self, name: str) -> str | None:
        """The plan tool (`create_plan`, ...) a tool name as the model sent it calls, or None.

        Plain names, and those with one of the session's `tool_prefixes`, resolve.
        """
        return self._names.resolve(name)

    def handles(self, call: Any) -> bool:
        """True when `call` (as an SDK returns it) is a call to one of the plan tools."""
        parsed = parse_call(call)
        return parsed is not None and self.plan_tool(parsed.name) is not None

    async def handle(self, call: Any, *, truncated: bool = False) -> dict[str, Any] | None:
        """Run a tool call as an SDK returns it; its result in that provider's shape.

        Accepts an OpenAI chat `ChatCompletionMessageToolCall`, an OpenAI Responses
        `ResponseFunctionToolCall` or an Anthropic `ToolUseBlock` (objects or dicts). Returns
        None for a call to any other tool. Pass `truncated=True` for the last call of a
        response cut by the token limit (`finish_reason == "length"`,
        `stop_reason == "max_tokens"`): it is rejected as cut off.
        """
        parsed = parse_call(call)
        tool = None if parsed is None else self.plan_tool(parsed.name)
        if parsed is None or tool is None:
            return None
        if truncated:
            result = _feedback.cut_off(tool)
        else:
            result = await self.call(tool, parsed.arguments)
        return native_result(parsed, result.content, result.ok)

    async def _call_locked(self, name: str, arguments: Any) -> ToolResult:
        outcome = apply(self._book, name, arguments, self._rules)
        if isinstance(outcome, Rejected):
            text = _feedback.rejection(outcome.tool, outcome.problems, context=outcome.context)
            return ToolResult(False, text, outcome.tool)
        self._book = outcome.book
        if self._on_commit is not None:
            self._on_commit(self)  # e.g. persist snapshot(); runs before the client hears
        failure = await self._deliver(self._updates_for(outcome))
        return ToolResult(True, self._success_text(outcome, failure), outcome.tool, outcome.plan_id)

    # ---- notifications ----------------------------------------------------------------------

    def _updates_for(self, outcome: Applied) -> list[tuple[str, Json]]:
        if self._form is WireForm.LEGACY:
            return [("", self.legacy_update())]
        ids = [i for i in self._stale if i != outcome.plan_id] + [outcome.plan_id]
        return [(i, self._update_for_id(i)) for i in ids]

    def _update_for_id(self, plan_id: str) -> Json:
        plan = self._book.plans.get(plan_id)
        if plan is None:
            return _wire.plan_removed(self._form, plan_id)
        return _wire.plan_update(self._form, plan)

    def legacy_update(self) -> Json:
        """The legacy `plan` update for the current plans: every entry, in creation order."""
        shown = dict(self._book.plans)
        for flight in self._inflight.values():
            if flight.preview is not None:
                shown[flight.preview.id] = flight.preview  # a streamed plan shows as it grows
        return _wire.legacy_plan(
            e for plan in shown.values() for e in plan_entries(plan, self._read_text)
        )

    async def _deliver(self, updates: list[tuple[str, Json]]) -> BaseException | None:
        for index, (plan_id, update) in enumerate(updates):
            try:
                await self._send(_wire.notification(self.session_id, update))
            except Exception as exc:
                self._stale.update(i for i, _ in updates[index:] if i)
                return exc
            except BaseException:
                self._stale.update(i for i, _ in updates[index:] if i)
                raise
            self._stale.discard(plan_id)
        return None

    async def replay(self) -> None:
        """Re-send every current plan, as after `session/load`."""
        async with self._lock:
            if self._form is WireForm.LEGACY:
                updates = [("", self.legacy_update())] if self._book.plans else []
            else:
                updates = [(i, self._update_for_id(i)) for i in (*self._stale, *self._book.plans)]
                updates = list(dict(updates).items())
            failure = await self._deliver(updates)
            if failure is not None:
                raise failure

    # ---- texts ------------------------------------------------------------------------------

    def _success_text(self, outcome: Applied, failure: BaseException | None) -> str:
        verb = {"create_plan": "Created", "update_plan": "Updated", "remove_plan": "Removed"}
        lines = [f'{verb[outcome.tool]} plan "{outcome.plan_id}".']
        if outcome.plan is not None:
            lines.append(_feedback.describe(outcome.plan, outcome.changed))
            if isinstance(outcome.plan, ItemsPlan):
                if outcome.tool == "create_plan":
                    lines.append(_feedback.progress_hint(outcome.plan))
                if self._discipline:
                    lines += _feedback.discipline_notes(outcome.plan)
        else:
            lines.append(_feedback.ids_list(self._book.plans).replace("Existing", "Remaining"))
        if failure is not None:
            lines.append(
                f"Warning: the change is saved, but the client could not be notified "
                f"({type(failure).__name__}: {failure}). It will be re-sent with the next "
                "plan call."
            )
        return "\n".join(lines)

    # ---- restarts ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The session's plan state as JSON-ready data, for `from_snapshot`."""
        return {
            "version": _SNAPSHOT_VERSION,
            "next_number": self._book.next_number,
            "plans": [
                _PLAN_ADAPTER.dump_python(p, mode="json", by_alias=True, exclude_none=True)
                for p in self._book.plans.values()
            ],
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replace this session's plans with those of a `snapshot()`; sends nothing."""
        if snapshot.get("version") != _SNAPSHOT_VERSION:
            raise ConfigurationError(
                f"unsupported snapshot version {snapshot.get('version')!r}; "
                f"expected {_SNAPSHOT_VERSION}"
            )
        plans = [_PLAN_ADAPTER.validate_python(p) for p in snapshot["plans"]]
        self._book = Book({p.id: p for p in plans}, int(snapshot["next_number"]))
        self._stale.clear()
