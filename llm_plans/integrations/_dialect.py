"""Which dialect's tools an integration gives the model: the `dialect=` every integration takes.

The default keeps what a session with only our tools always got: ours. A session that does not
take ours gets the tools of the one dialect it takes; asked for a dialect the session does not
take, or left to choose among several, an integration raises `ConfigurationError` at set-up
rather than offering the model tools every call of which the session would refuse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import ConfigurationError
from ..dialects import _NAMES as NAMES
from ..dialects import _OURS as OURS
from ..dialects import _tools_of as tools_of

if TYPE_CHECKING:
    from .._session import PlanSession


def dialect_for(session: PlanSession, dialect: str | None) -> tuple[str, tuple[str, ...]]:
    """The dialect an integration on `session` offers, and its tools' names.

    `dialect=None`: ours when the session takes ours, else the session's only dialect.
    """
    taken = [name for name in NAMES if _takes(session, name)]
    if dialect is None:
        if OURS in taken or len(taken) != 1:
            if OURS not in taken:
                raise ConfigurationError(
                    f"the session takes the dialects {', '.join(taken)}: pass dialect= one "
                    "of them to choose whose tools the model is given"
                )
            dialect = OURS
        else:
            dialect = taken[0]
    elif not isinstance(dialect, str) or dialect not in NAMES:
        raise ConfigurationError(f"unknown dialect {dialect!r}; use one of {', '.join(NAMES)}")
    elif dialect not in taken:
        raise ConfigurationError(
            f"the session does not take the dialect {dialect!r} (its plan tools: "
            f"{', '.join(session.tool_names)}): create it with "
            f"PlanSession(..., dialects=[..., {dialect!r}]), or pass dialect= one of "
            f"{', '.join(taken)}"
        )
    return dialect, tuple(tools_of(dialect))


def names_of(dialect: object) -> tuple[str, ...]:
    """The tool names of one dialect, without a session to check it against."""
    if not isinstance(dialect, str) or dialect not in NAMES:
        raise ConfigurationError(f"unknown dialect {dialect!r}; use one of {', '.join(NAMES)}")
    return tuple(tools_of(dialect))


def _takes(session: PlanSession, dialect: str) -> bool:
    # The dialect's own tools, not merely tools of the same names: ours and Codex's both
    # name one `update_plan`, and a session holds at most one of them.
    return any(tool.dialect == dialect for tool in session._tools.values())
