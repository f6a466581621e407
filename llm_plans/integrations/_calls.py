"""What every integration shares: run a call exactly once, and feed streamed calls by key."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from .._feedback import ToolResult

if TYPE_CHECKING:
    from .._session import PlanSession


async def run_call(
    session: PlanSession, call_id: str | None, name: str, arguments: Any
) -> ToolResult:
    """Apply one plan call the framework is running, exactly once.

    A call whose arguments were streamed into the session (`CallFeeder`) is finished, so its
    previews become the result; any other runs from the framework's raw arguments.
    """
    if call_id is not None and session.is_streaming(call_id):
        return await session.finish(call_id)
    return await session.call(session.plan_tool(name) or name, arguments)


class CallFeeder:
    """Feeds a framework's streamed plan calls into a session, keyed as the stream keys them.

    The framework later runs each tool with the same call id; `run_call` then finishes the
    streamed call instead of applying it a second time.
    """

    def __init__(self, session: PlanSession) -> None:
        self._session = session
        self._open: dict[Hashable, tuple[str, str]] = {}
        self._started: set[str] = set()

    async def start(self, key: Hashable, call_id: str, name: str) -> None:
        """A tool call begins; calls to anything but a plan tool are ignored."""
        await self.drop(key)  # a key reused by a new response, or a call restarted under it
        tool = self._session.plan_tool(name)
        if tool is None or not call_id:
            return
        # A call id still in flight is a leftover (an earlier run that never ran its tool, or
        # a model reusing ids): its text must not be continued by this call's.
        await self._session.abort(call_id)
        self._open[key] = (call_id, tool)
        self._started = {c for c in self._started if self._session.is_streaming(c)}
        self._started.add(call_id)
        await self._session.feed(call_id, tool, b"")

    async def feed(self, key: Hashable, fragment: str) -> None:
        """More of a started call's arguments, as JSON text."""
        open_call = self._open.get(key)
        if open_call is not None and fragment:
            await self._session.feed(*open_call, fragment)

    async def drop(self, key: Hashable) -> None:
        """Stop streaming a call (its arguments came in a form that cannot be fed)."""
        open_call = self._open.pop(key, None)
        if open_call is not None:
            await self._session.abort(open_call[0])

    async def reset(self) -> None:
        """Forget every key, and abort the calls this feeder started that never ran."""
        self._open.clear()
        started, self._started = self._started, set()
        for call_id in started:
            if self._session.is_streaming(call_id):
                await self._session.abort(call_id)
