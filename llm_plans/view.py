"""A client-side view of an agent's plans, rendered with rich, following the spec's
"Client Display" guidance: progress per plan, the current step highlighted, priorities shown,
and changes made visible: steps just added are marked, steps just dropped and plans just
removed stay on screen for a moment, struck through, instead of silently vanishing.

Feed it every `session/update` params dict the agent sends (any wire form: the legacy list,
the stable `plan_update` / `plan_removed` of v1 and v2, the spec documents' draft, and
`subagent_update`s); it keeps the active plans of every session, a subagent's child session
apart from its parent's, and renders them as panels. A v1 step that reads as cancelled
(`completed`, its text starting with `Cancelled: `) shows as cancelled. The board is itself a
rich renderable, so a `rich.live.Live(board)` redraws it as the marks expire.

Example:
    board = PlanBoard()
    board.apply(params)           # for each session/update notification
    rich.print(board)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from ._wire.forms import as_read

__all__ = ["MARK_SECONDS", "PlanBoard", "ShownPlan", "dropped_line", "entry_line", "panel", "plain"]

_ICONS = {"completed": "✔", "in_progress": "▶", "pending": "○", "cancelled": "✘"}
_DROPPED_ICON = "✗"
_LEGACY_ID = "plan"
# Long enough to notice at a glance while the agent keeps working, short enough that the
# board shows the current state again before the next change usually arrives.
MARK_SECONDS = 3.0
"""How long a change stays marked on the board."""


@dataclass
class ShownPlan:
    """One plan as the client holds it, with what its latest update changed.

    Args:
        id: The plan's id (`plan` for the legacy form's one list).
        type: `items`, `markdown` or `file`.
        entries: An items plan's steps as the client reads them.
        content: A markdown plan's text.
        uri: A file plan's URI.
        path: A markdown plan's file, when the agent named it.
        added: Positions of the entries the latest update added.
        dropped: Entries the previous version had and this one does not.
        removed: Whether the agent removed the whole plan.
        session_id: The session it belongs to, when the notification named one.
        owner: The subagent it is a plan of (its title, else its session id); empty for the
            main session's plans.
    """

    id: str
    """The plan's id (`plan` for the legacy form's one list)."""
    type: str
    """`items`, `markdown` or `file`."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """An items plan's steps as the client reads them (a v1 `Cancelled: ` step as
    cancelled)."""
    content: str = ""
    """A markdown plan's text."""
    uri: str = ""
    """A file plan's URI."""
    path: str = ""
    """A markdown plan's file, when the agent named it (ACP's stable markdown plans)."""
    added: set[int] = field(default_factory=set)
    """Positions of the entries this update added (none on the plan's first appearance)."""
    dropped: list[dict[str, Any]] = field(default_factory=list)
    """Entries the previous version had and this one does not."""
    removed: bool = False
    """The agent removed the whole plan; it is shown as removed for a moment."""
    session_id: str | None = None
    """The session it belongs to, when the notification named one."""
    owner: str = ""
    """The subagent it is a plan of (its title, else its session id); empty for the main
    session's plans."""

    @property
    def progress(self) -> str:
        """Steps completed out of all not cancelled, as `2/5`."""
        statuses = [e.get("status") for e in self.entries]
        return f"{statuses.count('completed')}/{len(statuses) - statuses.count('cancelled')}"

    def settled(self) -> ShownPlan:
        """The same plan without its change marks."""
        return ShownPlan(
            self.id,
            self.type,
            self.entries,
            self.content,
            self.uri,
            self.path,
            session_id=self.session_id,
            owner=self.owner,
        )


def _diff(before: ShownPlan | None, after: ShownPlan) -> ShownPlan:
    """`after`, marked with the steps added and dropped since `before` (matched by text)."""
    if before is None:
        return after
    old = [str(e.get("content", "")) for e in before.entries]
    new = [str(e.get("content", "")) for e in after.entries]
    after.added = {i for i, text in enumerate(new) if text not in old}
    after.dropped = [e for e, text in zip(before.entries, old, strict=True) if text not in new]
    return after


Key = tuple[str | None, str]
"""A plan on the board: the session it belongs to (None when the notification named none)
and its id there."""


class PlanBoard:
    """The plans a client shows, updated from `session/update` notifications.

    Args:
        clock: The time now, in seconds, for how long a change stays marked
            (`MARK_SECONDS`); a fake clock makes the marks testable.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.plans: dict[Key, ShownPlan] = {}
        """The active plans, by session and plan id: a subagent's plan never overwrites its
        parent's of the same id."""
        self.subagents: dict[str, str] = {}
        """Each announced subagent session's title (its id when it has none)."""
        self._clock = clock
        self._removed: dict[Key, ShownPlan] = {}
        self._marked_at: dict[Key, float] = {}
        self._created_at: dict[Key, float] = {}

    def apply(self, params: Mapping[str, Any]) -> ShownPlan | str | None:
        """Take one notification; the plan it changed, the id it removed, or None.

        Args:
            params: The `session/update` params (`sessionId` and `update`), or the update
                alone; an update of any other kind is ignored.
        """
        update = params.get("update", params)
        session = params.get("sessionId") if "update" in params else None
        session = session if isinstance(session, str) else None
        kind = update.get("sessionUpdate")
        if kind == "subagent_update":
            child = update.get("sessionId")
            if isinstance(child, str):
                title = update.get("title", self.subagents.get(child))
                self.subagents[child] = title if isinstance(title, str) and title else child
            return None
        owner = self.subagents.get(session, "") if session is not None else ""
        if kind == "plan":
            entries = [as_read(e) for e in update.get("entries", [])]
            plan = ShownPlan(_LEGACY_ID, "items", entries, session_id=session, owner=owner)
            return self._show(plan) if plan.entries else self._remove((session, _LEGACY_ID))
        if kind == "plan_update":
            body = update["plan"]
            plan = ShownPlan(
                str(body.get("id", body.get("planId"))),
                body["type"],
                [as_read(e) for e in body.get("entries", [])],
                body.get("content", ""),
                body.get("uri", ""),
                body.get("path", ""),
                session_id=session,
                owner=owner,
            )
            return self._show(plan)
        if kind == "plan_removed":
            return self._remove((session, str(update.get("id", update.get("planId")))))
        return None

    def _show(self, plan: ShownPlan) -> ShownPlan:
        now = self._clock()
        key = (plan.session_id, plan.id)
        self._removed.pop(key, None)
        if key not in self.plans:
            self._created_at[key] = now
        plan = _diff(self.plans.get(key), plan)
        if now - self._created_at[key] < MARK_SECONDS:
            plan.added = set()  # a plan still being written: every step is new, none stands out
        self.plans[key] = plan
        self._marked_at[key] = now
        return plan

    def _remove(self, key: Key) -> str:
        gone = self.plans.pop(key, None)
        self._created_at.pop(key, None)
        if gone is not None:
            self._removed[key] = dataclasses.replace(gone.settled(), removed=True)
            self._marked_at[key] = self._clock()
        return key[1]

    def settle(self) -> None:
        """Drop every change mark now, as if MARK_SECONDS had passed."""
        self.plans = {k: p.settled() for k, p in self.plans.items()}
        self._removed.clear()
        self._marked_at.clear()

    def shown(self) -> list[ShownPlan]:
        """What is on screen now: active plans (marked while their change is fresh), then
        plans removed in the last MARK_SECONDS."""
        now = self._clock()

        def fresh(plan: ShownPlan) -> bool:
            marked = self._marked_at.get((plan.session_id, plan.id), float("-inf"))
            return now - marked < MARK_SECONDS

        def owned(plan: ShownPlan) -> ShownPlan:
            # The subagent's title as it is now: a later subagent_update may have renamed it.
            owner = self.subagents.get(plan.session_id or "", plan.owner)
            return plan if owner == plan.owner else dataclasses.replace(plan, owner=owner)

        active = [owned(p if fresh(p) else p.settled()) for p in self.plans.values()]
        return active + [owned(p) for p in self._removed.values() if fresh(p)]

    def render(self) -> RenderableType:
        """Every plan on screen as its own panel."""
        shown = self.shown()
        if not shown:
            return Text("(no plans)", style="dim")
        return Group(*(panel(p) for p in shown))

    def __rich__(self) -> RenderableType:
        return self.render()


def panel(plan: ShownPlan) -> Panel:
    """One plan as a rich panel; a removed plan is dimmed and titled as removed.

    Args:
        plan: The plan, as `PlanBoard.shown()` gives it.
    """
    # Titles are Text, not str: a str title is read as rich markup, where the valid id `[/]`
    # raises and `[red]x` would be styled rather than shown.
    where = f"{plan.owner} / " if plan.owner else ""
    if plan.type == "items":
        title = Text(f"{where}{plan.id} · {plan.progress}")
        lines = [entry_line(e, new=i in plan.added) for i, e in enumerate(plan.entries)]
        lines += [dropped_line(e) for e in plan.dropped]
        body: RenderableType = Group(*lines)
    elif plan.type == "markdown":
        title = Text(f"{where}{plan.id} · markdown" + (f" · {plan.path}" if plan.path else ""))
        body = Markdown(plan.content)
    else:
        title = Text(f"{where}{plan.id} · file")
        body = Text(plan.uri.removeprefix("file://"), style="underline")
    if plan.removed:
        return Panel(
            body,
            title=title + " · removed",
            title_align="left",
            border_style="red",
            style="dim strike",
        )
    return Panel(body, title=title, title_align="left", border_style="cyan")


def entry_line(entry: Mapping[str, Any], *, new: bool = False) -> Text:
    """One step: its status icon, priority and text; the current step stands out, and a
    step just added says so.

    Args:
        entry: The step as the wire carries it (`content`, `status`, `priority`).
        new: Mark the step as just added.
    """
    status = str(entry.get("status", "pending"))
    priority = str(entry.get("priority", "medium"))
    line = Text()
    line.append(f"{_ICONS.get(status, '?')} ", style="green" if status == "completed" else "")
    # A done step is dimmed under a green tick, not struck through: strike is how the board
    # marks what was removed, and a finished step was not.
    style = {"completed": "dim", "in_progress": "bold yellow", "cancelled": "dim"}.get(status, "")
    line.append(str(entry.get("content", "")), style=style)
    if priority != "medium":
        line.append(f"  [{priority}]", style="red" if priority == "high" else "dim")
    if new:
        line.append("  new", style="bold green")
    return line


def dropped_line(entry: Mapping[str, Any]) -> Text:
    """A step the latest update took out of the plan.

    Args:
        entry: The step as it was before the update.
    """
    line = Text(f"{_DROPPED_ICON} ", style="red")
    line.append(str(entry.get("content", "")), style="dim strike")
    line.append("  removed", style="red")
    return line


def plain(plan: ShownPlan) -> str:
    """A plan as plain text, for output that is not a terminal, with its change marks.

    Args:
        plan: The plan, as `PlanBoard.shown()` gives it.
    """
    name = f"{plan.owner} / {plan.id}" if plan.owner else plan.id
    if plan.removed:
        return f"[{name}] removed"
    if plan.type == "items":
        lines = [f"[{name}] {plan.progress} done"]
        for i, entry in enumerate(plan.entries):
            status = str(entry.get("status", "pending"))
            priority = entry.get("priority", "medium")
            tag = "" if priority == "medium" else f" ({priority})"
            tag += " (new)" if i in plan.added else ""
            lines.append(f"  {_ICONS.get(status, '?')} {entry.get('content')}{tag}")
        lines += [f"  {_DROPPED_ICON} {e.get('content')} (removed)" for e in plan.dropped]
        return "\n".join(lines)
    if plan.type == "markdown":
        body = "\n".join(f"  {line}" for line in plan.content.splitlines())
        where = f" {plan.path}" if plan.path else ""
        return f"[{name}] markdown{where}\n{body}"
    return f"[{name}] file {plan.uri}"
