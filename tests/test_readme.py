"""Every Python block in README.md runs as written; the model loops run against mocked APIs."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path
from typing import Any

import pytest
from wire import Recorder, anthropic_client, chat_completion, message_stream, openai_client

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

README = Path(__file__).parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
PLAN = {
    "type": "items",
    "id": None,
    "entries": [{"content": "Fix", "priority": None, "status": "in_progress"}],
    "content": None,
    "uri": None,
}


def run_block(needle: str, tmp_path: Path) -> dict[str, Any]:
    [block] = [b for b in BLOCKS if needle in b]
    script = tmp_path / "block.py"
    script.write_text(block)
    return runpy.run_path(str(script), run_name="readme")


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / f"block_{index}.py"
    script.write_text(BLOCKS[index])
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    if "PlanSession(send" in BLOCKS[index]:
        assert '"sessionUpdate": "plan_update"' in out
        assert "True\n" in out


async def test_readme_openai_loop(tmp_path: Path) -> None:
    done = chat_completion([], "stop")
    done["choices"][0]["message"]["content"] = "Fixed."
    http = Recorder(
        chat_completion(
            [("call_1", "create_plan", json.dumps(PLAN)), ("call_2", "run_tests", "{}")]
        ),
        done,
    )
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    turn = run_block("async def openai_turn", tmp_path)["openai_turn"]
    reply = await turn(openai_client(http), session, [{"role": "user", "content": "fix"}])
    assert reply == "Fixed."
    assert [m["role"] for m in http.requests[1]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    assert send.updates[-1]["plan"]["entries"][0]["status"] == "in_progress"


async def test_readme_anthropic_loop(tmp_path: Path) -> None:
    http = Recorder(
        message_stream([("toolu_1", "create_plan", json.dumps(PLAN)), ("toolu_2", "bash", "{}")]),
        message_stream([], stop="end_turn"),
    )
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=None, stream_interval=0)
    turn = run_block("async def anthropic_turn", tmp_path)["anthropic_turn"]
    reply = await turn(anthropic_client(http), session, [{"role": "user", "content": "fix"}])
    assert reply == ""
    second = http.requests[1]["messages"]
    assert second[1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "create_plan",
        "input": PLAN,
    }
    assert [b["tool_use_id"] for b in second[2]["content"]] == ["toolu_1", "toolu_2"]
    assert second[2]["content"][0]["is_error"] is False
    assert send.updates[-1]["entries"] == [
        {"content": "Fix", "priority": "medium", "status": "in_progress"}
    ]


def test_readme_commands_are_the_ones_ci_and_the_tests_run() -> None:
    bash = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    demo, tests = bash[0].strip(), bash[1].strip()
    assert demo == 'python -m pip install -e ".[agent]" && python -m llm_plans demo'
    assert tests == 'python -m pip install -e ".[dev]" && python -m pytest'
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'python -m pip install -e ".[dev]"' in ci
    assert "python -m pytest" in ci


def test_readme_json_blocks_parse() -> None:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        json.loads(block)
