"""Anthropic stream adapter: Messages events, raw or from `messages.stream(...)`."""

from __future__ import annotations

from typing import Any

from .._calls import Provider
from ._base import StreamAdapter, get


class AnthropicStream(StreamAdapter):
    """Feeds `messages.create(stream=True)` events, or those of `messages.stream(...)`, into
    a session. Tool uses are told apart by content block index."""

    provider: Provider = "anthropic"

    async def on_event(self, event: Any) -> None:
        kind = get(event, "type")
        if kind == "content_block_start":
            block = get(event, "content_block")
            if get(block, "type") == "tool_use":
                await self._start(get(event, "index"), get(block, "id"), get(block, "name"))
        elif kind == "content_block_delta":
            delta = get(event, "delta")
            if get(delta, "type") == "input_json_delta":
                await self._feed(get(event, "index"), get(delta, "partial_json") or "")
        elif kind == "content_block_stop":
            await self._finish(get(event, "index"))
        elif kind == "message_delta":
            self.truncated = get(get(event, "delta"), "stop_reason") == "max_tokens"
