"""Each model API's tool calls, tool results and stream events, one module per provider.

`parse(call)` recognises a tool call exactly as any supported SDK returns it (object or
dict); the stream adapters take each SDK's stream events as they come.

Example:
    async with OpenAIChatStream(session) as plans:
        async for chunk in await client.chat.completions.create(..., stream=True):
            await plans.on_event(chunk)
        messages += await plans.finish()  # tool results for the plan calls
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import anthropic, ollama, openai
from ._base import Arguments, ProviderCall, StreamAdapter
from .anthropic import AnthropicStream
from .openai import OpenAIChatStream, OpenAIResponsesStream

__all__ = [
    "AnthropicStream",
    "Arguments",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "ProviderCall",
    "StreamAdapter",
    "parse",
]


_PARSERS: tuple[Callable[[Any], ProviderCall | None], ...] = (
    anthropic.parse,
    openai.parse_responses,
    openai.parse,
    ollama.parse,
)
"""Asked in turn; each recognises only its own provider's calls."""


def parse(call: Any) -> ProviderCall | None:
    """The tool call `call` in provider-neutral form, or None when no provider knows it.

    Accepts an OpenAI chat tool call (with or without `"type": "function"`, as Mistral and
    LiteLLM send them), an OpenAI Responses `function_call`, an Anthropic `tool_use` block or
    an Ollama native tool call, as SDK objects or dicts. Any tool name is parsed; ask
    `session.plan_tool(call.name)` whether it is a plan tool.

    Args:
        call: The tool call as the SDK returned it, or its dict.
    """
    for parser in _PARSERS:
        parsed = parser(call)
        if parsed is not None:
            return parsed
    return None
