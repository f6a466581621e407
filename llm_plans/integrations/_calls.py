"""What every integration shares: run a call exactly once, and feed streamed calls by key."""

from __future__ import annotations

import asyncio
import weakref
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


# How long a tool waits for a stream consumer that is behind the run to reach its call (its
# start, then the end of its arguments). Consumers handle events in microseconds; past this,
# one is not consuming, and the tool applies the call as the framework hands it over.
CONSUMER_WAIT = 2.0


class SharedCalls:
    """Streamed calls shared by a framework's stream consumer and its tool runner.

    For frameworks that run tools while the user's code may still be reading the stream (the
    OpenAI Agents SDK, the Claude Agent SDK): once the consumer has shown that the model
    streams, a tool waits briefly for the consumer to reach its call and the end of its
    arguments, then finishes the streamed call. A call the tool applied without its stream
    (the consumer stopped) is left alone by the consumer if its stream comes later.
    """

    def __init__(self, session: PlanSession) -> None:
        self.session = session
        self.previewing = False
        """A consumer feeds this session; set by the framework's previews object."""
        self._feeder = CallFeeder(session)
        self._calls: dict[Hashable, str] = {}  # stream key -> call id
        self._done: dict[str, asyncio.Event] = {}  # call id -> its arguments are complete
        self._settled: set[str] = set()  # call ids the tools applied before the stream showed them
        self._streamed = False  # stream events came: the model streams, a tool may wait for them
        self._arrivals: dict[str, asyncio.Event] = {}  # call id -> its tool waits for its start

    async def start(self, key: Hashable, call_id: str, name: str) -> None:
        self._streamed = True
        if self.session.plan_tool(name) is None:
            return
        if call_id in self._settled:
            self._settled.discard(call_id)  # already applied: no previews for it
            return
        self._calls[key] = call_id
        self._done[call_id] = asyncio.Event()
        await self._feeder.start(key, call_id, name)
        arrival = self._arrivals.get(call_id)
        if arrival is not None:
            arrival.set()

    async def feed(self, key: Hashable, fragment: str) -> None:
        await self._feeder.feed(key, fragment)

    def done(self, key: Hashable) -> None:
        """The call under `key` has all its arguments."""
        event = self._done.get(self._calls.get(key, ""))
        if event is not None:
            event.set()

    async def reset(self) -> None:
        """A new response: calls of an earlier one that never ran are aborted."""
        self._streamed = True
        await self._feeder.reset()
        self._calls.clear()
        self._done = {c: e for c, e in self._done.items() if self.session.is_streaming(c)}

    async def run(self, call_id: str | None, name: str, arguments: Any) -> ToolResult:
        """Apply a call the framework runs: finish it if streamed, else apply `arguments`."""
        if call_id is not None and self.previewing and self._streamed:
            await self._await_start(call_id)
        done = self._done.pop(call_id, None) if call_id is not None else None
        if done is not None and self.session.is_streaming(call_id or ""):
            try:
                await asyncio.wait_for(done.wait(), CONSUMER_WAIT)
            except asyncio.TimeoutError:
                await self.session.abort(call_id or "")  # no consumer: apply the run's copy
        elif done is None and call_id is not None and self.previewing:
            self._settled.add(call_id)
        return await run_call(self.session, call_id, name, arguments)

    async def _await_start(self, call_id: str) -> None:
        if call_id in self._done:
            return
        arrival = self._arrivals[call_id] = asyncio.Event()
        try:
            await asyncio.wait_for(arrival.wait(), CONSUMER_WAIT)
        except asyncio.TimeoutError:
            pass
        finally:
            del self._arrivals[call_id]


_SHARED: weakref.WeakKeyDictionary[PlanSession, dict[str, SharedCalls]] = (
    weakref.WeakKeyDictionary()
)


def shared_calls(session: PlanSession, framework: str) -> SharedCalls:
    """The one `SharedCalls` of `session` for `framework`, made on first use."""
    per_session = _SHARED.setdefault(session, {})
    if framework not in per_session:
        per_session[framework] = SharedCalls(session)
    return per_session[framework]
