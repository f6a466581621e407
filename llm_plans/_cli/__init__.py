"""The `llm-plans` command: the demo, the example agent and the shell-facing entry point."""
