"""The package as users install it: one version, the licence in the wheel, and each extra alone
in a fresh virtualenv running what its docs sections show (tests/support/extras_check.py)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import subprocess
import zipfile
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import cast

import extras_check
import pytest
from anthropic_server import ScriptedAPI, Step, serving
from wheel_build import (
    ROOT,
    RUN_FRESH_VIRTUALENVS,
    build_wheel,
    clean_env,
    installed_in_background,
)

import llm_plans

# Installing an extra resolves and unpacks its whole tree (Claude Code alone is 365 MB);
# generous room for a slow machine with a cold cache, never a timed assertion.
INSTALL_TIMEOUT = 1200
CHECK_TIMEOUT = 600


def pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text()


def declared_extras() -> dict[str, set[str]]:
    """Each extra of pyproject.toml and the llm-plans extras it names."""
    section = pyproject().split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras: dict[str, set[str]] = {}
    for match in re.finditer(r"^([\w-]+) = \[(.*?)\]$", section, flags=re.M | re.S):
        named = re.findall(r'"llm-plans\[([^\]]*)\]"', match.group(2))
        extras[match.group(1)] = {e.strip() for group in named for e in group.split(",")}
    return extras


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built once, offline, as tests/e2e/test_demo.py builds it."""
    return build_wheel(tmp_path_factory.mktemp("dist"), timeout=CHECK_TIMEOUT)


def test_version_is_the_installed_distributions() -> None:
    assert llm_plans.__version__ == importlib.metadata.version("llm-plans"), (
        "llm_plans/_version.py changed since the install; reinstall (pip install -e .)"
    )
    # pyproject takes it from that one file instead of writing it again
    assert re.search(r'^dynamic = \["version"\]$', pyproject(), flags=re.M)
    assert '[tool.hatch.version]\npath = "llm_plans/_version.py"' in pyproject()


def test_the_changelog_has_unreleased_work_and_this_version() -> None:
    """Keep a Changelog: an Unreleased section first, then one per version, newest first."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.M)
    assert versions[0] == "Unreleased"
    assert llm_plans.__version__ in versions  # a release comes with its entry


def test_the_wheel_carries_the_licence_and_the_version(wheel: Path) -> None:
    info = f"llm_plans-{llm_plans.__version__}.dist-info"
    assert wheel.name.startswith(f"llm_plans-{llm_plans.__version__}-")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert f"\nVersion: {llm_plans.__version__}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    assert "\nLicense-File: LICENSE\n" in metadata
    assert "Copyright (c) 2026 the llm_plans authors" in (ROOT / "LICENSE").read_text()


# Extras for working on llm_plans itself, not for using it: no docs section installs them.
CONTRIBUTOR_EXTRAS = {"dev", "docs"}


def test_the_check_knows_every_extra_and_what_it_includes() -> None:
    declared = declared_extras()
    assert set(extras_check.EXTRAS) == set(declared) - CONTRIBUTOR_EXTRAS
    for extra in extras_check.EXTRAS:
        assert declared[extra] | {extra} <= extras_check.INCLUDES[extra], extra
    # the suite's own environment has them all together
    in_dev = set().union(*(extras_check.INCLUDES[e] for e in declared["dev"] - {"docs"}))
    assert set(extras_check.EXTRAS) <= in_dev


def test_every_doc_block_runs_with_one_extra() -> None:
    """Each Python block of README.md and docs/ needs one extra at most, so one install line
    can name what it needs, and the check of that extra runs it."""
    found = extras_check.blocks(ROOT)
    assert found, "no Python blocks found in README.md and docs/"
    local = extras_check.local_modules(ROOT)
    for where, code in found:
        needs = extras_check.needs(code, local)
        assert any(needs <= includes for includes in extras_check.INCLUDES.values()), (
            f"{where} needs {sorted(needs)}: no one extra installs them all"
        )


def install_line(where: str) -> set[str] | None:
    """The extras the last `pip install` line of a block's docs section names, if any."""
    path, line = where.rsplit(":", 1)
    above = (ROOT / path).read_text().splitlines()[: int(line) - 1]
    for text in reversed(above):
        if re.match(r"#{1,6} ", text):  # the section's heading: no install line in it
            return None
        named = re.search(r'pip install -e "\.\[([^\]]+)\]"', text)
        if named:
            return {extra.strip() for extra in named.group(1).split(",")}
    return None


def test_each_blocks_install_line_names_exactly_the_extras_it_needs() -> None:
    """A block that needs an extra stands in a section whose install line gives it all, and
    names no extra it does not need."""
    local = extras_check.local_modules(ROOT)
    for where, code in extras_check.blocks(ROOT):
        needs = extras_check.needs(code, local)
        if not needs:
            continue  # the core: `pip install -e .`
        named = install_line(where)
        assert named is not None, f"{where} needs {sorted(needs)}, and no install line says so"
        given = set().union(*(extras_check.INCLUDES[extra] for extra in named))
        assert needs <= given, f"{where} needs {sorted(needs)}; its line installs {sorted(named)}"
        for extra in named:
            rest = set().union(*(extras_check.INCLUDES[e] for e in named - {extra}))
            assert not needs <= rest, f"{where}: [{extra}] on its install line is not needed"


def test_needs_reads_a_blocks_imports() -> None:
    code = (
        "import asyncio\nimport openai\nfrom llm_plans import PlanSession\n"
        "from llm_plans.integrations.langchain import plan_tools\n"
        "from llm_plans.testing import RecordingSend, anthropic_client\n"
    )
    assert extras_check.needs(code) == {"openai", "langchain", "anthropic"}
    assert extras_check.needs("from llm_plans.testing import RecordingSend") == set()
    with pytest.raises(ValueError, match="langchain_openai"):
        extras_check.needs("from langchain_openai import ChatOpenAI")
    # a module another block of the docs makes (a titled block) needs nothing more
    assert extras_check.needs("import openai\nfrom openai_turn import t", {"openai_turn"}) == {
        "openai"
    }
    with pytest.raises(ValueError, match="openai_turn"):
        extras_check.needs("from openai_turn import t")


def test_titled_blocks_are_the_files_of_their_page() -> None:
    files = extras_check.page_files(ROOT / "docs" / "model-apis.md")
    assert set(files) == {"openai_turn.py", "agent.py"}
    assert "from openai_turn import openai_turn" in files["agent.py"]
    assert {"openai_turn", "agent", "run_agent"} <= extras_check.local_modules(ROOT)
    (where,) = [w for w, code in extras_check.blocks(ROOT) if code == files["openai_turn.py"]]
    assert extras_check.title(ROOT, where) == "openai_turn.py"


# What the check runs for an extra besides its example (tests/support/extras_check.py).
ALSO_RUN = {"agent": ["llm-plans demo", "llm-plans agent"], "testing": ["FakeModelAPI"]}

# The Anthropic stand-in's script for the Claude Agent SDK example: plan, progress, remove.
CLAUDE_STEPS: list[Step] = [
    [("toolu_1", "mcp__plans__create_plan", extras_check.PLAN)],
    [("toolu_2", "mcp__plans__update_plan", '{"id": "plan-1", "changes": [{"step": 1}]}')],
    [("toolu_3", "mcp__plans__remove_plan", '{"id": "plan-1"}')],
    "Fixed.",
]


@pytest.fixture(scope="module")
def virtualenvs(
    request: pytest.FixtureRequest, wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[Path]]]:
    """The selected extras' virtualenvs, each with the wheel and that extra only, installed in
    the background while the checks run."""
    selected = [
        cast(str, item.callspec.params["extra"])
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.originalname == "test_extra_alone_in_a_fresh_virtualenv"
    ]
    installs = {
        extra: (tmp_path_factory.mktemp(f"venv-{extra}"), (f"{wheel}[{extra}]",))
        for extra in selected
    }
    with installed_in_background(installs, timeout=INSTALL_TIMEOUT) as futures:
        yield futures


@pytest.mark.skipif(
    not RUN_FRESH_VIRTUALENVS,
    reason="a fresh virtualenv per extra takes minutes: CI runs it (CI=true), or set "
    "LLM_PLANS_EXTRAS_CHECK=1",
)
@pytest.mark.parametrize("extra", extras_check.EXTRAS)
def test_extra_alone_in_a_fresh_virtualenv(
    extra: str, virtualenvs: dict[str, Future[Path]], tmp_path: Path
) -> None:
    try:
        python = virtualenvs[extra].result()
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"pip could not install the wheel with [{extra}]:\n{exc.stderr.decode()}")
    env_dir = python.parents[1]
    env = clean_env()
    api = ScriptedAPI("mcp__plans__create_plan", CLAUDE_STEPS)
    with serving(api) as base_url:
        if extra == "claude-agent-sdk":
            from integrations.test_claude_agent_sdk import claude_code_env

            env |= claude_code_env(base_url, tmp_path)
        out = subprocess.run(
            [
                str(python),
                str(ROOT / "tests" / "support" / "extras_check.py"),
                extra,
                "--root",
                str(ROOT),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,  # not the checkout, whose llm_plans must not be the one imported
            timeout=CHECK_TIMEOUT,
            check=False,
        )
    assert out.returncode == 0, out.stderr[-4000:]
    report = json.loads(out.stdout.splitlines()[-1])
    assert Path(report["llm_plans"]).is_relative_to(env_dir)  # the wheel's, not the checkout's
    assert report["blocks"] == [where for where, _ in extras_check.blocks_for(extra, ROOT)]
    expected = [extras_check.EXAMPLES[extra][0]] if extra in extras_check.EXAMPLES else []
    assert report["examples"] == expected + ALSO_RUN.get(extra, [])
    if extra in ("openai", "anthropic"):
        # the section's model loop ran against the fake API, with only this SDK installed
        assert any(d.endswith(f"{extra}_turn") for d in report["driven"]), report
