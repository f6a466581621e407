"""What every integration shares: streamed plan calls keyed by run and call id, applied once.

A framework streams a call's arguments (its stream events) and later runs the tool with the
call's id and the arguments it runs it with. `Run` feeds one run's streamed calls into the
session, keyed as that run's stream keys them; `Calls` finds a streamed call again when the
tool runs. Nothing is keyed by position alone: two concurrent runs' streams never meet.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import weakref
from collections.abc import Collection, Hashable
from typing import TYPE_CHECKING, Any

from .._core.results import ToolResult
from .._errors import StreamError

if TYPE_CHECKING:
    from .._session import PlanSession

# How long a tool waits for a stream consumer that is behind the run to reach its call (its
# start, then the end of its arguments). Consumers handle events in microseconds; past this,
# one is not consuming, and the tool applies the call as the framework hands it over.
CONSUMER_WAIT = 2.0

# Makes a stream's session id unique while another run streams a call of the same id.
_serial = itertools.count(1)


class Streamed:
    """One plan call a run streams into the session, and what it streamed."""

    def __init__(self, call_id: str, sid: str, tool: str, limit: int) -> None:
        self.call_id = call_id
        self.sid = sid
        """The session's id for this stream: the call id unless another run streams it too."""
        self.tool = tool
        self.done = asyncio.Event()
        """All its arguments came (the stream said so)."""
        self._limit = limit
        self._parts: list[str] | None = []  # None past the limit: the digest still compares
        self._size = 0
        self._digest = hashlib.sha256()

    def add(self, fragment: str) -> None:
        data = fragment.encode("utf-8", "surrogatepass")
        self._digest.update(data)
        self._size += len(data)
        if self._parts is not None:
            self._parts.append(fragment)
            if self._size > self._limit:
                self._parts = None

    def same(self, arguments: Any) -> bool:
        """True when `arguments`, as the framework runs the call, are what was streamed.

        Text the same byte for byte is; so are decoded arguments equal to the streamed text's
        JSON, compared in canonical form (so `1`, `1.0` and `true` differ, as an edit may).
        """
        if isinstance(arguments, (bytes, bytearray)):
            data = bytes(arguments)
        elif isinstance(arguments, str):
            data = arguments.encode("utf-8", "surrogatepass")
        else:
            data = None
        if (
            data is not None
            and len(data) == self._size
            and hashlib.sha256(data).digest() == self._digest.digest()
        ):
            return True
        if self._parts is None:
            return False
        try:
            streamed = json.loads("".join(self._parts))
            run = json.loads(data) if data is not None else arguments
            return _canonical(streamed) == _canonical(run)
        except (TypeError, ValueError):
            return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True)


class Calls:
    """The streamed plan calls of one session under one framework, across all its runs.

    `lagging`: the framework may run a tool before its stream consumer has reached the call
    (the consumer is the user's loop over the run's events, not part of the run: the OpenAI
    Agents SDK, the Claude Agent SDK). Once a consumer has shown that the model streams, such
    a tool waits briefly for its call's stream, then finishes it. A call the tool applied
    without its stream (the consumer stopped) is left alone if its stream comes later.
    """

    def __init__(self, session: PlanSession, *, lagging: bool = False) -> None:
        self.session = session
        self.previewing = False
        """A consumer feeds this session; set by the framework's previews object."""
        self._lagging = lagging
        self._live: dict[str, list[Streamed]] = {}  # call id -> its streams in flight
        self._owners: dict[Streamed, Run] = {}  # every stream registered, and its run
        self._sids: set[str] = set()  # their session ids: none is reused while registered
        self._streamed = False  # stream events came: the model streams, a tool may wait
        self._arrivals: dict[str, asyncio.Event] = {}  # call id -> its tool awaits its start
        self._settled: dict[str, None] = {}  # applied before their stream showed: skip it
        self.runs_of: dict[Hashable, Run] = {}
        """A framework's id of a tool run in progress -> the run whose streams it may finish."""

    def run(self) -> Run:
        """A new run's streamed calls."""
        return Run(self)

    def stream_seen(self) -> None:
        """A consumer saw a stream event: the model streams, so a tool may wait for it."""
        self._streamed = True

    async def apply(
        self,
        call_id: str | None,
        name: str,
        arguments: Any,
        *,
        runs: Collection[Run | None] | None = None,
    ) -> ToolResult:
        """Apply a call the framework runs with `arguments`, exactly once.

        A call streamed under this id (by one of `runs` when given, else by any run) is
        finished: its previews become the result when the framework runs it as streamed; when
        it runs it with other arguments (a human's edit, a hook's `updatedInput`), those
        apply, in place of what the previews showed. Any other call applies `arguments`.
        """
        session = self.session
        if call_id and self._lagging and self.previewing and self._streamed:
            await self._await_start(call_id)
        streamed = self._take(call_id, runs, arguments) if call_id else None
        if streamed is None:
            if call_id and self._lagging and self.previewing:
                self._settled[call_id] = None
                while len(self._settled) > _SETTLED_KEPT:
                    del self._settled[next(iter(self._settled))]
            return await session.call(session.plan_tool(name) or name, arguments)
        if self._lagging:
            try:
                await asyncio.wait_for(streamed.done.wait(), CONSUMER_WAIT)
            except asyncio.TimeoutError:
                await session.abort(streamed.sid)  # no consumer: apply the run's copy
        try:
            if streamed.same(arguments):
                return await session.finish(streamed.sid)
            # Run with other arguments than streamed: those apply, and the previews of the
            # streamed ones are taken back by the same notification.
            return await session.finish(streamed.sid, arguments=arguments)
        except StreamError:  # its stream ended meanwhile (its run ended, or no consumer)
            return await session.call(session.plan_tool(name) or name, arguments)

    def _take(
        self, call_id: str, runs: Collection[Run | None] | None, arguments: Any
    ) -> Streamed | None:
        live = self._live.get(call_id, [])
        if runs is not None:  # the first of `runs` that streamed the call has it
            live = [s for run in runs for s in live if self._owners.get(s) is run]
        if not live:
            return None
        # Runs that cannot be told apart at the tool and reuse an id (fake models do): the
        # stream of these very arguments is this call's, else a complete one, else the first.
        streamed = next((s for s in live if s.same(arguments)), None)
        streamed = streamed or next((s for s in live if s.done.is_set()), live[0])
        self._forget(streamed)
        return streamed if self.session.is_streaming(streamed.sid) else None

    def _forget(self, streamed: Streamed) -> None:
        owner = self._owners.pop(streamed, None)
        if owner is None:
            return  # forgotten already (its sid may be another stream's now)
        owner._forget(streamed)
        self._sids.discard(streamed.sid)
        live = self._live[streamed.call_id]
        live.remove(streamed)
        if not live:
            del self._live[streamed.call_id]

    async def _await_start(self, call_id: str) -> None:
        if call_id in self._live:
            return
        arrival = self._arrivals[call_id] = asyncio.Event()
        try:
            await asyncio.wait_for(arrival.wait(), CONSUMER_WAIT)
        except asyncio.TimeoutError:
            pass
        finally:
            del self._arrivals[call_id]

    def _sid(self, call_id: str) -> str:
        sid = call_id
        while sid in self._sids or self.session.is_streaming(sid):
            sid = f"{call_id}#{next(_serial)}"
        self._sids.add(sid)
        return sid


# Ids of calls applied before their stream showed, kept to skip that stream when it comes.
_SETTLED_KEPT = 1024


class Run:
    """The plan calls one run streams, keyed as its stream keys them (an index, an item id).

    The framework later runs each tool with the same call id; `Calls.apply` then finishes the
    streamed call instead of applying it a second time. `end()` takes back the previews of
    every call of this run that no tool ran.
    """

    def __init__(self, calls: Calls) -> None:
        self._calls = calls
        self._open: dict[Hashable, Streamed] = {}
        self._started: dict[str, Streamed] = {}  # call id -> this run's stream of it

    async def start(self, key: Hashable, call_id: str, name: str) -> None:
        """A tool call begins; calls to anything but a plan tool are ignored."""
        calls = self._calls
        calls.stream_seen()
        await self.drop(key)  # a key reused by a new response, or a call restarted under it
        tool = calls.session.plan_tool(name)
        if tool is None or not call_id:
            return
        if call_id in calls._settled:
            del calls._settled[call_id]  # already applied: no previews for it
            return
        earlier = self._started.get(call_id)
        if earlier is not None:  # this run reused the id: the earlier call's text ends here
            await self._abort(earlier)
        streamed = Streamed(
            call_id, calls._sid(call_id), tool, calls.session.limits.max_arguments_bytes
        )
        self._open[key] = self._started[call_id] = streamed
        calls._live.setdefault(call_id, []).append(streamed)
        calls._owners[streamed] = self
        calls.session.feed_nowait(streamed.sid, tool, b"")  # (starts it: nothing to preview)
        arrival = calls._arrivals.get(call_id)
        if arrival is not None:
            arrival.set()

    async def feed(self, key: Hashable, fragment: str) -> None:
        """More of a started call's arguments, as JSON text."""
        streamed = self._open.get(key)
        if streamed is None or not fragment:
            return
        if not self._calls.session.is_streaming(streamed.sid):
            del self._open[key]  # finished or aborted: later text belongs to nothing
            return
        streamed.add(fragment)
        # As the provider adapters hand fragments over: no await, no timer, no task of the
        # session's own; a preview due goes out now.
        if self._calls.session.feed_nowait(streamed.sid, streamed.tool, fragment):
            await self._calls.session.flush()

    def done(self, key: Hashable) -> None:
        """The call under `key` has all its arguments."""
        streamed = self._open.get(key)
        if streamed is not None:
            streamed.done.set()

    async def drop(self, key: Hashable) -> None:
        """Stop streaming a call (its arguments came in a form that cannot be fed)."""
        streamed = self._open.pop(key, None)
        if streamed is not None:
            await self._abort(streamed)

    async def end_call(self, call_id: str) -> None:
        """The framework answered the call without running its tool (denied, refused): its
        previews are taken back."""
        streamed = self._started.get(call_id)
        if streamed is not None:
            await self._abort(streamed)

    async def end(self) -> None:
        """The run is over: take back the previews of its calls that no tool ran."""
        self._open.clear()
        for streamed in list(self._started.values()):
            await self._abort(streamed)

    async def _abort(self, streamed: Streamed) -> None:
        # Aborted while still registered, so its session id cannot meanwhile go to another
        # stream; a tool that took it first has finished it (or applies it plainly).
        if streamed in self._calls._owners:
            await self._calls.session.abort(streamed.sid)
        self._calls._forget(streamed)

    def _forget(self, streamed: Streamed) -> None:
        if self._started.get(streamed.call_id) is streamed:
            del self._started[streamed.call_id]


_SHARED: weakref.WeakKeyDictionary[PlanSession, dict[str, Calls]] = weakref.WeakKeyDictionary()


def shared_calls(session: PlanSession, framework: str, *, lagging: bool = False) -> Calls:
    """The one `Calls` of `session` for `framework`, made on first use."""
    per_session = _SHARED.setdefault(session, {})
    if framework not in per_session:
        per_session[framework] = Calls(session, lagging=lagging)
    return per_session[framework]
