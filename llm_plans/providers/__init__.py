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

from .._toolcalls import parse
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
