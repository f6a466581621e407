"""The Markdown texts the model reads: tool descriptions and the example agent's system prompt.

They ship as package data in `llm_plans/prompts/`, one file per text, so they can be read
and reviewed as prose rather than as string literals.
"""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def prompt(name: str) -> str:
    """The text of `llm_plans/prompts/<name>.md`."""
    return (resources.files("llm_plans") / "prompts" / f"{name}.md").read_text("utf-8").strip()
