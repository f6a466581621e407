"""README.md, the landing page: its Python blocks run as written, its commands are the ones CI
and the tests run, its links lead to pages that exist, and its picture is in the repository."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest
from wire_payloads import Recorder, chat_completion, openai_client

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
BASH = [b.strip() for b in re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)]
DEMO = 'python -m pip install -e ".[agent]" && python -m llm_plans demo'
TESTS = 'python -m pip install -e ".[dev]" && python -m pytest'


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / f"block_{index}.py"
    script.write_text(BLOCKS[index])
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    if "PlanSession(send" in BLOCKS[index]:  # the quickstart prints what it says it prints
        assert '"sessionUpdate": "plan_update"' in out
        assert "True\n" in out
        assert "['plan-1']" in out
        assert 'Updated plan "plan-1" (2 steps): step 1 completed' in out  # what changed
        assert 'In progress: step 2 "Fix the parser".\nRemaining: 1 of 2.' in out
    if "tools.openai_chat()" in BLOCKS[index]:
        assert "3 tools" in out


async def test_readme_tool_call_loop_answers_plan_calls_and_leaves_the_others(
    tmp_path: Path,
) -> None:
    [block] = [b for b in BLOCKS if "async def run_tool_calls" in b]
    script = tmp_path / "block.py"
    script.write_text(block)
    run_tool_calls = runpy.run_path(str(script), run_name="readme")["run_tool_calls"]
    plan = json.dumps({"type": "items", "entries": [{"content": "Fix"}]})
    http = Recorder(chat_completion([("call_1", "create_plan", plan), ("call_2", "ls", "{}")]))
    response = await openai_client(http).chat.completions.create(model="m", messages=[])
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
    messages: list[dict[str, object]] = []
    await run_tool_calls(session, response.choices[0].message, messages)
    assert [m["tool_call_id"] for m in messages] == ["call_1", "call_2"]
    assert "plan-1" in str(messages[0]["content"])
    assert messages[1]["content"] == "..."
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Fix"


def test_readme_commands_are_the_ones_ci_and_the_tests_run() -> None:
    venv = BASH.index("python3 -m venv .venv && . .venv/bin/activate")
    assert BASH.index(DEMO) > venv  # the virtualenv comes first
    assert BASH.index(TESTS) > venv
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'python -m pip install -e ".[dev]"' in ci
    assert "python -m pytest" in ci
    assert "mkdocs build --strict" in ci


def test_readme_is_a_landing_page_whose_links_lead_somewhere() -> None:
    assert len(TEXT.splitlines()) <= 220
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", TEXT)
    local = [link for link in links if not link.startswith("http")]
    assert local
    for link in local:
        assert (ROOT / link).exists(), link
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages - {"docs/index.md"} <= set(local)  # every guide page is linked


def test_readme_picture_is_the_generated_demo_svg() -> None:
    assert "](docs/assets/demo.svg)" in TEXT
    svg = (ROOT / "docs" / "assets" / "demo.svg").read_text()
    assert svg.startswith("<svg")
    assert "scripts/demo_svg.py" in TEXT


def dialect_rows(text: str) -> dict[str, str]:
    """The Dialects table of a page: each dialect's last cell (its bytes per status change)."""
    section = text[text.index("# Dialects\n") :]  # README's section, or the page
    table = section[section.index("\n|") :].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)`[^|]*\|.*\| ([^|]+) \|$", table, flags=re.M)
    return {name: cell for name, cell in rows}


def test_the_dialects_tables_name_every_dialect_with_its_published_bytes() -> None:
    """README's and the Dialects page's tables are copied from the benchmarks' table
    dialect-written by hand: they must show today's figures, for every registered dialect."""
    from registry import NAMES

    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    [i2] = [table for table in results["tables"] if table["key"] == "dialect-written"]
    column = i2["header"].index("one status change, 20 steps")
    published = {row[0]: int(row[column]) for row in i2["rows"]}
    assert set(published) == set(NAMES)
    for text in (TEXT, (ROOT / "docs" / "dialects.md").read_text()):
        rows = dialect_rows(text)
        assert set(rows) == set(NAMES)
        for name, cell in rows.items():
            shown = re.match(r"[\d,]+", cell)
            assert shown is not None, (name, cell)
            assert int(shown[0].replace(",", "")) == published[name], name
