"""The ACP Python SDK's majors the `acp` extra admits, each tested: the tests that speak ACP run
here on the SDK this environment has, and again in a fresh virtualenv on the other major
(1.0 beside 0.12, 0.12 beside 1.0).

Not the protocol's versions (v1, v2): those are tests/wire/test_acp_versions.py's.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import time
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from wheel_build import PIP, ROOT

# The 1.0 release candidate: what 1.0 is until it is published.
SDK_NAME, SDK_1_VERSION = "agent-client-protocol", "1.0.0rc3"
# The tests that run ACP: the SDK's schema round trip (golden), acp_send and the recorder, the
# example agent and its tools, `llm-plans agent` and the demo, the framework examples over an
# ACP pipe, and acpx and the TypeScript SDK as clients (tests/node).
ACP_TESTS = (
    "e2e/test_acp_pipe.py",
    "wire/test_acp_send.py",
    "wire/test_acp_versions.py",
    "e2e/agent/test_acp_builders.py",
    "e2e/agent/test_models.py",
    "e2e/agent/test_scripted.py",
    "e2e/agent/test_workspace.py",
    "e2e/test_cli.py",
    "e2e/agent/test_coding_agent.py",
    "e2e/test_demo.py",
    "wire/test_golden.py",
    "integrations/test_claude_agent_sdk.py",
    "integrations/test_claude_hooks.py",
    "integrations/test_langchain.py",
    "integrations/test_openai_agents.py",
    "integrations/test_pydantic_ai.py",
    "integrations/test_stateful.py",
    "e2e/test_interop.py",
    "e2e/agent/test_restart.py",
    "e2e/agent/test_store.py",
)
# The tests' own ACP clients and pipes: a test file that imports one speaks ACP.
ACP_HELPERS = {"acp", "agent_client", "agent_pipe", "integration_pipe"}
# Use acp.schema's models only as values, never over a connection: the golden and acp_send
# tests cover those models on both SDKs.
ACP_VALUES_ONLY = {"test_session.py", "test_subagents.py"}
# Installing the dev extra resolves and unpacks its whole tree (Claude Code alone is 365 MB);
# generous room for a slow machine with a cold cache, never a timed assertion.
INSTALL_TIMEOUT = 1200
RUN_TIMEOUT = 1800
# Minutes of installing and testing: CI runs it, a local run opts in.
RUN_OTHER_MAJOR = os.environ.get("CI") == "true" or os.environ.get("LLM_PLANS_ACP_SDK_CHECK") == "1"


def acp_requirement() -> Requirement:
    section = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
    (line,) = re.findall(r"^acp = \[(.*)\]$", section, flags=re.M)
    (requirement,) = re.findall(r'"([^"]+)"', line)
    return Requirement(requirement)


def test_the_acp_extra_admits_the_tested_majors_only() -> None:
    specifier = acp_requirement().specifier
    assert acp_requirement().name == SDK_NAME
    for tested in ("0.12.1", "0.12.9", "1.0.0", "1.9"):
        assert specifier.contains(tested), tested
    for untested in ("0.12.0", "2.0.0", "2.0.0rc1"):
        assert not specifier.contains(untested, prereleases=True), untested
    # As pip chooses: a final release that fits wins over a pre-release, so installing the
    # extra never needs --pre; pinned, the release candidate fits.
    assert list(specifier.filter(["0.12.1", "1.0.0rc3"])) == ["0.12.1"]
    assert list(specifier.filter([SDK_1_VERSION])) == [SDK_1_VERSION]
    assert Version(SDK_1_VERSION).major == 1


def speaks_acp(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        if any(name.partition(".")[0] in ACP_HELPERS for name in names):
            return True
    return False


def test_every_test_that_speaks_acp_runs_on_both_sdks() -> None:
    tests = ROOT / "tests"
    files = [p for p in tests.rglob("test_*.py") if "node_modules" not in p.parts]
    speaking = {p.relative_to(tests).as_posix() for p in files if speaks_acp(p)} - ACP_VALUES_ONLY
    assert speaking - set(ACP_TESTS) == set(), "add these to ACP_TESTS"
    assert all((tests / name).is_file() for name in ACP_TESTS)


def clean_env() -> dict[str, str]:
    """This environment without API keys and without anything deciding which llm_plans or
    which SDK runs; the check's own switch dropped, so it cannot start itself."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "LLM_PLANS_ACP_SDK_CHECK"}
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in drop}


def the_other_major() -> str:
    """The SDK version the second run installs: 1.0 beside this environment's 0.12 and, once
    1.0 is what a fresh install gets, the lowest 0.12 the extra admits beside it."""
    if Version(importlib.metadata.version(SDK_NAME)).major == 0:
        return SDK_1_VERSION
    (lowest,) = (s.version for s in acp_requirement().specifier if s.operator == ">=")
    return lowest


@pytest.mark.skipif(
    not RUN_OTHER_MAJOR,
    reason="a fresh virtualenv with the dev extra on the other ACP SDK major takes minutes: "
    "CI runs it (CI=true), or set LLM_PLANS_ACP_SDK_CHECK=1",
)
def test_the_acp_tests_pass_on_the_other_sdk_major(tmp_path: Path) -> None:
    wanted = the_other_major()
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)  # this interpreter's pip installs into it
    python = env_dir / "bin" / "python"
    env = clean_env()
    started = time.monotonic()
    # From the index, as a user gets them; pip's cache keeps the downloads between runs. Pip
    # too: tests/e2e/test_demo.py installs the wheel with the running interpreter's.
    requirements = ["pip", "-e", f"{ROOT}[dev]", f"{SDK_NAME}=={wanted}"]
    installed = subprocess.run(
        [*PIP, "--python", str(python), "install", *requirements],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        env=env,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr[-4000:]
    version = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({SDK_NAME!r}))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == wanted
    install_seconds = time.monotonic() - started
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    # The SDK is what differs: the property tests' full example counts ran on this one.
    env["HYPOTHESIS_PROFILE"] = "dev"
    out = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + [f"tests/{name}" for name in ACP_TESTS],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    print(f"ACP SDK {version}: installed in {install_seconds:.0f}s; {summary}")
    assert out.returncode == 0, (out.stdout[-6000:], out.stderr[-2000:])
    assert " passed" in summary, summary
