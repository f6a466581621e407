"""Streamed plan tool calls in flight: their text so far, and when a preview is worth sending.

A stream only decides *when* to ask the core for a preview; what a preview shows, and what
the finished call does, is decided by the same core as every other call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextvars
import math
from collections import deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._core.plans import Json, Stored
from .._core.tool import PlanTool
from .._errors import StreamError
from .._wire.flatten import carries_label
from .._wire.forms import Scale, plan_of
from .partial_json import FinalPrefix
from .preview import Built

# All previews of one call send at most this many times the call's final notification in
# bytes: a long plan streamed at a live token rate is shown in growing steps rather than
# re-sent whole for every line (a 100 KB markdown plan once cost 500 times its size in
# previews). Chosen from the curve of latency against budget in docs/benchmarks.md (table
# `preview-budget`).
DEFAULT_PREVIEW_BUDGET = 8.0


@dataclass(eq=False, slots=True)
class ArgumentText:
    """A streamed call's arguments so far: the fragments as fed, and how far they are final."""

    limit: int
    """Bytes of arguments kept; past it the call is rejected for its size when it finishes."""
    scanner: FinalPrefix
    parts: list[str] = field(default_factory=list)
    """The fragments as text (bytes fragments decoded)."""
    size: int = 0
    """Bytes of arguments received so far."""
    whole: Mapping[str, Any] | None = None
    """Decoded arguments given whole (some SDKs stream dicts), replacing any text."""
    fresh: bool = False
    """The scanner found something new since the last preview was worked out."""
    _raw: list[bytes] | None = None
    """The fragments as fed, when some were bytes: the finished call gets exactly those."""
    _surrogate: bool = False
    """A text fragment held a lone surrogate: the call is rejected for it as `call()` rejects
    such text, even when bytes fragments came too (they are not what is wrong)."""
    _scanned: int = 0
    _decoder: Any = None
    _previewable: bool = True
    _commas: bool = True
    """A `,` may still end a step sent as text: such a fragment is scanned when taken."""

    @classmethod
    def for_tool(cls, tool: PlanTool, limit: int) -> ArgumentText:
        """The text of a call of `tool`, scanned for what its previews may show."""
        previews = tool.previews
        scanner = FinalPrefix(list_keys=previews.list_keys, text_keys=previews.text_keys)
        # Else its items are objects: no comma ends one.
        return cls(limit, scanner, _commas=previews.steps_as_text)

    def add(self, fragment: str | bytes | Mapping[str, Any]) -> bool:
        """Take a fragment; True when it may let a preview show something new.

        Most fragments cost an append: the text is scanned only when a fragment holds a
        character that can end a step (`}` or `]`) or a markdown line (the `\\` of `\\n`),
        and then in one piece with what came before it. Steps sent as text (`"entries":
        ["Write the tests", ...]`, which the core repairs) end at a `,`: until the scanner
        knows the steps are objects, a fragment with one is scanned at once, and may let a
        preview show more only when a step did end.
        """
        if type(fragment) is str:
            size = len(fragment) if fragment.isascii() else self._measure(fragment)
            text = fragment
            if self._raw is not None:
                self._text_after_bytes(self._raw, fragment)
        else:
            other, size = self._other(fragment)
            if other is None:
                return self.whole is not None
            text = other
        self.size += size
        if self.size > self.limit:
            self.parts, self._raw = [], None  # rejected for its size when it finishes
            self._previewable = False
            return False
        self.parts.append(text)
        return self._previewable and (
            "}" in text
            or "]" in text
            or "\\" in text
            or (self._commas and "," in text and self._text_step())
        )

    def _other(self, fragment: Any) -> tuple[str | None, int]:
        if isinstance(fragment, (bytes, bytearray)):
            data = bytes(fragment)
            if not data:  # (adapters open a call with one): keeps the text on its fast path
                return "", 0
            if self._raw is None:
                self._raw = [p.encode("utf-8", "surrogatepass") for p in self.parts]
            self._raw.append(data)
            return self._decode(data), len(data)
        if isinstance(fragment, Mapping):
            self.whole, self.parts, self._raw, self.size = fragment, [], None, 0
            self._previewable = False  # previewed from the dict itself, not by the scanner
            return None, 0
        if isinstance(fragment, str):
            if self._raw is not None:
                self._text_after_bytes(self._raw, fragment)
            return str(fragment), self._measure(fragment)
        raise StreamError(
            f"a fragment must be str, bytes or a dict of arguments; got {type(fragment).__name__}"
        )

    def scan(self) -> bool:
        """Scan the text not scanned yet; True when something new is final since the last
        preview was worked out."""
        self._scan_parts()
        fresh, self.fresh = self.fresh, False
        return fresh or self.whole is not None

    def _scan_parts(self) -> None:
        if self._scanned < len(self.parts):
            text = "".join(self.parts[self._scanned :])
            self._scanned = len(self.parts)
            if self.scanner.feed(text):
                self.fresh = True

    def _text_step(self) -> bool:
        # A fragment with a `,` while steps may be text: scanned now, so that only a step
        # that ended asks for a preview (a preview worked out for nothing starts the
        # interval's clock and spends budget).
        before = self.scanner.text_elements
        self._scan_parts()
        self._commas = self.scanner.commas_may_end_steps
        return self.scanner.text_elements > before

    def _text_after_bytes(self, raw: list[bytes], fragment: str) -> None:
        # Kept as bytes, as the finished call gets them. Text after bytes that end inside a
        # character makes the call's bytes not UTF-8 (a character's bytes never start with a
        # continuation byte), which the core refuses: nothing of it may be previewed.
        raw.append(fragment.encode("utf-8", "surrogatepass"))
        if self._decoder is not None and self._decoder.getstate()[0]:
            self._previewable = False

    def _measure(self, fragment: str) -> int:
        try:
            return len(fragment.encode("utf-8"))
        except UnicodeEncodeError:
            self._surrogate = True
            return _utf8_len(fragment)

    def _decode(self, fragment: bytes) -> str:
        if self._decoder is None:
            self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        try:
            return str(self._decoder.decode(fragment))
        except UnicodeDecodeError:
            self._previewable = False  # the finished call is rejected as not UTF-8
            return ""

    @property
    def previewable(self) -> bool:
        return self.whole is not None or (self._previewable and not self.scanner.broken)

    def fields(self) -> Mapping[str, Any] | None:
        """The final parts of the arguments so far, or None when there is nothing to show."""
        if self.whole is not None:
            return self.whole
        return self.scanner.final() if self.previewable else None

    def grown(self, sent: list[Any]) -> list[Any] | None:
        """The steps that became final since the last preview, whose steps were `sent`, when
        they are all that did (`FinalPrefix.grown`): the usual preview needs only them."""
        if self.whole is not None or not self._previewable:
            return None
        return self.scanner.grown(sent)

    def arguments(self) -> tuple[Any, int | None]:
        """The complete arguments, and their size when they were too long to keep."""
        if self.whole is not None:
            return self.whole, None
        if self.size > self.limit:
            return b"", self.size
        if self._raw is not None and not self._surrogate:
            return b"".join(self._raw), None
        return "".join(self.parts), None


@dataclass(eq=False, slots=True)
class PreviewBudget:
    """What one call's previews may cost: the work of working them out, and the bytes they
    send the client, each within `budget - 1` times the call's own (the outbox asks
    `passes`, as the `Gate` of a preview's notifications)."""

    budget: float = DEFAULT_PREVIEW_BUDGET
    """The session's `preview_budget`."""
    previewed: int = 0
    """Bytes of argument text at each preview worked out so far, added up: what bounds the
    work previews cost (each costs about the text so far), shown or not."""
    sent: int = 0
    """Bytes of the notifications previews sent so far, as compact JSON (`_wire.forms.weight`):
    what bounds what they cost the client."""
    held_back_bytes: int = 0
    """Bytes of argument text at each preview held back so far, added up: they have a
    budget of their own, as large as `previewed`'s."""
    retry_at: float = 0
    """The text size from which another preview may pass, as far as can be told."""
    sent_weight: int = 0
    """The bytes of the last preview sent, and the text's size then."""
    sent_size: int = 0
    scale: Scale = field(default_factory=Scale)
    """Weighs its previews, each only by what the last one did not carry."""
    held_back: bool = False
    """The last preview worked out was too small a share of the budget to go out."""

    def allows(self, size: int) -> bool:
        """Whether a preview may be worked out at a text of `size` bytes: the previews worked
        out so far (and those held back, apart) came to at most `budget - 1` times the text,
        and one held back falls short no more."""
        allowed = (self.budget - 1) * size
        return not (
            self.previewed > allowed or self.held_back_bytes > allowed or size < self.retry_at
        )

    def spend(self, size: int) -> None:
        """A preview is being worked out at a text of `size` bytes: it counts, shown or not."""
        self.previewed += size
        self.held_back = False

    def passes(
        self,
        session_id: str,
        updates: list[Json],
        size: int,
        shown: str | None,
        own_id: str | None,
    ) -> bool:
        """Whether a preview's notifications go out, given all there is to send: when the
        previews sent so far, with whatever else goes out beside this one's plan (`shown`;
        the removal of the id it moved from, a change the client missed), are at most
        `budget - 1` times what the plan's own notification weighs. All previews then stay
        within `budget` times what the finished call sends, as long as that shows at least
        as much as they did (a plan written out, as creates and replacements are, always
        does). `size` is the text's; `own_id` the id the call's previews generated."""
        own = rest = 0
        for update in updates:
            weight = self.scale.weigh(session_id, update)
            if plan_of(update) in (None, shown):  # (the legacy update carries every plan)
                own += weight
            else:
                rest += weight
        budget = self.budget
        # What the finished call sends may be less than this preview by `slack`: a legacy
        # list's label of a plan under a generated id, which an id the model sends late
        # replaces (with one character, at the least).
        slack = _label_slack(updates, shown) if shown == own_id else 0
        passed = (not self.sent and not slack) or (self.sent + rest + own <= budget * (own - slack))
        # The rate the preview's weight grows with the text, since the last one sent.
        grown = size - self.sent_size
        rate = (own - self.sent_weight) / grown if grown > 0 else 0.0
        if passed:
            self.sent += own + rest
            self.sent_weight, self.sent_size = own, size
        else:
            self.held_back = True
            self.previewed -= size  # the try counts as held back
            self.held_back_bytes += size
        # No preview is worked out again before it would pass, as far as that rate goes on,
        # nor (whatever the rate) after the text has doubled: a call's steps may grow
        # otherwise than the ones before (statuses first, then new texts).
        missing = self.sent / (budget - 1) + slack - own if budget > 1 else math.inf
        if missing <= 0:
            self.retry_at = 0
        elif missing == math.inf:  # with a budget of 1, nothing after the first goes out
            self.retry_at = math.inf
        else:
            self.retry_at = size + (min(missing / rate, size) if rate > 0 else size)
        return passed


def _label_slack(updates: list[Json], plan_id: str | None) -> int:
    """Bytes the legacy list's `[plan_id] ` labels in `updates` would lose were the id one
    character long (a generated id is ASCII, so a character is a byte)."""
    if plan_id is None or len(plan_id) == 1:
        return 0
    labelled = sum(
        1
        for update in updates
        if update.get("sessionUpdate") == "plan"
        for entry in update.get("entries", ())
        if carries_label(entry.get("content", ""), plan_id)
    )
    return labelled * (len(plan_id) - 1)


@dataclass(eq=False, slots=True)
class Pace:
    """When one call's next preview may be worked out: at most one per `stream_interval`,
    from a timer the session arms, or at the next awaited call (`feed_nowait`)."""

    last_at: float = float("-inf")
    timer: asyncio.TimerHandle | None = None
    pending: bool = False
    """A fragment taken by `feed_nowait` may let a preview show something new."""
    due: bool = False
    """A preview is due and waits in the session's queue for the next awaited call."""

    def wait(self, now: float, interval: float) -> float:
        """Seconds until the interval since the last preview is over (0: now)."""
        return max(0.0, self.last_at + interval - now)

    def arm(self, loop: asyncio.AbstractEventLoop, delay: float, fire: Callable[[], Any]) -> None:
        """Call `fire` after `delay`, unless a timer is armed already."""
        if self.timer is None:
            # A fresh context: the timer's task must not inherit a lock's holding mark.
            self.timer = loop.call_later(delay, fire, context=contextvars.Context())

    def fired(self) -> None:
        self.timer = None

    def taken(self) -> None:
        """The preview due (or pending) is being worked out."""
        self.pending = self.due = False

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


@dataclass(eq=False, slots=True)
class Shown:
    """What the client was shown of one call: its last preview and every plan id its
    previews touched (what a rollback restores), the id a create's previews generated, and
    what the last preview built (for the next to build only what is new)."""

    preview: Stored | None = None
    """The plan as last shown to the client, if any."""
    ids: dict[str, None] = field(default_factory=dict)
    """Every plan id a preview of this call touched: what a rollback must restore."""
    own_id: str | None = None
    """The generated id this call's previews showed (a create without id keeps it)."""
    built: Built = field(default_factory=Built)
    lines_seen: int = 0
    """How much of a markdown plan's final text the previews looked at for list items."""

    def show(self, plan: Stored) -> tuple[Stored | None, bool]:
        """`plan` is the preview now: what was shown before, and whether its id was."""
        before, showing = self.preview, plan.id in self.ids
        self.preview = plan
        self.ids[plan.id] = None
        return before, showing

    def take_back(self, plan: Stored, before: Stored | None, showing: bool) -> None:
        """`plan` did not go out (held back): the client keeps what it was shown before."""
        self.preview = before
        if not showing:
            del self.ids[plan.id]

    def keep_id(self, plan_id: str) -> None:
        """The id a create without one was given: its later previews and the call keep it."""
        self.own_id = plan_id

    def new_lines(self, content: str) -> str:
        """What of a markdown plan's `content` the previews have not looked at yet."""
        new, self.lines_seen = content[self.lines_seen :], len(content)
        return new


@dataclass(eq=False, slots=True)
class Flight:
    """One streamed call: its argument text, the budget and pace of its previews, and what
    the client was shown of it."""

    tool: PlanTool
    name: str
    """The tool name as fed (a prefixed one included), to recognise the next fragment fast."""
    text: ArgumentText
    budget: PreviewBudget
    pace: Pace = field(default_factory=Pace)
    shown: Shown = field(default_factory=Shown)

    def wait(self, now: float, interval: float) -> float | None:
        """Seconds until a preview may be worked out (0: now), or None until the text grows
        (the budget allows none before)."""
        if not self.budget.allows(self.text.size):
            return None
        return self.pace.wait(now, interval)

    def previewed_now(self, now: float) -> None:
        """A preview is being worked out: it counts against the budget, shown or not."""
        self.budget.spend(self.text.size)
        self.pace.last_at = now

    def passes(self, session_id: str, updates: list[Json]) -> bool:
        """The outbox's `Gate`: whether this call's preview goes out (`PreviewBudget.passes`)."""
        preview = self.shown.preview
        shown = None if preview is None else preview.id
        return self.budget.passes(session_id, updates, self.text.size, shown, self.shown.own_id)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class Streams:
    """The streamed calls of one session, by call id."""

    def __init__(self, budget: float = DEFAULT_PREVIEW_BUDGET) -> None:
        self._flights: dict[str, Flight] = {}
        self._budget = budget
        self.due: deque[tuple[str, Flight]] = deque()
        """Flights whose preview `feed_nowait` found due, in that order."""

    def get(self, call_id: str) -> Flight | None:
        """The call in flight with this id, if any."""
        return self._flights.get(call_id)

    def mark_due(self, call_id: str, flight: Flight) -> None:
        flight.pace.due = True
        self.due.append((call_id, flight))

    def next_due(self) -> tuple[str, Flight] | None:
        """The first flight still due, taken off the queue; None when none is. One at a
        time: a flush cut off by a send's cancellation leaves the rest queued, and due."""
        return self.due.popleft() if self.due else None

    def start(self, call_id: str, tool: PlanTool, name: str, limit: int) -> Flight:
        """The call `call_id`, started as a call of `tool` (called `name`) when it is new."""
        flight = self._flights.get(call_id)
        if flight is None:
            text = ArgumentText.for_tool(tool, limit)
            flight = Flight(tool, name, text, PreviewBudget(self._budget))
            self._flights[call_id] = flight
        elif flight.tool != tool:
            raise StreamError(
                f"call {call_id!r} was started as {flight.tool.name}, not {tool.name}"
            )
        flight.name = name
        return flight

    def pop(self, call_id: str) -> Flight | None:
        flight = self._flights.pop(call_id, None)
        if flight is not None:
            flight.pace.cancel()
        return flight

    def ids(self) -> list[str]:
        return list(self._flights)

    def reserved_ids(self, but: Flight | None = None) -> Collection[str]:
        """Plan ids other streams show or hold: a generated id must not take them."""
        if not self._flights:
            return ()  # (every plain call asks)
        out = set()
        for flight in self._flights.values():
            if flight is not but:
                shown = flight.shown
                if shown.own_id is not None:
                    out.add(shown.own_id)
                if shown.preview is not None:
                    out.add(shown.preview.id)
        return out

    def previews(self, plans: Mapping[str, Stored]) -> dict[str, Stored]:
        """The plans streams in flight show, by id, given the session's `plans`.

        A preview is shown only while it can still apply: a new plan previewed under an id
        another call has since taken, or a change to a plan another call has since removed,
        gives way to what was committed (the stream's final answer follows when it ends).
        """
        if not self._flights:
            return {}  # (every call asks)
        shown = [(f.tool, f.shown.preview) for f in self._flights.values()]
        return {
            preview.id: preview
            for tool, preview in shown
            if preview is not None and _still_applies(tool, preview.id in plans)
        }


def _still_applies(tool: PlanTool, exists: bool) -> bool:
    # A list is written whole whether or not it exists; a create needs a free id, an update
    # a plan to change.
    wanted = tool.previews.plan_exists
    return wanted is None or exists == wanted
