"""The plan tools other agents' models are trained on, one module per dialect.

`PlanSession(dialects=...)` and `tools.*(dialect=...)` take them by name; `llm_plans._dialects`
lists them.
"""
