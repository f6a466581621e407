"""Ollama's native chat API (`/api/chat`, the `ollama` package): tool calls without ids.

Its streamed responses carry each tool call whole in one message; its OpenAI-compatible
endpoint (`/v1`) is served by `openai.py`. How its calls are read and answered lives with
every provider's in `llm_plans._toolcalls`, which the session uses too.
"""

from __future__ import annotations

from .._toolcalls import ollama_result as result
from .._toolcalls import parse_ollama as parse

__all__ = ["parse", "result"]
