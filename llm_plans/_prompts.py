"""The Markdown texts the model reads: tool descriptions and the example agent's system prompt."""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path


@functools.cache
def prompt(name: str) -> str:
    """The text of `prompts/<name>.md`, from the installed package or the source checkout."""
    packaged = resources.files("llm_plans") / "prompts" / f"{name}.md"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8").strip()
    # An editable install runs from the checkout, where the prompts sit beside the package.
    source = Path(__file__).resolve().parent.parent / "prompts" / f"{name}.md"
    return source.read_text(encoding="utf-8").strip()
