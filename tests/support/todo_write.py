"""Claude Code's `TodoWrite` calls for the integrations' `dialect="claude_todos"` tests."""

from __future__ import annotations

import json

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

TODOS = [
    ("Reproduce the bug", "Reproducing the bug"),
    ("Fix the parser", "Fixing the parser"),
    ("Run the tests", "Running the tests"),
]

BAD = json.dumps({"todos": [{"content": "Fix", "status": "later", "activeForm": "Fixing"}]})
"""A status no dialect knows: rejected, naming `todos[0].status`."""


def todo_write(done: int) -> str:
    """`TodoWrite` arguments: the first `done` todos completed, the next in progress."""
    return json.dumps(
        {
            "todos": [
                {
                    "content": content,
                    "status": "completed"
                    if i < done
                    else "in_progress"
                    if i == done
                    else "pending",
                    "activeForm": active,
                }
                for i, (content, active) in enumerate(TODOS)
            ]
        }
    )


def todo_session(send: RecordingSend, **options: object) -> PlanSession:
    """A session taking Claude Code's `TodoWrite` only, sending the v1 plan operations."""
    return PlanSession(
        send,
        session_id="s",
        client_capabilities={"plan": {}},
        stream_interval=0,
        dialects=["claude_todos"],
        **options,  # type: ignore[arg-type]
    )


def shown(send: RecordingSend) -> list[tuple[str, str]]:
    """The list as the client last saw it: (text, status) per entry; the step in progress in
    Claude's own wording (its `activeForm`)."""
    return [(e["content"], e["status"]) for e in send.updates[-1]["plan"]["entries"]]


APPLIED = [
    ("Reproduce the bug", "completed"),
    ("Fixing the parser", "in_progress"),
    ("Run the tests", "pending"),
]
"""`shown()` after `todo_write(1)`."""
