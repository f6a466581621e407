"""The docs' agent framework sections run as written, with each framework's offline model."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path
from typing import Any

import pytest
from agents import OpenAIResponsesModel, set_tracing_disabled
from anthropic_server import ScriptedAPI, serving
from integrations.test_claude_agent_sdk import SCRIPT, claude_code_env
from integrations.test_langchain import ScriptedChatModel
from integrations.test_openai_agents import text_stream
from integrations.test_pydantic_ai import scripted
from plan_kinds import items_plan
from pydantic_ai.models.function import FunctionModel
from wire_payloads import Recorder, openai_client, responses_stream

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

README = Path(__file__).parents[2] / "docs" / "frameworks.md"  # the docs page of the frameworks
BLOCKS = re.findall(r"```python[^\n]*\n(.*?)```", README.read_text(), flags=re.S)  # titled too
CREATE = json.dumps({"type": "items", "entries": [{"content": "Fix", "status": "in_progress"}]})
DONE = json.dumps({"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]})


def block(needle: str, tmp_path: Path) -> dict[str, Any]:
    [found] = [b for b in BLOCKS if needle in b]
    script = tmp_path / "block.py"
    script.write_text(found)
    return runpy.run_path(str(script), run_name="readme")


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)


async def test_pydantic_ai_section(tmp_path: Path, session: PlanSession) -> None:
    planning_agent = block("def planning_agent", tmp_path)["planning_agent"]
    model: FunctionModel = scripted(
        [("c1", "create_plan", CREATE)], [("c2", "update_plan", DONE)], "Done."
    )
    result = await planning_agent(session, model).run("fix it")
    assert result.output == "Done."
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"


async def test_openai_agents_section(tmp_path: Path, session: PlanSession) -> None:
    run_agent = block("async def run_agent", tmp_path)["run_agent"]
    http = Recorder(
        responses_stream([("call_1", "create_plan", CREATE)]),
        responses_stream([("call_2", "update_plan", DONE)]),
        text_stream("Done."),
    )
    model = OpenAIResponsesModel(model="gpt-4.1", openai_client=openai_client(http))
    set_tracing_disabled(True)  # the block traces as the SDK does by default; offline here
    try:
        assert await run_agent(session, "fix it", model=model) == "Done."
    finally:
        set_tracing_disabled(False)
    assert list(session.plans) == ["plan-1"]
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"


async def test_langchain_section(tmp_path: Path, session: PlanSession, send: RecordingSend) -> None:
    run_graph = block("async def run_graph", tmp_path)["run_graph"]
    model = ScriptedChatModel(
        turns=[[("c1", "create_plan", CREATE)], [("c2", "update_plan", DONE)], "Done."],
        streaming=True,
    )
    assert await run_graph(session, model, "fix it") == "Done."
    assert items_plan(session.plans["plan-1"]).entries[0].status == "completed"
    assert len(send.updates) >= 2


async def test_claude_agent_sdk_section(
    tmp_path: Path, session: PlanSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_claude = block("async def run_claude", tmp_path)["run_claude"]
    api = ScriptedAPI("mcp__plans__create_plan", SCRIPT)
    with serving(api) as base_url:
        for name, value in claude_code_env(base_url, tmp_path).items():
            monkeypatch.setenv(name, value)
        assert await run_claude(session, "fix it") == "Fixed."
    assert session.plans == {}  # created, updated, removed
    assert [r.get("is_error", False) for r in api.tool_results()] == [False, True, False, False]
