from __future__ import annotations

import llm_plans
from llm_plans import tools


def test_public_names_are_exactly_the_intended_ones() -> None:
    assert sorted(llm_plans.__all__) == [
        "Change",
        "ClientCapabilitiesRecorder",
        "ConfigurationError",
        "CreatePlanArgs",
        "FilePlan",
        "ItemsPlan",
        "LLMPlansError",
        "Limits",
        "MarkdownPlan",
        "Plan",
        "PlanEntry",
        "PlanSession",
        "ReentrancyError",
        "RemovePlanArgs",
        "Send",
        "SkippedPlan",
        "StreamError",
        "ToolResult",
        "UpdatePlanArgs",
        "WireForm",
        "acp_send",
        "tools",
    ]
    for name in llm_plans.__all__:
        assert hasattr(llm_plans, name)


def test_tools_module_contract() -> None:
    assert tools.__all__ == [
        "NAMES",
        "anthropic",
        "description",
        "openai_chat",
        "openai_responses",
        "schema",
        "system_prompt",
    ]
    assert tools.NAMES == ("create_plan", "update_plan", "remove_plan")


def test_errors_form_one_tree() -> None:
    assert issubclass(llm_plans.ConfigurationError, llm_plans.LLMPlansError)
    assert issubclass(llm_plans.StreamError, llm_plans.LLMPlansError)
    assert issubclass(llm_plans.ReentrancyError, llm_plans.LLMPlansError)
