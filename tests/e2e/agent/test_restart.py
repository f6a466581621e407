"""Kill the example agent mid-session, start a new one, load the session: same plans; and
what session/load does with stored plans that no longer validate."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_client import Client, agent_env, connected, prompt_block, sample_project
from coding_agent import skipped_notice
from coding_agent_lib.store import PlanStore
from spec_shapes import check

from llm_plans import SkippedPlan


async def test_plans_survive_a_killed_agent(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    env = {**agent_env(tmp_path / "data"), "LLM_PLANS_SCRIPT_DELAY": "0.02"}
    caps: dict[str, Any] = {"plan": {}}

    first = Client()
    # The agent dies mid-turn: the client's own writes to it may then fail as it closes.
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        async with connected(first, project, env, caps) as (conn, process, _init):
            session = await conn.new_session(cwd=str(project))
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
            )
            # once the design note is committed (the agent moves on to editing), kill mid-turn
            while not any(getattr(u, "title", "") == "Write calc.py" for u in first.typed):
                await asyncio.sleep(0.01)
            os.kill(process.pid, signal.SIGKILL)
            await process.wait()
            turn.cancel()
    seen: dict[str, dict[str, object]] = {}
    for update in first.plan_updates:
        seen[update["plan"]["planId"]] = update["plan"]

    second = Client()
    async with connected(second, project, env, caps) as (conn, _process, init):
        assert init["agentCapabilities"]["loadSession"] is True
        await conn.load_session(cwd=str(project), session_id=session.session_id)
    replayed = {u["plan"]["planId"]: u["plan"] for u in second.plan_updates}
    assert replayed == seen
    assert list(replayed) == ["plan-1", "design"]
    for params in second.raw:
        check("schema", params)


async def test_load_restores_what_it_can_and_says_what_it_left_out(tmp_path: Path) -> None:
    """The project moved: a stored file plan now points outside it. The other plan comes
    back, and the user hears which plan was left out and why."""
    project = sample_project(tmp_path)
    old_home = tmp_path / "old-home"
    old_home.mkdir()
    (old_home / "PLAN.md").write_text("# The plan\n- [ ] a step\n")
    kept = {"type": "items", "id": "plan-2", "entries": [_entry("keep me")]}
    snapshot = {
        "version": 1,
        "next_number": 3,
        "plans": [{"type": "file", "id": "notes", "uri": (old_home / "PLAN.md").as_uri()}, kept],
    }
    data = tmp_path / "data"
    PlanStore(data).save("sess_moved", str(project), snapshot)
    client = Client()
    async with connected(client, project, agent_env(data), {"plan": {}}) as (conn, _process, _):
        await conn.load_session(cwd=str(project), session_id="sess_moved")
        response = await conn.prompt(session_id="sess_moved", prompt=prompt_block("go"))
    first = client.plan_updates[0]
    assert first == {"sessionUpdate": "plan_update", "plan": {"planId": "plan-2", **_plan(kept)}}
    said = client.said
    assert said.startswith(
        "1 saved plan of this session could not be restored and was left out:\n- plan 'notes': "
    )
    # the reason restore() gives, without what is addressed to a model
    assert said.splitlines()[1] == (
        f"- plan 'notes': uri: sent \"{(old_home / 'PLAN.md').as_uri()}\"; "
        f"the file must be inside the workspace {project}."
    )
    assert response.stop_reason == "end_turn"  # and the session goes on


def _entry(content: str) -> dict[str, str]:
    return {"content": content, "priority": "medium", "status": "pending"}


def _plan(plan: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in plan.items() if k != "id"}


def test_the_notice_names_the_first_plans_left_out_and_counts_the_rest() -> None:
    rejected = "create_plan was not applied (2 problems); no plan was changed.\n- a: x\n- b: y\nFix"
    assert skipped_notice([SkippedPlan(0, "p", rejected)]).endswith("\n- plan 'p': a: x b: y\n")
    skipped = [SkippedPlan(n, f"p{n}", "why") for n in range(12)] + [SkippedPlan(12, None, "no id")]
    assert skipped_notice(skipped[:1]) == (
        "1 saved plan of this session could not be restored and was left out:\n- plan 'p0': why\n"
    )
    lines = skipped_notice(skipped).splitlines()
    assert lines[0] == "13 saved plans of this session could not be restored and were left out:"
    assert lines[1:] == [f"- plan 'p{n}': why" for n in range(10)] + ["- and 3 more"]
    assert skipped_notice([skipped[-1]]).splitlines()[1] == "- plans[12]: no id"
