"""The plan tools inside agent frameworks, one module per framework, each an optional extra.

- `llm_plans.integrations.pydantic_ai`: `PlanToolset` (`llm-plans[pydantic-ai]`)
- `llm_plans.integrations.openai_agents`: `plan_tools` (`llm-plans[openai-agents]`)
- `llm_plans.integrations.langchain`: `plan_tools` (`llm-plans[langchain]`)
- `llm_plans.integrations.claude_agent_sdk`: `plan_server` (`llm-plans[claude-agent-sdk]`)

Importing this package imports no framework; each module imports only its own.
"""
