"""The integrations import their framework only when used, and say which extra is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = {
    "pydantic_ai": ("pydantic_ai", "pydantic-ai"),
    "openai_agents": ("agents", "openai-agents"),
    "langchain": ("langchain_core", "langchain"),
    "claude_agent_sdk": ("claude_agent_sdk", "claude-agent-sdk"),
}


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_the_core_and_the_package_import_no_framework() -> None:
    roots = sorted({package for package, _ in FRAMEWORKS.values()})
    done = run(
        "import sys, llm_plans, llm_plans.integrations, llm_plans.tools\n"
        f"print([m for m in {roots!r} if m in sys.modules])"
    )
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize("module", sorted(FRAMEWORKS))
def test_a_missing_framework_names_its_extra(module: str) -> None:
    package, extra = FRAMEWORKS[module]
    done = run(
        f"import sys; sys.modules[{package!r}] = None\nimport llm_plans.integrations.{module}"
    )
    assert f'pip install "llm-plans[{extra}]"' in done.stderr


def test_the_public_names_of_each_integration() -> None:
    from llm_plans.integrations import claude_agent_sdk, langchain, openai_agents, pydantic_ai

    assert pydantic_ai.__all__ == ["PlanToolset"]
    assert openai_agents.__all__ == ["PlanPreviews", "plan_tools"]
    assert langchain.__all__ == ["PlanPreviews", "PlanTool", "plan_tools"]
    assert claude_agent_sdk.__all__ == [
        "BUILTIN_PLAN_TOOLS",
        "PLAN_TOOL_NAMES",
        "PlanPreviews",
        "plan_hooks",
        "plan_server",
        "plan_tool_names",
    ]
