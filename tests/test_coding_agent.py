"""The example coding agent against the official ACP Python SDK's client side."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_client import (
    CAPS,
    Client,
    agent_env,
    connected,
    prompt_block,
    run_prompt,
    sample_project,
)
from spec_shapes import check


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_prompt_in_every_capability_form(form: str, tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS[form])
    assert stop == "end_turn"
    for params in client.raw:
        if params["update"]["sessionUpdate"].startswith("plan"):
            check(form, params)
    updates = client.plan_updates
    if form == "legacy":
        assert {u["sessionUpdate"] for u in updates} == {"plan"}
        final = [e["content"] for e in updates[-1]["entries"]]
        assert final[:4] == [
            "Read the project and find the bug",
            "Fix mean() in calc.py",
            "Add a regression test",
            "Run the tests",
        ]
        assert "Divide by `len(values)`" not in final  # the design note was removed
    else:
        key = "id" if form == "documents" else "planId"
        kinds = {u["sessionUpdate"] for u in updates}
        assert kinds == {"plan_update", "plan_removed"}
        removed = [u[key] for u in updates if u["sessionUpdate"] == "plan_removed"]
        assert removed == ["design"]
        plans = {u["plan"][key] for u in updates if u["sessionUpdate"] == "plan_update"}
        assert plans == {"plan-1", "design", "follow-ups"}
        last_work = [u for u in updates if u.get("plan", {}).get(key) == "plan-1"][-1]
        assert {e["status"] for e in last_work["plan"]["entries"]} == {"completed"}
    # real work happened, through the client's fs, after asking
    assert "return sum(values) / len(values)" in (project / "calc.py").read_text()
    assert (project / "test_calc.py").exists()
    assert client.permissions == [
        "Write calc.py",
        "Write test_calc.py",
        "Run `python test_calc.py`",
    ]
    kinds = [getattr(u, "session_update", "") for u in client.typed]
    assert "tool_call" in kinds
    assert "tool_call_update" in kinds
    assert "agent_message_chunk" in kinds


async def test_plans_stream_while_the_model_writes(tmp_path: Path) -> None:
    client, _ = await run_prompt(sample_project(tmp_path), tmp_path / "data", CAPS["schema"])
    first = client.plan_updates[0]
    assert 0 < len(first["plan"]["entries"]) < 4  # shown before the call was complete


async def test_cancel_stops_the_turn(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client = Client()
    env = {**agent_env(tmp_path / "data"), "LLM_PLANS_SCRIPT_DELAY": "0.05"}
    async with connected(client, project, env, {}) as (conn, _process, _init):
        session = await conn.new_session(cwd=str(project))
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
        )
        while not client.plan_updates:
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(turn, 5)
    assert response.stop_reason == "cancelled"
    assert "return sum(values) / (len(values) - 1)" in (project / "calc.py").read_text()
