"""Kill the example agent mid-session, start a new one, load the session: same plans."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import acp
from acp.schema import TextContentBlock
from agent_client import AGENT, Client, agent_env, sample_project
from spec_shapes import check


async def test_plans_survive_a_killed_agent(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    data = tmp_path / "data"
    env = {**agent_env(data), "LLM_PLANS_SCRIPT_DELAY": "0.02"}
    caps = {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": {"plan": {}}}

    first = Client()
    async with acp.spawn_agent_process(
        first,
        sys.executable,
        str(AGENT),
        cwd=project,
        env=env,
        observers=[first.observe],
        use_unstable_protocol=True,
    ) as (conn, process):
        await conn._conn.send_request("initialize", caps)
        session = await conn.new_session(cwd=str(project))
        turn = asyncio.ensure_future(
            conn.prompt(
                session_id=session.session_id, prompt=[TextContentBlock(type="text", text="go")]
            )
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
    async with acp.spawn_agent_process(
        second,
        sys.executable,
        str(AGENT),
        cwd=project,
        env=env,
        observers=[second.observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        init = await conn._conn.send_request("initialize", caps)
        assert init["agentCapabilities"]["loadSession"] is True
        await conn.load_session(cwd=str(project), session_id=session.session_id)
    replayed = {u["plan"]["planId"]: u["plan"] for u in second.plan_updates}
    assert replayed == seen
    assert list(replayed) == ["plan-1", "design"]
    for params in second.raw:
        check("schema", params)
