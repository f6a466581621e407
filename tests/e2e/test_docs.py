"""The docs site: every Python block in docs/ runs as written (the model loops against mocked
APIs, the framework blocks in tests/e2e/test_integrations_readme.py), every public name has its
API reference, and `mkdocs build --strict` passes."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import extras_check
import pytest
from wire_payloads import Recorder, anthropic_client, chat_completion, message_stream, openai_client

import llm_plans
from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
# Each block with its page and, for a titled block (a file of a program the page shows), its
# file name.
BLOCKS = [
    pytest.param(page, match.group(1), match.group(2), id=f"{page.relative_to(DOCS)}-{index}")
    for page in PAGES
    for index, match in enumerate(extras_check.BLOCK.finditer(page.read_text()))
]
# A code fence line: the fence, a language, a file name.
_FENCE = re.compile(r'\s*```(?:[\w+-]+(?: title="[\w.-]+")?)?\s*')
PLAN = {
    "type": "items",
    "id": None,
    "entries": [{"content": "Fix", "priority": None, "status": "in_progress"}],
    "content": None,
    "uri": None,
}


def run_block(page: str, needle: str, tmp_path: Path) -> dict[str, Any]:
    blocks = [m.group(2) for m in extras_check.BLOCK.finditer((DOCS / page).read_text())]
    [block] = [b for b in blocks if needle in b]
    script = tmp_path / "block.py"
    script.write_text(block)
    return runpy.run_path(str(script), run_name="docs")


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.name)
def test_code_fences_stand_on_lines_of_their_own(page: Path) -> None:
    # A fence with text after it does not close the block: the prose after it renders as
    # code (the blocks above would still be found and run).
    lines = page.read_text().splitlines()
    stray = [n for n, line in enumerate(lines, 1) if "```" in line and not _FENCE.fullmatch(line)]
    assert stray == [], f"{page.name}: a code fence shares its line with text at lines {stray}"


@pytest.mark.parametrize(("page", "title", "block"), BLOCKS)
def test_docs_block_runs(
    page: Path,
    title: str | None,
    block: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    if title is not None:
        # A file of the page's program, imported beside the others as a module: its agent does
        # not start serving stdio here (tests/e2e/test_docs_agents.py runs it as a program).
        extras_check.run_file(title, extras_check.page_files(page), tmp_path)
        return
    script = tmp_path / "block.py"
    script.write_text(block)
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    if "print(json.dumps(params" in block:  # a first session: it prints what it sends
        assert '"sessionUpdate": "plan_update"' in out
        assert "True\n" in out


def test_docs_json_blocks_parse() -> None:
    blocks = [b for p in PAGES for b in re.findall(r"```json\n(.*?)```", p.read_text(), re.S)]
    assert blocks
    for block in blocks:
        json.loads(block)


async def test_openai_loop(tmp_path: Path) -> None:
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
    turn = run_block("model-apis.md", "async def openai_turn", tmp_path)["openai_turn"]
    reply = await turn(openai_client(http), session, [{"role": "user", "content": "fix"}])
    assert reply == "Fixed."
    assert [m["role"] for m in http.requests[1]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    assert send.updates[-1]["plan"]["entries"][0]["status"] == "in_progress"


async def test_anthropic_streamed_loop(tmp_path: Path) -> None:
    http = Recorder(
        message_stream([("toolu_1", "create_plan", json.dumps(PLAN)), ("toolu_2", "bash", "{}")]),
        message_stream([], stop="end_turn"),
    )
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities=None, stream_interval=0)
    turn = run_block("model-apis.md", "async def anthropic_turn", tmp_path)["anthropic_turn"]
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


def documented() -> set[str]:
    """Every `::: name` of the API reference pages."""
    pages = (DOCS / "reference").glob("*.md")
    return {m for p in pages for m in re.findall(r"^::: ([\w.]+)", p.read_text(), re.M)}


def test_every_public_name_has_its_api_reference() -> None:
    names = documented()
    missing = {f"llm_plans.{n}" for n in llm_plans.__all__} - names - {"llm_plans.tools"}
    assert not missing
    for module in ("tools", "providers", "view", "testing", "integrations", "dialects"):
        assert f"llm_plans.{module}" in names
    for package in ("integrations", "dialects"):  # every public module of each
        modules = (ROOT / "llm_plans" / package).glob("[!_]*.py")
        assert {f"llm_plans.{package}.{p.stem}" for p in modules} <= names, package
    for name in names:  # each names something that exists
        module, _, attribute = name.rpartition(".")
        try:
            importlib.import_module(name)
        except ImportError:
            assert hasattr(importlib.import_module(module), attribute), name


def test_every_guide_page_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in config, page


def test_mkdocs_build_is_strict_and_clean(tmp_path: Path) -> None:
    """The same build .ci/run does: broken links, unknown references or docstrings griffe
    cannot read fail it."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "reference" / "index.html").is_file()
    assert "llm_plans.PlanSession" in (tmp_path / "reference" / "index.html").read_text()


def extras() -> dict[str, set[str]]:
    """Each extra of pyproject.toml and the distribution names it installs, nested extras
    expanded."""
    # The package supports Python 3.10, which has no tomllib.
    tomllib = pytest.importorskip("tomllib", reason="tomllib is new in Python 3.11")

    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared: dict[str, list[str]] = table["optional-dependencies"]

    def names(extra: str) -> set[str]:
        found: set[str] = set()
        for requirement in declared[extra]:
            name = re.match(r"[\w.-]+", requirement)
            assert name is not None
            if name[0] == "llm-plans":
                inner = re.search(r"\[(.*)\]", requirement)
                assert inner is not None
                for nested in inner[1].split(","):
                    found |= names(nested.strip())
            else:
                found.add(name[0])
        return found

    return {extra: names(extra) for extra in declared}


def test_install_page_names_every_extra_and_what_it_adds() -> None:
    page = (DOCS / "install.md").read_text()
    rows = re.findall(r"^\| `([\w-]+)` \| .*? \| (.*) \|$", page, flags=re.M)
    declared = extras()
    assert {extra for extra, _ in rows} == set(declared)
    for extra, adds in rows:
        for package in re.findall(r"`([\w.\[\]-]+)`", adds):
            name = package.split("[")[0]
            assert name in declared[extra], (extra, name)
        if "ACP SDK" in adds:
            assert "agent-client-protocol" in declared[extra], extra


def test_demo_svg_is_the_picture_of_a_fresh_demo_run(tmp_path: Path) -> None:
    """scripts/demo_svg.py draws the same picture on every run: the committed one."""
    fresh = tmp_path / "demo.svg"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo_svg.py"), "--out", str(fresh)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert fresh.read_text() == (DOCS / "assets" / "demo.svg").read_text()
    text = fresh.read_text()
    for shown in ("plan-1", "follow-ups", "design", "removed"):
        assert shown in text


def table_rows(page: str, heading: str) -> dict[str, str]:
    """The first two cells of each row of the first table under `heading`, by first cell."""
    text = (DOCS / page).read_text()
    section = text[text.index(heading) :]
    table = section[section.index("\n|") :].split("\n\n")[0]
    rows = re.findall(r"^\| (.+?) \| (.+?) \|", table, flags=re.M)
    return {first: second for first, second in rows[2:]}


def number(text: str) -> int:
    """The first number of a cell: `4,096 bytes` is 4096."""
    found = re.search(r"\d[\d,]*", text)
    assert found is not None, text
    return int(found[0].replace(",", ""))


def test_the_limits_table_states_every_limit_and_its_default() -> None:
    rows = table_rows("limits-and-guarantees.md", "## Limits\n")
    defaults = llm_plans.Limits()
    assert {name.strip("`") for name in rows} == {f.name for f in dataclasses.fields(defaults)}
    for name, cell in rows.items():
        assert number(cell) == getattr(defaults, name.strip("`")), name


def test_the_agent_limits_table_states_the_agents_constants() -> None:
    from coding_agent import MAX_NAMED_SKIPPED
    from coding_agent_lib import commands, matching, workspace

    rows = table_rows("limits-and-guarantees.md", "## The example agent's limits\n")
    assert number(rows["`run_command` time"]) == commands.COMMAND_TIMEOUT
    assert number(rows["SIGTERM to SIGKILL grace"]) == commands.KILL_GRACE
    assert number(rows["`search`: files searched"]) == workspace.MAX_SEARCHED
    assert number(rows["`search`: file size"]) == matching.MAX_FILE_BYTES
    assert number(rows["`search`: hits"]) == matching.MAX_HITS
    assert f"cut to {matching.MAX_LINE_CHARS} characters" in rows["`search`: hits"]
    assert number(rows["`search`: pattern program"]) << 20 == matching.MAX_PROGRAM_BYTES
    assert number(rows["tool paths"]) == workspace.MAX_PATH_CHARS
    assert number(rows["tool output"]) == workspace.MAX_OUTPUT_CHARS
    assert number(rows["command output held"]) << 20 == commands.MAX_KEPT_BYTES
    assert number(rows["`session/load` notice"]) == MAX_NAMED_SKIPPED


def test_the_agent_search_section_states_the_search_s_constants() -> None:
    from coding_agent_lib import matching, search, workspace

    text = (DOCS / "limits-and-guarantees.md").read_text()
    section = text[text.index("## The example agent's search\n") :].split("\n## ")[0]
    section = " ".join(section.split())
    assert f"within **{search.MAX_SEARCH_SECONDS:g} s**" in section
    assert f"within **{search.STOP_SECONDS:g} s**" in section
    assert f"{search.STOP_SECONDS:g} s of the {search.MAX_SEARCH_SECONDS:g} is kept" in section
    assert f"stopped at {matching.MAX_HITS} matches" in section
    assert f"searched only the first {workspace.MAX_SEARCHED:,} files" in section
    assert f"CPU limit ({matching.MAX_WORKER_CPU_SECONDS} s" in section
    agent = " ".join((DOCS / "example-agent.md").read_text().split())
    assert f"longer than {search.MAX_SEARCH_SECONDS:g} s" in agent
    assert f"gone within {search.STOP_SECONDS:g} s" in agent


def test_the_rejection_bounds_are_the_ones_the_code_keeps() -> None:
    from llm_plans._core import results

    text = (DOCS / "limits-and-guarantees.md").read_text()
    bullet = text[text.index("- **Rejections are small.**") :].split("\n- ")[0]
    assert f"first {results.MAX_PROBLEMS_LISTED} problems" in bullet
    assert f"({results.MAX_REJECTION_BYTES:,} UTF-8 bytes)" in bullet
    assert f"cut to {results._MAX_LINE_BYTES} bytes" in bullet
    assert f"to {results._MAX_SHOWN} characters" in bullet
    assert f"to {results._MAX_CONTEXT_BYTES:,} bytes" in bullet
