"""The parts of the example coding agent (examples/coding_agent.py)."""
