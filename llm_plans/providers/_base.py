"""What every provider shares: a parsed tool call, and the base of the stream adapters."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, TypeVar

from .._core.results import ToolResult

__all__ = ["Arguments", "ProviderCall", "Session", "Shape", "StreamAdapter", "get"]


Arguments = str | Mapping[str, Any] | None
"""A call's arguments as the provider sent them: JSON text, or an already decoded object."""
Shape = Callable[["ProviderCall", str, bool], dict[str, Any]]
"""Puts a tool result in the provider's native shape: (call, content, ok) -> message."""


def get(obj: Any, key: str) -> Any:
    """An attribute of an SDK object, or a key of its dict form; None when it has neither.

    Runs several times per stream chunk, so each kind of object takes its fastest path:
    a dict its own lookup; an object its instance `__dict__` (and pydantic's extras) first.
    A name an SDK object lacks is not asked of `getattr`: on pydantic models a missing
    attribute goes through `__getattr__` and an exception, about 5 µs a time.
    """
    if type(obj) is dict:  # the common case first: one type check, no isinstance walk
        return obj.get(key)
    kind = _kinds.get(type(obj))
    if kind is None:
        kind = _kinds[type(obj)] = _kind(type(obj))
    if kind == _MAPPING:
        return obj.get(key)
    if kind == _RECORD:
        values = obj.__dict__
        if key in values:
            return values[key]
        extra = obj.__pydantic_extra__
        if extra and key in extra:
            return extra[key]
        if key not in _class_names(type(obj)):
            return None
    return getattr(obj, key, None)


def keyed(value: Any) -> Any:
    """A value a stream event keys something by (an index, an id), as given when it can key
    a dict; None for what cannot (a list or a dict a broken server sent there), which then
    keys nothing, as if it were missing."""
    try:
        hash(value)
    except TypeError:
        return None
    return value


def listed(value: Any) -> list[Any] | tuple[Any, ...]:
    """A list a stream event carries (its choices, its tool calls); empty for anything else."""
    return value if type(value) is list or type(value) is tuple else ()


Fields = Callable[[Any], "Mapping[str, Any] | None"]
"""Reads one object's fields for a stream adapter's fast path (see `field_reader`)."""


def field_reader(*names: str) -> Fields:
    """A reader giving, for an object, a mapping that answers `get(obj, name)` for each of
    `names` at dict speed; None for an object it cannot read so.

    For the stream adapters' usual chunk, read several levels deep per token: one reader
    per level, each remembering per type whether it can read it. A dict is its own mapping.
    A pydantic model (an SDK object) whose class declares every one of `names` as a field
    is read through its instance `__dict__`, extras or not: `get` looks there first too, and
    a declared field that is not there (left unset) is None to both, as pydantic takes field
    names out of the class namespace. The one way they could differ, a declared name only
    among the extras, takes an alias (`model_construct` given both), and no field the
    adapters read has one. Anything else gets None, and the adapter reads it with `get`.
    """
    wanted = frozenset(names)
    readable: dict[type, bool] = {}

    def read(obj: Any) -> Mapping[str, Any] | None:
        kind = type(obj)
        if kind is dict:
            return obj  # type: ignore[no-any-return]
        known = readable.get(kind)
        if known is None:
            known = readable[kind] = wanted <= _declared_fields(kind)
        return obj.__dict__ if known else None

    return read


_MAPPING, _RECORD, _OTHER = range(3)
_kinds: dict[type, int] = {}
_names: dict[type, frozenset[str]] = {}


def _kind(kind: type) -> int:
    if issubclass(kind, Mapping):
        return _MAPPING
    # A pydantic model: its fields sit in the instance `__dict__`, extras in
    # `__pydantic_extra__`, and its `__getattr__` only knows private `_names`.
    if hasattr(kind, "__pydantic_fields__") and "__pydantic_extra__" in dir(kind):
        return _RECORD
    return _OTHER


def _declared_fields(kind: type) -> frozenset[str]:
    """The field names a pydantic model class declares; none for any other class."""
    if _kind(kind) != _RECORD:
        return frozenset()
    return frozenset(kind.__pydantic_fields__)  # type: ignore[attr-defined]


def _class_names(kind: type) -> frozenset[str]:
    """Names the class itself answers (properties, methods): asked through `getattr`."""
    names = _names.get(kind)
    if names is None:
        names = _names[kind] = frozenset(dir(kind))
    return names


@dataclass(frozen=True)
class ProviderCall:
    """One tool call as a provider sent it, and how that provider expects its result.

    Made by `parse`, rarely by hand.

    Args:
        call_id: The id as sent (even ""); None for providers whose calls carry none
            (Ollama).
        name: The tool name as sent, prefix included (`mcp__plans__create_plan`).
        arguments: The arguments as sent: JSON text, an already decoded object, or None.
        shape: Puts a tool result in the provider's native shape, from the call, the
            result's text and whether it succeeded.
    """

    call_id: str | None
    """The id as sent (even ""); None for providers whose calls carry none (Ollama)."""
    name: str
    """The tool name as sent, prefix included (`mcp__plans__create_plan`)."""
    arguments: Arguments
    """The arguments as sent: JSON text, an already decoded object, or None."""
    shape: Shape = field(repr=False, compare=False)
    """Puts a tool result in the provider's native shape, from the call, the result's text
    and whether it succeeded."""

    def result(self, content: str, ok: bool) -> dict[str, Any]:
        """The tool result to append to the conversation, in the provider's native shape.

        Args:
            content: The result's text (`ToolResult.content`).
            ok: Whether the call succeeded; a rejection is flagged as an error where the
                provider has a flag (Anthropic's `is_error`), else only its text says so.
        """
        return self.shape(self, content, ok)


class Session(Protocol):
    """What the stream adapters use of a `PlanSession`: the adapters build on the session,
    and the session knows nothing of them."""

    def plan_tool(self, name: str) -> Any: ...

    def feed_nowait(self, call_id: str, name: str, fragment: str | bytes) -> bool: ...

    async def flush(self) -> None: ...

    async def finish(
        self, call_id: str, *, truncated: bool = False, arguments: Any = None
    ) -> ToolResult: ...

    async def abort(self, call_id: str) -> bool: ...


_adapters = itertools.count(1)  # numbers each adapter, for session call ids unique to it
_Adapter = TypeVar("_Adapter", bound="StreamAdapter")
_OUTSIDE = re.compile(r'[{}\[\]"]')
_INSIDE = re.compile(r'["\\]')


@dataclass
class JsonEnd:
    """Whether a JSON text fed piece by piece has closed its outermost object or array.

    Each piece is scanned once, for quotes, escapes and brackets only. Asking after every
    delta used to parse all the text so far: a stream whose deltas each end in `}` cost time
    quadratic in its length (40 KB took 6 s).
    """

    depth: int = 0
    in_string: bool = False
    escaped: bool = False
    closed: bool = False
    """The outermost object or array closed, with nothing but whitespace after it."""
    trailing: bool = False
    """Text follows the closed value: the whole is not one JSON value, whatever comes."""

    def feed(self, text: str) -> None:
        at, size = 0, len(text)
        while at < size and not self.trailing:
            if self.escaped:  # the character after a backslash that ended the last piece
                self.escaped, at = False, at + 1
            elif self.in_string:
                found = _INSIDE.search(text, at)
                if found is None:
                    return
                at = found.end()
                if found.group() == "\\":
                    self.escaped = True
                else:
                    self.in_string = False
            elif self.closed:
                self.trailing = bool(text[at:].strip())
                return
            else:
                found = _OUTSIDE.search(text, at)
                if found is None:
                    return
                at, mark = found.end(), found.group()
                if mark == '"':
                    self.in_string = True
                elif mark in "{[":
                    self.depth += 1
                elif self.depth > 0:
                    self.depth -= 1
                    self.closed = self.depth == 0


@dataclass
class StreamedCall:
    """One tool call seen in a stream: a plan call fed to the session, or one ignored."""

    provider_id: str | None
    name: str
    tool: str | None
    """The plan tool it calls; None for another tool (tracked so its deltas go nowhere)."""
    session_id: str = ""
    """The id it has in the session: unique per adapter and response, so a provider id that
    the next response reuses never meets this call's text."""
    group: Any = None
    """What finishes it with others (a choice of an `n > 1` chat stream)."""
    final: Arguments = None
    """Complete arguments the provider reported (a done event, dict arguments), if any."""
    parts: list[str] = field(default_factory=list)
    """The argument text so far; add to it with `add`."""
    done: bool = False
    tentative: bool = False
    """Started only once arguments come (see `StreamAdapter._start`)."""
    result: dict[str, Any] | None = None
    """Its native tool result, once finished."""

    end: JsonEnd = field(default_factory=JsonEnd, repr=False)
    _scanned: int = field(default=0, repr=False)
    _whole: bool | None = field(default=None, repr=False)

    def add(self, fragment: str) -> None:
        """More argument text (scanned only when asked whether it is complete)."""
        self.parts.append(fragment)

    def is_complete_json(self) -> bool:
        """The arguments so far already form a whole JSON object or array (so more text is a
        new call). Runs for every named delta of servers that repeat names: the text is
        parsed only once its brackets have closed, and then only once."""
        if self.final is not None:
            return True
        if self._scanned < len(self.parts):  # each piece is scanned once, when first asked
            self.end.feed("".join(self.parts[self._scanned :]))
            self._scanned = len(self.parts)
        if not self.end.closed or self.end.trailing:
            return False
        if self._whole is None:
            try:
                json.loads("".join(self.parts))
            except ValueError:
                self._whole = False
            else:
                self._whole = True
        return self._whole


class StreamAdapter:
    """Base of the per-provider adapters: starts, feeds, finishes and aborts plan calls.

    Use it as an async context manager: calls still open when the block exits without
    `finish()` (the stream broke, the turn was cancelled) are aborted, which rolls back
    their previews on the client exactly as a rejected call's.

    An adapter follows one response at a time. Fed the start of another (Anthropic's
    `message_start`, Responses' `response.created`, a chat chunk with a new id once every
    choice finished), it aborts what the last one left open and starts its results anew.

    Args:
        session: The `PlanSession` the plan calls go to (anything with the methods the
            adapters use of it).
    """

    def __init__(self, session: Session) -> None:
        self._session = session
        self._serial = next(_adapters)
        self._response = 0
        self._count = 0
        self._calls: list[StreamedCall] = []
        self._truncated: dict[Any, bool] = {}
        self.truncated = False
        """The model stopped at its output token limit (in any choice)."""

    # ---- public -----------------------------------------------------------------------------

    @property
    def results(self) -> list[dict[str, Any]]:
        """Native tool results of the plan calls finished so far, in the order the calls
        began (as the model wrote them), whichever finished first."""
        return [call.result for call in self._calls if call.result is not None]

    async def on_event(self, event: Any) -> None:
        """Take one stream event (or chunk) exactly as the SDK yields it; plan steps reach the
        client as they complete.

        Args:
            event: The event or chunk, as an SDK object or its dict; any kind the provider
                streams (those about no plan call are passed over).
        """
        due = self._usual(event)
        if due is None:
            await self._general(event)
        elif due:
            await self._session.flush()

    def _usual(self, event: Any) -> bool | None:
        """The usual event of a provider's stream (more argument text for the call being
        streamed), taken at once without awaiting: whether a preview is due. None, having
        changed nothing, for any other event, which `_general` takes (and would take this one
        the same way)."""
        return None

    async def _general(self, event: Any) -> None:
        """Any event, read with `get`: what it starts, feeds, finishes or ends."""
        raise NotImplementedError

    async def finish(self) -> list[dict[str, Any]]:
        """The stream ended: finish every plan call still open; the results of all of them."""
        for call in self._calls:
            await self._finish(call)
        return self.results

    async def abort(self) -> list[str]:
        """Drop every plan call this adapter started and did not finish, rolling back their
        previews on the client; the provider ids of the calls dropped."""
        dropped = []
        for call in self._calls:
            # Not `done` alone: a finish cut off before the session took it (cancelled while
            # it waited for the lock) left the call done, with no result, still streaming.
            if call.session_id and call.result is None:
                call.done = True
                if await self._session.abort(call.session_id):
                    dropped.append(call.provider_id or "")
        return dropped

    aclose = abort

    async def __aenter__(self: _Adapter) -> _Adapter:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.abort()

    # ---- for the provider modules -----------------------------------------------------------

    def _shape(self, call: StreamedCall, content: str, ok: bool) -> dict[str, Any]:
        raise NotImplementedError

    async def _new_response(self) -> None:
        """A new response starts: what the last one left open is dropped, results restart."""
        await self.abort()
        self._response += 1
        self._calls.clear()
        self._truncated.clear()
        self.truncated = False

    async def _start(
        self, provider_id: str | None, name: str, group: Any = None, *, tentative: bool = False
    ) -> StreamedCall:
        """Track a new call; a plan call also starts in the session once its name is known.

        A tentative call starts only once arguments come: a server may repeat a finished
        call's name on an empty delta, which must not become a call of its own.
        """
        call = StreamedCall(provider_id, name, None, group=group, tentative=tentative)
        self._calls.append(call)
        await self._name(call, name)
        return call

    async def _name(self, call: StreamedCall, name: Any) -> None:
        """Give a call its tool name (some servers send it after the id); starts plan calls."""
        if call.tool is not None or not isinstance(name, str) or not name:
            return
        call.name = name
        call.tool = self._session.plan_tool(name)
        await self._open(call)

    async def _open(self, call: StreamedCall) -> None:
        if call.tool is None or call.session_id or call.tentative:
            return
        self._count += 1
        call.session_id = f"{call.provider_id}@{self._serial}.{self._response}.{self._count}"
        self._session.feed_nowait(call.session_id, call.tool, b"")
        if call.parts:
            await self._hand(call.session_id, call.tool, "".join(call.parts))

    async def _hand(self, session_id: str, name: str, fragment: str) -> None:
        # No await per fragment: only when a preview is due is the session given a turn.
        if self._session.feed_nowait(session_id, name, fragment):
            await self._session.flush()

    def _stream(self, call: StreamedCall, fragment: Any) -> bool | None:
        """More text for a plan call being streamed, the usual delta (one a token): handed to
        the session at once, with no await; whether a preview is due, to be sent with
        `flush()`. None, having changed nothing, for anything else: `_feed` takes it."""
        if type(fragment) is not str or not fragment or not call.session_id or call.done:
            return None
        call.parts.append(fragment)
        # Taken, whatever a session of one's own returns (None would mean "not taken").
        due = self._session.feed_nowait(call.session_id, call.tool or call.name, fragment)
        return bool(due)

    async def _feed(self, call: StreamedCall, fragment: Any) -> None:
        """More arguments: text is fed; an object is the complete arguments so far."""
        due = self._stream(call, fragment)
        if due is not None:
            if due:
                await self._session.flush()
            return
        if call.done or not isinstance(fragment, (Mapping, str)):
            return
        if fragment and call.tentative:
            call.tentative = False
            await self._open(call)
        if isinstance(fragment, Mapping):
            call.final = fragment  # given to `finish`: objects cannot be fed as fragments
        elif fragment:
            call.add(fragment)
            if call.session_id:
                await self._hand(call.session_id, call.tool or call.name, fragment)

    async def _finish(self, call: StreamedCall, arguments: Arguments = None) -> None:
        """Finish one call: arguments, when given, are its complete final arguments."""
        if arguments is not None:
            call.final = arguments
        if arguments and call.tentative:
            call.tentative = False
            await self._open(call)
        if call.done or not call.session_id:
            call.done = True  # another tool's call, or a repeated name that never got arguments
            return
        call.done = True
        truncated = self._truncated.get(call.group, False)
        if call.final == "".join(call.parts):
            call.final = None  # the usual case: what was fed is complete
        if call.final is None:
            result = await self._session.finish(call.session_id, truncated=truncated)
        else:
            final = dict(call.final) if isinstance(call.final, Mapping) else call.final
            result = await self._session.finish(
                call.session_id, truncated=truncated, arguments=final
            )
        call.result = self._shape(call, result.content, result.ok)

    async def _finish_group(self, group: Any, truncated: bool) -> None:
        self._truncated[group] = truncated
        self.truncated = self.truncated or truncated
        for call in self._calls:
            if call.group == group:
                await self._finish(call)
