"""Anthropic Messages: `tool_use` blocks, `tool_result` blocks, and stream events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import ProviderCall, Session, StreamAdapter, StreamedCall, field_reader, get, keyed

__all__ = ["AnthropicStream", "parse", "result"]


def parse(call: Any) -> ProviderCall | None:
    """An Anthropic `tool_use` content block (object or dict); else None.

    Args:
        call: A content block of an Anthropic message, as an SDK object or a dict.
    """
    name = get(call, "name")
    if get(call, "type") != "tool_use" or not isinstance(name, str):
        return None
    return ProviderCall(str(get(call, "id")), name, get(call, "input"), result)


def result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `tool_result` block answering the call, flagged as an error when rejected.

    Args:
        call: The call being answered (its id goes in `tool_use_id`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded; False sets `is_error`.
    """
    return {
        "type": "tool_result",
        "tool_use_id": call.call_id,
        "content": content,
        "is_error": not ok,
    }


# What the usual event's fast path reads, one reader a level (see `field_reader`).
_event_fields = field_reader("type", "index", "delta")
_delta_fields = field_reader("type", "partial_json")


class AnthropicStream(StreamAdapter):
    """Feeds `messages.create(stream=True)` events, or those of `messages.stream(...)`, into
    a session. Tool uses are told apart by content block index.

    Args:
        session: The `PlanSession` the plan calls go to (anything with the methods the
            adapters use of it).
    """

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._blocks: dict[Any, StreamedCall] = {}
        self._started = False

    def _shape(self, call: StreamedCall, content: str, ok: bool) -> dict[str, Any]:
        return result(ProviderCall(call.provider_id, call.name, None, result), content, ok)

    async def _new_response(self) -> None:
        await super()._new_response()
        self._blocks.clear()

    def _usual(self, event: Any) -> bool | None:
        """The usual event, more input JSON for a tool use being streamed: taken at once,
        read at dict speed (see `field_reader`); whether a preview is due. None, having
        changed nothing, for any other event: `_general` takes it, and would take this one the
        same way."""
        values = _event_fields(event)
        if values is None or values.get("type") != "content_block_delta":
            return None
        delta = _delta_fields(values.get("delta"))
        try:
            call = self._blocks.get(values.get("index"))
        except TypeError:  # an index that is no key (a list, say): the general path's
            return None
        if delta is None or call is None or delta.get("type") != "input_json_delta":
            return None
        call.final = None  # first, as `_general` does: streamed text, when some came, is the input
        return self._stream(call, delta.get("partial_json"))

    async def _general(self, event: Any) -> None:
        """Any event, read with `get`."""
        kind = get(event, "type")
        if kind == "message_start":
            if self._started:
                await self._new_response()
            self._started = True
        elif kind == "content_block_start":
            block = get(event, "content_block")
            if get(block, "type") == "tool_use":
                call = await self._start(get(block, "id"), get(block, "name") or "")
                self._blocks[keyed(get(event, "index"))] = call
                # Gateways may send the whole input here, with no deltas after it.
                given = get(block, "input")
                if isinstance(given, Mapping) and given:
                    await self._feed(call, given)
        elif kind == "content_block_delta":
            delta = get(event, "delta")
            open_call = self._blocks.get(keyed(get(event, "index")))
            if open_call is not None and get(delta, "type") == "input_json_delta":
                open_call.final = None  # streamed text, when there is some, is the input
                await self._feed(open_call, get(delta, "partial_json"))
        elif kind == "content_block_stop":
            stopped = self._blocks.get(keyed(get(event, "index")))
            if stopped is not None:
                await self._finish(stopped)
        elif kind == "message_delta":
            stop = get(get(event, "delta"), "stop_reason")
            await self._finish_group(None, stop == "max_tokens")
        elif kind == "error":
            await self.abort()
