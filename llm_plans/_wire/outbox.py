"""What the client has been sent, and sending it: one object owns the wire side of a session.

The outbox turns plan changes into notifications in the session's wire form, remembers what
reached the client (so an identical notification is not sent twice in a row, and a failed
one is re-sent later), flattens plans for the legacy form, and reads file plans' files for
the stable forms, which send them as markdown plans.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import CoroutineType
from typing import Any, Protocol

from .._core.plans import Json, Stored
from .._errors import ConfigurationError
from . import forms
from .flatten import Flattener, may_hold_items
from .forms import Document, WireForm

Send = Callable[[Json], Awaitable[Any]]
"""Sends the params of one `session/update` notification: `{"sessionId": ..., "update": ...}`."""

Dress = Callable[[Json], tuple[str, Json]]
"""What a route sends for one update: the session id and the update on the wire."""

_NOT_ASYNC = (
    "send must be an async function (async def send(params): ...); {send!r} returned "
    "{got.__name__}, not an awaitable. A session awaits each send to know whether the client "
    "was reached; with the ACP SDK, use llm_plans.acp_send(conn)."
)


def is_async(send: object) -> bool:
    """True when calling `send` returns an awaitable, as far as can be told without calling it:
    an async function (also behind functools.partial), an object whose `__call__` is one, or
    an async mock."""
    while isinstance(send, functools.partial):
        send = send.func
    return _coroutine_function(send) or _coroutine_function(type(send).__call__)


def takes_one_argument(send: Callable[..., object]) -> bool:
    """False when `send` cannot be called with the params dict alone (e.g. the ACP SDK's
    `conn.session_update(session_id, update)`); True when it can or cannot be told."""
    try:
        signature = inspect.signature(send)
    except (TypeError, ValueError):  # some builtins and C callables have none
        return True
    try:
        signature.bind({})
    except TypeError:
        return False
    return True


def _coroutine_function(function: object) -> bool:
    # Before 3.12 (inspect.markcoroutinefunction), functions that return coroutines without
    # being `async def`, such as mock.create_autospec of an async function, carry asyncio's
    # mark instead, which only asyncio's check knows; 3.14 deprecates that check.
    return inspect.iscoroutinefunction(function) or (
        sys.version_info < (3, 12) and asyncio.iscoroutinefunction(function)
    )


_REMOVED = object()  # what the client holds for a plan it was told is removed


class Gate(Protocol):
    """Decides whether a preview's notifications go out, given all there is to send (a
    stream's preview budget)."""

    def passes(self, session_id: str, updates: list[Json]) -> bool: ...


async def _nothing_sent() -> None:
    return None


@dataclass(frozen=True)
class _Read:
    """What a client of a stable form holds for a file plan: the file's text it was sent."""

    plan: Stored
    document: Document

    def same(self, other: object) -> bool:
        return (
            isinstance(other, _Read)
            and (self.plan.id, self.plan.meta) == (other.plan.id, other.plan.meta)
            and self.document == other.document
        )


class Outbox:
    """Sends plan notifications in one wire form and keeps track of what the client holds."""

    def __init__(self, send: Send, session_id: str, form: WireForm, flattener: Flattener) -> None:
        self._send = send
        self._session_id = session_id
        self._form = form
        self._legacy = form is WireForm.LEGACY  # asked on every show: worked out once
        # The stable forms send a file plan as its file's text: each change reads it again.
        self._reads_files = form in (WireForm.SCHEMA, WireForm.V2)
        self._flattener = flattener
        self._max_chars = flattener.max_chars
        self._dress: Dress | None = None
        self._held: dict[str, object] = {}  # plan id -> the Stored plan (or _REMOVED) last sent
        self._stale: dict[str, None] = {}  # plan ids whose last notification did not arrive
        self._legacy_held: list[Json] | None = None
        self._legacy_stale = False

    @property
    def form(self) -> WireForm:
        """The wire form every notification takes: set once, with the session."""
        return self._form

    @property
    def legacy_held(self) -> list[Json] | None:
        """The legacy list the client was last sent (None before any)."""
        return self._legacy_held

    def reroute(self, send: Send, dress: Dress | None = None) -> None:
        """Send through `send` from now on (a session whose subagents share its legacy list);
        `dress` gives what such a route really sends for an update, which a preview's budget
        weighs."""
        self._send = send
        self._dress = dress

    def _passes(self, gate: Gate, updates: list[Json]) -> bool:
        if self._dress is None:
            return gate.passes(self._session_id, updates)
        dressed = [self._dress(update) for update in updates]
        return gate.passes(dressed[0][0], [update for _, update in dressed])

    @property
    def stale(self) -> bool:
        """Some change has not reached the client yet."""
        return bool(self._stale) or self._legacy_stale

    def forget(self) -> None:
        """The plans were replaced (a restore): everything the client was shown is brought up
        to date with the next change or `replay()`, removals included."""
        for plan_id, held in self._held.items():
            if held is not _REMOVED:
                self._stale[plan_id] = None
        if self._legacy_held is not None:
            self._legacy_stale = True

    def show(
        self,
        plans: Mapping[str, Stored],
        ids: Iterable[str],
        previews: Mapping[str, Stored] | None = None,
        *,
        force: bool = False,
        gate: Gate | None = None,
    ) -> Awaitable[BaseException | None]:
        """Bring the client's view of `ids` (and of every stale id) up to date: what to send
        is worked out (and noted as held) now, and sent when the result is awaited.

        `plans` are the session's plans; `previews` the plans streams in flight show, by id,
        which the client sees in place of (or beside) them. The awaited result is the
        exception of a send that failed (what it carried is marked stale and re-sent later);
        a cancellation is re-raised after marking. (Not a coroutine itself: the caller awaits
        the sending directly, a layer less on every call.) A `gate` (a preview's) is asked
        whether what there is to send goes out; when not, nothing is sent or noted.
        """
        if self._legacy:
            return self._show_legacy(
                plans, previews or {}, asked=bool(list(ids)), force=force, gate=gate
            )
        # One id (a commit, a preview) comes as a tuple of one: nothing to deduplicate.
        asked = ids if type(ids) is tuple and len(ids) == 1 else tuple(dict.fromkeys(ids))
        if len(asked) == 1 and not force:
            quick = self._show_one(plans, asked[0], previews, gate=gate)
            if quick is not None:
                return quick
        return self._show_all(plans, dict.fromkeys(asked), previews, force=force, gate=gate)

    def _show_one(
        self,
        plans: Mapping[str, Stored],
        plan_id: str,
        previews: Mapping[str, Stored] | None = None,
        *,
        gate: Gate | None = None,
    ) -> Awaitable[BaseException | None] | None:
        """`show(plans, [plan_id], previews, gate=gate)` in fewer steps, for one items plan
        while nothing is stale (a call's commit, a preview, as a rule): the same
        notification and the same notes. None when there is no quicker way (the legacy
        form, something stale, no such plan, another kind of plan, a file plan beside it in
        a stable form): `show` then works it out."""
        if self._stale or self._legacy:
            return None
        plan = previews.get(plan_id) if previews else None
        if plan is None:
            plan = plans.get(plan_id)
        if plan is None or plan.type != "items":
            return None
        if self._reads_files:
            if any(other.type == "file" for other in plans.values()):
                return None  # `_show_all` reads each file plan again
            self._flattener.retain([*plans, *(previews or ())])
        if _same(self._held.get(plan_id), plan):
            return _nothing_sent()  # the client holds exactly this
        update = forms.plan_update(self._form, plan, None, self._max_chars)
        if gate is not None and not self._passes(gate, [update]):
            return _nothing_sent()
        self._held[plan_id] = plan
        return self._deliver([(plan_id, update)])

    def _show_all(
        self,
        plans: Mapping[str, Stored],
        asked: dict[str, None],
        previews: Mapping[str, Stored] | None,
        *,
        force: bool,
        gate: Gate | None,
    ) -> Awaitable[BaseException | None]:
        wanted = {**self._stale, **asked} if self._stale else asked
        reads = self._reads_files
        if reads and (asked or force):
            # A file plan shows its file's text: an edit on disk reaches the client with the
            # next change, as in the legacy form (an unchanged file is not read again).
            wanted.update((i, None) for i, plan in plans.items() if plan.type == "file")
        updates: list[tuple[str, Json]] = []
        noted: dict[str, object] = {}  # what the client held before, for a gate that refuses
        for plan_id in wanted:
            plan = self._showing(plan_id, plans, previews) if previews else plans.get(plan_id)
            view = self._view(plan) if reads else plan
            held = self._held.get(plan_id)
            stale = plan_id in self._stale
            if not force and not stale and _same(held, view):
                continue  # the client holds exactly this: sending it again would only flicker
            if plan is None:
                if held is None and not force and not stale:
                    continue  # never shown, nothing to take back
                updates.append((plan_id, forms.plan_removed(self._form, plan_id)))
            else:
                document = view.document if isinstance(view, _Read) else None
                update = forms.plan_update(self._form, plan, document, self._max_chars)
                updates.append((plan_id, update))
            if gate is not None:
                noted[plan_id] = self._held.get(plan_id)
            self._held[plan_id] = view if view is not None else _REMOVED
        if reads:
            self._flattener.retain([*plans, *(previews or ())])
        if updates and gate is not None and not self._passes(gate, [u for _, u in updates]):
            for plan_id, held in noted.items():
                if held is None:
                    del self._held[plan_id]
                else:
                    self._held[plan_id] = held
            return _nothing_sent()
        return self._deliver(updates)

    def shows_lines(self, lines: str) -> bool:
        """Whether markdown lines added to a plan can change what the client is shown: in
        the legacy form a markdown plan shows only its list items."""
        return not self._legacy or may_hold_items(lines)

    def _showing(
        self, plan_id: str, plans: Mapping[str, Stored], previews: Mapping[str, Stored]
    ) -> Stored | None:
        preview = previews.get(plan_id)
        return plans.get(plan_id) if preview is None else preview

    def _view(self, plan: Stored | None) -> Stored | _Read | None:
        if plan is None or plan.type != "file":
            return plan
        return _Read(plan, self._flattener.document(plan))

    async def _show_legacy(
        self,
        plans: Mapping[str, Stored],
        previews: Mapping[str, Stored],
        *,
        asked: bool,
        force: bool,
        gate: Gate | None,
    ) -> BaseException | None:
        if not asked and not force and not self._legacy_stale:
            return None
        entries = self._flattener.entries(plans.values(), previews.values())
        if not force and not self._legacy_stale and entries == self._legacy_held:
            return None
        if not entries and self._legacy_held is None and not self._legacy_stale:
            return None  # nothing was ever shown: an empty list says nothing new
        update = forms.legacy_plan(entries)
        if gate is not None and not self._passes(gate, [update]):
            return None
        self._legacy_held = entries
        self._legacy_stale = True
        failure = await self._deliver([("", update)])
        if failure is None:
            self._legacy_stale = False
        return failure

    def legacy_update(self, plans: Mapping[str, Stored], previews: Mapping[str, Stored]) -> Json:
        """The legacy `plan` update for these plans, without sending it: copies of the
        entries, which the caller may keep and change."""
        entries = [
            {**entry, "_meta": copy.deepcopy(entry["_meta"])} if "_meta" in entry else dict(entry)
            for entry in self._flattener.entries(plans.values(), previews.values())
        ]
        return forms.legacy_plan(entries)

    async def _deliver(self, updates: list[tuple[str, Json]]) -> BaseException | None:
        # Marked stale before sending, cleared one by one as each arrives: whatever the send
        # raises (a cancellation included), what did not arrive is re-sent later.
        for plan_id, _ in updates:
            if plan_id:
                self._stale[plan_id] = None
        for plan_id, update in updates:
            try:
                sending = self._send(forms.notification(self._session_id, update))
                # A coroutine, as from any async def, is told apart first at C speed.
                awaitable = type(sending) is CoroutineType or inspect.isawaitable(sending)
                if awaitable:
                    await sending
            except Exception as exc:
                return exc
            self._stale.pop(plan_id, None)
            if self._held.get(plan_id) is _REMOVED:
                # The client was told the plan is gone: remembering the id would cost memory
                # for every plan ever created. An id held by no one is skipped by `show` as
                # "never shown", which is what a delivered removal leaves the client with.
                del self._held[plan_id]
            if not awaitable:
                # A misuse, not a failed delivery: raised, never retried (the send ran).
                raise ConfigurationError(_NOT_ASYNC.format(send=self._send, got=type(sending)))
        return None


def _same(held: object, plan: Stored | _Read | None) -> bool:
    if plan is None:
        return held is _REMOVED
    if isinstance(plan, _Read):
        return plan.same(held)
    return isinstance(held, Stored) and (held is plan or held.same(plan))
