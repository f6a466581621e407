"""A session's subagents: child sessions, and how their notifications reach the client.

ACP made subagent sessions stable on 2026-11-20: a `subagent_update` on the parent session
announces a child, before any of the child's own traffic, and the child's plans then go out
under the child's own `sessionId`. A v1 client takes them when it advertised
`clientCapabilities.subagents: {}`; every v2 client does.

Where the client does not take them, a child's notifications go out on the parent's session
instead, apart from the parent's plans: under plan ids of their own (`<child id>/<plan id>`)
with plan operations, and, in the legacy form, after the parent's entries in the one list a
session has (`Merged`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigurationError
from .._lock import SessionLock
from .flatten import labeled
from .forms import Json, WireForm, legacy_plan, notification

Send = Callable[[Json], Awaitable[Any]]
Dress = Callable[[Json], tuple[str, Json]]

MAX_OPEN = 100
"""Open (not closed) children a session holds at once: a client lists each child, and a
runaway loop of subagents must not grow one without bound."""

_MAX_ID_CHARS = 1024  # a session id names a child on every notification: kept readable

RUNNING: Json = {"state": "running"}
IDLE: Json = {"state": "idle"}


def check_child_id(child_id: object, parent_id: str) -> str:
    """`child_id` when it can name a child session of `parent_id`; ConfigurationError else."""
    if (
        not isinstance(child_id, str)
        or not child_id
        or len(child_id) > _MAX_ID_CHARS
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in child_id)
    ):
        raise ConfigurationError(
            "a subagent's session id must be non-empty text of at most "
            f"{_MAX_ID_CHARS} characters without control characters; got {child_id!r}"
        )
    if child_id == parent_id:
        raise ConfigurationError(f"a subagent cannot have its parent's session id {child_id!r}")
    return child_id


def check_text(name: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(f"a subagent's {name} must be text or None; got {value!r}")
    return value


@dataclass
class Child:
    """What a parent knows of one child: what to announce, and what the client was told."""

    session_id: str
    title: str | None
    description: str | None
    session: Any = None
    """The child's `PlanSession`."""
    prefix: str = ""
    """Where the client does not take subagent sessions: what the child's plan ids go under
    in its parent's session (`<child id>/`, escaped, and unique there)."""
    open: bool = True
    closing: bool = False
    """`close()` is taking its plans back: it still reads as running until that is done."""
    told: Json | None = None
    """The announcement's fields the client holds (`title`, `description`, `state`); None
    until an announcement reached it."""

    def wanted(self) -> Json:
        return {
            "title": self.title,
            "description": self.description,
            "state": RUNNING if self.open or self.closing else IDLE,
        }


@dataclass
class Merged:
    """The legacy list of a parent and of the children it shows in its own session: the
    parent's entries, then each child's in the order they first showed, sent as one list."""

    lists: dict[str | None, list[Json]] = field(default_factory=dict)

    def update(self, owner: str | None, entries: list[Json] | tuple[Json, ...]) -> Json:
        """The list with `owner`'s entries replaced, kept as what the client holds."""
        self.lists[owner] = list(entries)
        return self.view(owner, entries)

    def view(self, owner: str | None, entries: list[Json] | tuple[Json, ...]) -> Json:
        """The list with `owner`'s entries replaced, without keeping it."""
        lists = {**self.lists, owner: list(entries)}
        mine = lists.get(None, [])
        rest = [e for key, shown in lists.items() if key is not None for e in shown]
        return legacy_plan([*mine, *rest])


class Subagents:
    """The children of one session: announcing them, and routing what they send."""

    def __init__(
        self, send: Send, session_id: str, form: WireForm, takes: bool, max_chars: int
    ) -> None:
        self._send = send
        self._max_chars = max_chars
        self._session_id = session_id
        self._form = form
        self.takes = takes
        """The client takes subagent sessions: each child is announced and speaks as itself."""
        self.children: dict[str, Child] = {}
        self.ids: set[str] = {session_id}
        """Every session id of this session's tree (shared with its children): a child's id
        is unique on the connection, or one session's traffic would pass for another's."""
        self._lock = SessionLock()  # one announcement at a time; none from inside one
        self._merged: Merged | None = None

    def check(self) -> None:
        """ReentrancyError from inside an announcement's send."""
        self._lock.check()

    def open_count(self) -> int:
        return sum(child.open for child in self.children.values())

    def send_for(self, child: Child) -> Send:
        """The `send` of a child session: announced first where the client takes subagent
        sessions, else into the parent's session, apart from its plans."""
        if self.takes:

            async def announced(params: Json) -> None:
                await self.sync(child)
                await self._send(params)

            return announced
        if self._form is WireForm.LEGACY:

            async def merged(params: Json) -> None:
                # Labelled with the child's title: which agent's steps these are.
                label = child.title or child.session_id
                steps = labeled(params["update"]["entries"], label, self._max_chars)
                await self.send_merged(child.session_id, steps)

            return merged

        async def apart(params: Json) -> None:
            update = _renamed(params["update"], child.prefix)
            await self._send(notification(self._session_id, update))

        return apart

    def dress_for(self, child: Child | None) -> Dress | None:
        """What the route of `child` (None: the parent's own, once children share its legacy
        list) really sends for an update, for a preview's budget to weigh."""
        if self.takes:
            return None
        if self._form is WireForm.LEGACY:

            def merged(update: Json) -> tuple[str, Json]:
                entries = update["entries"]
                if child is not None:
                    label = child.title or child.session_id
                    entries = labeled(entries, label, self._max_chars)
                owner = None if child is None else child.session_id
                merged = self._merged if self._merged is not None else Merged()
                return self._session_id, merged.view(owner, entries)

            return merged
        if child is None:
            return None

        def apart(update: Json) -> tuple[str, Json]:
            return self._session_id, _renamed(update, child.prefix)

        return apart

    def own_send(self, shown: list[Json] | None) -> Send | None:
        """The parent's own `send` once children share its legacy list (`shown`: the list
        the client holds of the parent's); None when the parent's notifications go out as
        they are."""
        if self.takes or self._form is not WireForm.LEGACY:
            return None
        if self._merged is None:
            self._merged = Merged({None: shown or []})

        async def own(params: Json) -> None:
            await self.send_merged(None, params["update"]["entries"])

        return own

    async def send_merged(self, owner: str | None, entries: list[Json] | tuple[Json, ...]) -> None:
        if self._merged is None:
            self._merged = Merged()
        update = self._merged.update(owner, entries)
        await self._send(notification(self._session_id, update))

    async def sync(self, child: Child, *, whole: bool = False) -> None:
        """Tell the client what it does not yet hold of `child`: the whole announcement the
        first time (or with `whole`), else only the fields that changed. A failed send
        leaves it to be told again before the child's next notification."""
        if not self.takes:
            return
        wanted = child.wanted()
        if child.told == wanted and not whole:
            return
        async with self._lock.held():
            wanted = child.wanted()  # another announcement may have run meanwhile
            told = None if whole else child.told
            if told == wanted:
                return
            update: Json = {"sessionUpdate": "subagent_update", "sessionId": child.session_id}
            for key, value in wanted.items():
                # A first announcement leaves out what is not set; a patch clears with null.
                changed = value is not None if told is None else told.get(key) != value
                if changed:
                    update[key] = value
            await self._send(notification(self._session_id, update))
            child.told = wanted

    def prefix_for(self, child_id: str, taken: Iterable[str]) -> str:
        """Where a new child's plan ids go in this session: `<child id>/` (its `%` and `/`
        escaped, so no two children's ids meet), numbered on when a plan id of this session
        (`taken`) already starts so."""
        escaped = child_id.replace("%", "%25").replace("/", "%2F")
        used = {child.prefix for child in self.children.values()}
        taken = list(taken)
        number = 1
        while True:
            prefix = f"{escaped}/" if number == 1 else f"{escaped}~{number}/"
            if prefix not in used and not any(i.startswith(prefix) for i in taken):
                return prefix
            number += 1

    def reserved(self) -> tuple[str, ...]:
        """The plan id prefixes this session's own plans may not take: its children's."""
        if self.takes:
            return ()
        return tuple(child.prefix for child in self.children.values())

    def forget(self) -> None:
        """The client's view is unknown (a restore): announce each child again."""
        for child in self.children.values():
            child.told = None


def _renamed(update: Json, prefix: str) -> Json:
    """A plan operation with its plan id under `prefix` (a child's, in its parent's session)."""
    if "plan" in update:
        plan = dict(update["plan"])
        key = "planId" if "planId" in plan else "id"
        plan[key] = prefix + plan[key]
        return {**update, "plan": plan}
    key = "planId" if "planId" in update else "id"
    return {**update, key: prefix + update[key]}
