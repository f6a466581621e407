"""Kill the example agent mid-session, start a new one, load the session: same plans."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from agent_client import Client, agent_env, connected, prompt_block, sample_project
from spec_shapes import check


async def test_plans_survive_a_killed_agent(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    env = {**agent_env(tmp_path / "data"), "LLM_PLANS_SCRIPT_DELAY": "0.02"}
    caps = {"plan": {}}

    first = Client()
    # The agent dies mid-turn: the client's own writes to it may then fail as it closes.
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        async with connected(first, project, env, caps) as (conn, process, _init):
            session = await conn.new_session(cwd=str(project))
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
            )
            # once the design note is committed (the agent moves on to editing), kill mid-turn
            while not any(getattr(u, "title", "") == "write_file calc.py" for u in first.typed):
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
