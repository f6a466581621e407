"""OpenAI stream adapters: Chat Completions chunks and Responses events."""

from __future__ import annotations

from typing import Any

from .._calls import Provider
from ._base import StreamAdapter, get


class OpenAIChatStream(StreamAdapter):
    """Feeds `chat.completions.create(stream=True)` chunks, or the events of
    `chat.completions.stream(...)`, into a session. Tool calls are told apart by index."""

    provider: Provider = "openai_chat"

    async def on_event(self, event: Any) -> None:
        if get(event, "type") == "chunk":  # the stream helper wraps each raw chunk
            event = get(event, "chunk")
        elif get(event, "object") != "chat.completion.chunk":
            return
        for choice in get(event, "choices") or []:
            for delta in get(get(choice, "delta"), "tool_calls") or []:
                key = (get(choice, "index"), get(delta, "index"))
                function = get(delta, "function")
                if get(delta, "id") and get(function, "name"):
                    await self._start(key, get(delta, "id"), get(function, "name"))
                await self._feed(key, get(function, "arguments") or "")
            reason = get(choice, "finish_reason")
            if reason is not None:
                self.truncated = reason == "length"
                await self.finish()


class OpenAIResponsesStream(StreamAdapter):
    """Feeds `responses.create(stream=True)` events into a session, by output item id."""

    provider: Provider = "openai_responses"

    async def on_event(self, event: Any) -> None:
        kind = get(event, "type")
        if kind == "response.output_item.added":
            item = get(event, "item")
            if get(item, "type") == "function_call":
                await self._start(get(item, "id"), get(item, "call_id"), get(item, "name"))
                await self._feed(get(item, "id"), get(item, "arguments") or "")
        elif kind == "response.function_call_arguments.delta":
            await self._feed(get(event, "item_id"), get(event, "delta") or "")
        elif kind == "response.function_call_arguments.done":
            await self._finish(get(event, "item_id"))
        elif kind == "response.incomplete":
            details = get(get(event, "response"), "incomplete_details")
            self.truncated = get(details, "reason") == "max_output_tokens"
            await self.finish()
