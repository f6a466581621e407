"""Adapters that feed each SDK's stream events into a `PlanSession` as they arrive.

Example:
    plans = OpenAIChatStream(session)
    async for chunk in await client.chat.completions.create(..., stream=True):
        await plans.on_event(chunk)
    messages += await plans.finish()  # tool results for the plan calls
"""

from ._base import StreamAdapter
from .anthropic import AnthropicStream
from .openai import OpenAIChatStream, OpenAIResponsesStream

__all__ = ["AnthropicStream", "OpenAIChatStream", "OpenAIResponsesStream", "StreamAdapter"]
