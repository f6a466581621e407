"""Streamed plan tool calls for `PlanSession`: fragments in, previews of complete steps out."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from . import _feedback, _wire
from ._apply import Applied, Book, Rules, apply
from ._errors import StreamError
from ._feedback import ToolResult
from ._inflight import InFlight
from ._models import TOOL_NAMES, CreatePlanArgs
from ._repair import Undecodable, decode, repair
from ._wire import Json, WireForm


class Streaming:
    """`feed` / `finish`, mixed into `PlanSession`, which provides the state declared here."""

    _lock: asyncio.Lock
    _book: Book
    _rules: Rules
    _form: WireForm
    _inflight: dict[str, InFlight]
    _timers: dict[str, asyncio.TimerHandle]
    _flushes: set[asyncio.Task[None]]
    _last_preview: float
    _stream_interval: float

    if TYPE_CHECKING:

        async def _deliver(self, updates: list[tuple[str, Json]]) -> BaseException | None: ...
        async def _call_locked(self, name: str, arguments: Any) -> ToolResult: ...
        def _update_for_id(self, plan_id: str) -> Json: ...
        def legacy_update(self) -> Json: ...
        def plan_tool(self, name: str) -> str | None: ...

    async def feed(self, call_id: str, name: str, fragment: str | bytes) -> None:
        """Add a fragment of a plan tool call's arguments as it streams in.

        The client sees each entry (or line of markdown) once it is complete, at most once
        per `stream_interval`. Call `finish(call_id)` when the call's arguments are complete.
        """
        flight = self._inflight.get(call_id)
        name = self.plan_tool(name) or name
        if flight is None:
            if name not in TOOL_NAMES:
                raise StreamError(
                    f"{name!r} is not a plan tool; route it elsewhere "
                    "(llm_plans.tools.NAMES lists the plan tools)"
                )
            flight = self._inflight[call_id] = InFlight(name)
        elif flight.name != name:
            raise StreamError(f"call {call_id!r} was started as {flight.name}, not {name}")
        text = fragment if isinstance(fragment, str) else flight.decode(fragment)
        flight.parts.append(text)
        if "}" not in text and "]" not in text and "\\" not in text:
            return  # this fragment cannot complete an entry or a line of markdown
        async with self._lock:
            if self._inflight.get(call_id) is flight:
                await self._preview(call_id, flight)

    async def _preview(self, call_id: str, flight: InFlight) -> None:
        loop = asyncio.get_running_loop()
        wait = self._last_preview + self._stream_interval - loop.time()
        if wait > 0:
            # Within the interval: only note that there may be news. The preview is worked
            # out when the timer fires, so CPU follows what is sent, not what streams in.
            flight.pending = True
            if call_id not in self._timers:
                self._timers[call_id] = loop.call_later(wait, self._start_flush, call_id)
            return
        await self._send_preview(flight)

    def _start_flush(self, call_id: str) -> None:
        self._timers.pop(call_id, None)
        task = asyncio.ensure_future(self._flush(call_id))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self, call_id: str) -> None:
        async with self._lock:
            flight = self._inflight.get(call_id)
            if flight is not None and flight.pending:
                await self._send_preview(flight)

    async def _send_preview(self, flight: InFlight) -> None:
        flight.pending = False
        arguments = flight.preview_arguments(self._reserve_id)
        if arguments is None:
            return
        outcome = apply(self._book, flight.name, arguments, self._rules)
        if not isinstance(outcome, Applied) or outcome.plan in (None, flight.preview):
            return
        flight.preview = outcome.plan
        flight.shown = True
        self._last_preview = asyncio.get_running_loop().time()
        if self._form is WireForm.LEGACY:
            update = self.legacy_update()
        else:
            update = _wire.plan_update(self._form, outcome.plan)
        # A preview that fails to arrive is re-sent by the call's final notification.
        await self._deliver([(outcome.plan.id, update)])

    def _reserve_id(self) -> str:
        taken = set(self._book.plans) | {f.reserved_id for f in self._inflight.values()}
        number = self._book.next_number
        while f"plan-{number}" in taken:
            number += 1
        self._book = Book(self._book.plans, number + 1)
        return f"plan-{number}"

    async def finish(self, call_id: str, *, truncated: bool = False) -> ToolResult:
        """Complete a streamed call: apply it, or roll back what its previews showed."""
        async with self._lock:
            flight = self._inflight.pop(call_id, None)
            if flight is None:
                raise StreamError(f"no streamed call {call_id!r}; feed it before finishing it")
            timer = self._timers.pop(call_id, None)
            if timer is not None:
                timer.cancel()
            if truncated:
                result = _feedback.cut_off(flight.name)
            else:
                result = await self._call_locked(flight.name, self._arguments_of(flight))
            final_id = result.plan_id if result.ok else None
            if flight.shown and flight.preview is not None and flight.preview.id != final_id:
                await self._roll_back(flight.preview.id)
            return result

    def is_streaming(self, call_id: str) -> bool:
        """True while a streamed call with this id is fed and not yet finished or aborted."""
        return call_id in self._inflight

    async def abort(self, call_id: str) -> bool:
        """Drop a streamed call in flight and roll back what its previews showed the client.

        As for a rejected call, nothing of it stays. False when no such call is in flight.
        """
        async with self._lock:
            return await self._abort_locked(call_id)

    async def abort_all(self) -> list[str]:
        """Abort every streamed call in flight (a broken stream, a cancelled turn, a retry)."""
        async with self._lock:
            ids = list(self._inflight)
            for call_id in ids:
                await self._abort_locked(call_id)
            return ids

    async def _abort_locked(self, call_id: str) -> bool:
        flight = self._inflight.pop(call_id, None)
        if flight is None:
            return False
        timer = self._timers.pop(call_id, None)
        if timer is not None:
            timer.cancel()
        if flight.shown and flight.preview is not None:
            await self._roll_back(flight.preview.id)
        return True

    def _arguments_of(self, flight: InFlight) -> Any:
        if flight.reserved_id is None:
            return flight.text
        # A create whose previews showed a generated id keeps that id.
        try:
            args = CreatePlanArgs.model_validate_json(flight.text)
        except ValidationError:
            try:
                value = repair(decode(flight.text))
            except Undecodable:
                return flight.text
            if isinstance(value, dict) and value.get("id") is None:
                value["id"] = flight.reserved_id
            return value
        return args if args.id is not None else args.model_copy(update={"id": flight.reserved_id})

    async def _roll_back(self, plan_id: str) -> None:
        if self._form is WireForm.LEGACY:
            await self._deliver([("", self.legacy_update())])
        else:
            await self._deliver([(plan_id, self._update_for_id(plan_id))])
