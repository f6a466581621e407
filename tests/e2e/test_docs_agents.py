"""Each docs page that shows an agent shows one that runs as a reader would run it: its titled
blocks copied into an empty directory, the wheel installed with the page's own install line's
extras into a fresh virtualenv, no API key, and an ACP client on the official Python SDK
(tests/support/docs_agent_client.py, run in that virtualenv) through `initialize`, `session/new` and
one prompt. The plans it sends must arrive, in the stable form the client asked for.

Blocks run in-process too (tests/e2e/test_docs.py imports each titled block as a module); here
they run as the program they make.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import cast

import extras_check
import pytest
from spec_shapes import check
from wheel_build import (
    ROOT,
    RUN_FRESH_VIRTUALENVS,
    build_wheel,
    clean_env,
    installed_in_background,
)

DOCS = ROOT / "docs"
# The pages whose blocks make an agent; found by their `agent.py`, so a new one is tested too.
AGENT_PAGES = sorted(p for p in DOCS.rglob("*.md") if "agent.py" in extras_check.page_files(p))
# The ACP SDK majors the `acp` extra admits (tests/e2e/test_acp_sdk_versions.py): the page that is
# only the SDK's runs on each, the others on what a fresh install gets.
SDK_PINS = {"acp-sdk.md": ("agent-client-protocol==1.0.0rc3",)}
CASES = [(page.name, None) for page in AGENT_PAGES] + [
    (page, pin) for page, pins in SDK_PINS.items() for pin in pins
]
INSTALL_TIMEOUT = 1200  # a cold pip cache on a slow machine; never a timed assertion
RUN_TIMEOUT = 300


def install_extras(page: Path) -> str:
    """The extras of the last install line above the page's `agent.py` block."""
    text = page.read_text()
    above = text[: text.index('```python title="agent.py"')]
    lines: list[str] = re.findall(r'pip install -e "\.\[([\w,-]+)\]"', above)
    assert lines, f"{page.name}: no install line above its agent"
    return lines[-1]


def test_the_pages_that_show_an_agent() -> None:
    assert [p.name for p in AGENT_PAGES] == ["acp-sdk.md", "frameworks.md", "model-apis.md"]
    assert {p.name: install_extras(p) for p in AGENT_PAGES} == {
        "acp-sdk.md": "acp",
        "frameworks.md": "openai-agents",
        "model-apis.md": "openai,acp",
    }


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: p.name)
def test_a_page_makes_each_file_once(page: Path) -> None:
    """Two blocks of one page titled alike would leave a reader to guess which to keep."""
    titles = [m.group(1) for m in extras_check.BLOCK.finditer(page.read_text()) if m.group(1)]
    assert len(titles) == len(set(titles)), titles


def test_the_acp_example_is_the_pages_agent() -> None:
    """examples/acp_plan_agent.py is the ACP SDK page's agent, so neither can drift alone."""
    (page,) = [p for p in AGENT_PAGES if p.name == "acp-sdk.md"]
    example = (ROOT / "examples" / "acp_plan_agent.py").read_text()
    assert extras_check.page_files(page)["agent.py"] == example


@pytest.fixture(scope="module")
def virtualenvs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str | None], Future[Path]]]:
    """A fresh virtualenv per case, with the wheel and the page's extras (and the pinned SDK),
    installed in the background while the agents run."""
    selected = [
        (cast(str, item.callspec.params["page"]), cast("str | None", item.callspec.params["pin"]))
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.originalname == "test_the_pages_agent_runs_from_the_wheel"
    ]
    wheel = build_wheel(tmp_path_factory.mktemp("dist"), timeout=INSTALL_TIMEOUT)
    installs = {
        (page, pin): (
            tmp_path_factory.mktemp(f"venv-{Path(page).stem}"),
            (f"{wheel}[{install_extras(DOCS / page)}]", *((pin,) if pin else ())),
        )
        for page, pin in selected
    }
    with installed_in_background(installs, timeout=INSTALL_TIMEOUT) as futures:
        yield futures


@pytest.mark.skipif(
    not RUN_FRESH_VIRTUALENVS,
    reason="a fresh virtualenv per page takes a minute or more: CI runs it (CI=true), or set "
    "LLM_PLANS_EXTRAS_CHECK=1",
)
@pytest.mark.parametrize(("page", "pin"), CASES)
def test_the_pages_agent_runs_from_the_wheel(
    page: str,
    pin: str | None,
    virtualenvs: dict[tuple[str, str | None], Future[Path]],
    tmp_path: Path,
) -> None:
    try:
        python = virtualenvs[page, pin].result()
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"pip could not install the wheel for {page}:\n{exc.stderr.decode()}")
    project = tmp_path / "project"  # the empty directory a reader copies the blocks into
    project.mkdir()
    for name, code in extras_check.page_files(DOCS / page).items():
        (project / name).write_text(code)
    out = subprocess.run(
        [
            str(python),
            str(ROOT / "tests" / "support" / "docs_agent_client.py"),
            str(project / "agent.py"),
        ],
        capture_output=True,
        text=True,
        env=clean_env(),  # no API key: the page's agent runs on its offline model
        cwd=project,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    report = json.loads(out.stdout.splitlines()[-1])
    # the wheel's llm_plans, not the checkout's; the pinned SDK where one is pinned
    assert Path(report["llm_plans"]).is_relative_to(python.parents[1]), report["llm_plans"]
    if pin is not None:
        assert f"agent-client-protocol=={report['acp']}" == pin
    assert report["stop_reason"] == "end_turn", report
    updates = report["updates"]
    plans = [u for u in updates if u["update"]["sessionUpdate"].startswith("plan")]
    assert plans, updates
    assert plans[0]["update"]["sessionUpdate"] == "plan_update", updates
    for params in plans:
        assert params["sessionId"] == report["session_id"]
        check("schema", params)  # the form a client advertising `plan: {}` gets
