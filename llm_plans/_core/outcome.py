"""What a plan tool call came to: it changed the plans, changed nothing, or only read them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import results
from .plans import Book, Stored
from .results import Problem


@dataclass  # not frozen, as Stored: made on every call, never changed
class Applied:
    """A call that changed the book."""

    tool: str
    book: Book
    plan_id: str
    plan: Stored | None
    """The plan after the call; None when it was removed."""
    say: Callable[[Applied, bool], str]
    """The result text of the tool's dialect, from this outcome and whether discipline
    notes are on."""
    changed: tuple[int, ...] = ()
    """The step numbers a `changes` update touched, in the order sent."""

    def text(self, *, discipline: bool = True) -> str:
        """The result the model reads."""
        return self.say(self, discipline)


@dataclass(frozen=True)
class Rejected:
    """A call that changed nothing."""

    tool: str
    problems: list[Problem]
    context: str = ""
    known: bool = True
    """False when `tool` names no plan tool of the session."""
    plan_tools: tuple[str, ...] = ()
    """The session's plan tools, named to a model that called another tool."""

    @property
    def text(self) -> str:
        """The result the model reads: every problem, then what to do."""
        return results.rejection(
            self.tool,
            self.problems,
            context=self.context,
            known=self.known,
            plan_tools=self.plan_tools,
        )


@dataclass(frozen=True)
class Read:
    """A call that only reads (`TaskList`, `TaskGet`): it sends nothing and changes nothing."""

    tool: str
    text: str
