"""Limits with clear errors, and file plans kept to local files inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from plan_kinds import file_plan

from llm_plans import Limits, PlanSession
from llm_plans.testing import RecordingSend


async def rejected(session: PlanSession, tool: str, arguments: Any) -> str:
    result = await session.call(tool, arguments)
    assert not result.ok
    return result.content


async def test_default_limits_are_sensible() -> None:
    limits = Limits()
    assert 50 <= limits.max_entries <= 1_000
    assert limits.max_plans >= 5


@pytest.mark.parametrize(
    ("limits", "arguments", "message"),
    [
        (
            Limits(max_id_length=5),
            {"type": "items", "id": "toolong", "entries": ["a"]},
            "at most 5 characters",
        ),
        (Limits(), {"type": "items", "id": "a\nb", "entries": ["a"]}, "control characters"),
        (
            Limits(max_entries=2),
            {"type": "items", "entries": ["a", "b", "c"]},
            "3 steps; at most 2",
        ),
        (
            Limits(max_entry_chars=10),
            {"type": "items", "entries": ["x" * 11]},
            "11 characters; at most 10",
        ),
        (
            Limits(max_markdown_chars=10),
            {"type": "markdown", "content": "y" * 20},
            "20 characters; at most 10",
        ),
        (
            Limits(max_arguments_bytes=50),
            '{"type": "items", "entries": ["' + "z" * 60 + '"]}',
            "at most 50 are accepted",
        ),
    ],
)
async def test_limits_give_clear_errors(limits: Limits, arguments: Any, message: str) -> None:
    session = PlanSession(RecordingSend(), session_id="s", limits=limits)
    assert message in await rejected(session, "create_plan", arguments)


async def test_active_plans_per_session() -> None:
    session = PlanSession(RecordingSend(), session_id="s", limits=Limits(max_plans=2))
    for _ in range(2):
        assert (await session.call("create_plan", {"type": "markdown", "content": "x"})).ok
    assert "Remove a finished plan" in await rejected(
        session, "create_plan", {"type": "markdown", "content": "x"}
    )
    await session.call("remove_plan", {"id": "plan-1"})
    assert (await session.call("create_plan", {"type": "markdown", "content": "x"})).ok


@pytest.mark.parametrize(
    "uri",
    [
        "http://example.com/plan.md",
        "data:text/plain,x",
        "javascript:alert(1)",
        "ftp://h/p",
        "file://otherhost/p.md",
        "relative/plan.md",
    ],
)
async def test_only_local_files(uri: str) -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    content = await rejected(session, "create_plan", {"type": "file", "uri": uri})
    assert f'uri: sent "{uri}"' in content


async def test_paths_are_normalised_to_file_uris(tmp_path: Path) -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", form="documents", workspace=tmp_path)
    await session.call("create_plan", {"type": "file", "uri": f"{tmp_path}/docs/../my plan.md"})
    assert send.updates[-1]["plan"]["uri"] == (tmp_path / "my plan.md").as_uri()
    assert file_plan(session.plans["plan-1"]).uri == (tmp_path / "my plan.md").as_uri()


async def test_paths_must_stay_inside_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.md").write_text("- x")
    os.symlink(tmp_path / "secret.md", workspace / "link.md")
    session = PlanSession(RecordingSend(), session_id="s", workspace=workspace)
    for uri in (f"{workspace}/../secret.md", (workspace / "link.md").as_uri(), "/etc/passwd"):
        assert "inside the workspace" in await rejected(
            session, "create_plan", {"type": "file", "uri": uri}
        )
    assert (await session.call("create_plan", {"type": "file", "uri": f"{workspace}/plan.md"})).ok


async def test_truncated_json_is_reported_as_truncation() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    content = await rejected(session, "create_plan", '{"type": "items", "entries": [{"cont')
    assert "cut off" in content
    assert "required" not in content
