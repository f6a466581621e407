"""snapshot() and restore(): restored plans are checked as strictly as a model's calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_plans import ConfigurationError, PlanSession
from llm_plans.testing import RecordingSend


def snapshot_of(*plans: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "next_number": 1, "plans": list(plans)}


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"type": "file", "id": "f", "uri": "file:///etc/passwd"}, "inside the workspace"),
        ({"type": "markdown", "id": "\udfff", "content": "x"}, r"plans\[1\]"),
        ({"type": "items", "id": "x" * 200, "entries": []}, "at most 64 characters"),
        (
            {
                "type": "items",
                "id": "i",
                "entries": [
                    {
                        "content": "a",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {"n": float("nan")},
                    }
                ],
            },
            "NaN",
        ),
        (
            {
                "type": "items",
                "id": "i",
                "entries": [{"content": "a" * 5000, "priority": "medium", "status": "pending"}],
            },
            "at most 1000",
        ),
    ],
)
def test_restore_refuses_what_a_call_would_refuse(
    tmp_path: Path, plan: dict[str, Any], message: str
) -> None:
    session = PlanSession(RecordingSend(), session_id="s", workspace=tmp_path)
    good = {"type": "markdown", "id": "kept", "content": "- [ ] a"}
    session.restore(snapshot_of(good))
    with pytest.raises(ConfigurationError, match=message):
        session.restore(snapshot_of(good, plan))
    assert list(session.plans) == ["kept"]  # nothing changed


def test_restore_keeps_meta_and_the_id_counter() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    meta = {"source": "test"}
    session.restore(
        {
            "version": 1,
            "next_number": 7,
            "plans": [{"type": "markdown", "id": "m", "content": "x", "_meta": meta}],
        }
    )
    assert session.plans["m"].meta == meta
    assert session.snapshot()["next_number"] == 7


async def test_restore_waits_for_no_stream_and_replay_takes_back_what_is_gone() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    empty = session.snapshot()
    await session.call("create_plan", {"type": "markdown", "id": "old", "content": "x"})
    await session.feed("c", "create_plan", '{"type": "items", "entries": [{"content": "a"},')
    with pytest.raises(ConfigurationError, match="abort_all"):
        session.restore(empty)
    await session.abort_all()
    session.restore(empty)
    await session.replay()
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "old"}
