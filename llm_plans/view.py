"""A client-side view of an agent's plans, rendered with rich, following the spec's
"Client Display" guidance: progress per plan, the current step highlighted, priorities shown.

Feed it every `session/update` params dict the agent sends (any of the three wire forms);
it keeps the active plans and renders them as panels.

Example:
    board = PlanBoard()
    board.apply(params)           # for each session/update notification
    rich.print(board.render())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

_ICONS = {"completed": "✔", "in_progress": "▶", "pending": "○"}
_LEGACY_ID = "plan"


@dataclass
class ShownPlan:
    """One plan as the client holds it."""

    id: str
    type: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    content: str = ""
    uri: str = ""

    @property
    def progress(self) -> str:
        done = sum(1 for e in self.entries if e.get("status") == "completed")
        return f"{done}/{len(self.entries)}"


class PlanBoard:
    """The plans a client shows, updated from `session/update` notifications."""

    def __init__(self) -> None:
        self.plans: dict[str, ShownPlan] = {}

    def apply(self, params: Mapping[str, Any]) -> ShownPlan | str | None:
        """Take one notification; the plan it changed, the id it removed, or None."""
        update = params.get("update", params)
        kind = update.get("sessionUpdate")
        if kind == "plan":
            plan = ShownPlan(_LEGACY_ID, "items", list(update.get("entries", [])))
            self.plans = {_LEGACY_ID: plan} if plan.entries else {}
            return plan
        if kind == "plan_update":
            body = update["plan"]
            plan_id = str(body.get("id", body.get("planId")))
            plan = ShownPlan(
                plan_id,
                body["type"],
                list(body.get("entries", [])),
                body.get("content", ""),
                body.get("uri", ""),
            )
            self.plans[plan_id] = plan
            return plan
        if kind == "plan_removed":
            plan_id = str(update.get("id", update.get("planId")))
            self.plans.pop(plan_id, None)
            return plan_id
        return None

    def render(self) -> RenderableType:
        """Every active plan as its own panel."""
        if not self.plans:
            return Text("(no plans)", style="dim")
        return Group(*(panel(p) for p in self.plans.values()))


def panel(plan: ShownPlan) -> Panel:
    """One plan as a rich panel."""
    if plan.type == "items":
        title = f"{plan.id} · {plan.progress}"
        body: RenderableType = Group(*(entry_line(e) for e in plan.entries))
    elif plan.type == "markdown":
        title = f"{plan.id} · markdown"
        body = Markdown(plan.content)
    else:
        title = f"{plan.id} · file"
        body = Text(plan.uri.removeprefix("file://"), style="underline")
    return Panel(body, title=title, title_align="left", border_style="cyan")


def entry_line(entry: Mapping[str, Any]) -> Text:
    """One step: its status icon, priority and text; the current step stands out."""
    status = str(entry.get("status", "pending"))
    priority = str(entry.get("priority", "medium"))
    line = Text(f"{_ICONS.get(status, '?')} ")
    style = {"completed": "dim strike", "in_progress": "bold yellow"}.get(status, "")
    line.append(str(entry.get("content", "")), style=style)
    if priority != "medium":
        line.append(f"  [{priority}]", style="red" if priority == "high" else "dim")
    return line


def plain(plan: ShownPlan) -> str:
    """A plan as plain text, for output that is not a terminal."""
    if plan.type == "items":
        lines = [f"[{plan.id}] {plan.progress} done"]
        for entry in plan.entries:
            status = str(entry.get("status", "pending"))
            priority = entry.get("priority", "medium")
            tag = "" if priority == "medium" else f" ({priority})"
            lines.append(f"  {_ICONS.get(status, '?')} {entry.get('content')}{tag}")
        return "\n".join(lines)
    if plan.type == "markdown":
        body = "\n".join(f"  {line}" for line in plan.content.splitlines())
        return f"[{plan.id}] markdown\n{body}"
    return f"[{plan.id}] file {plan.uri}"
