"""OpenAI Chat Completions and every server that speaks it: calls, results, stream chunks.

The servers differ in how they key streamed calls: OpenAI sends an id and an `index` on a
call's first delta and the index alone after; Gemini's compatible endpoint sends `""` ids,
Ollama and Gemini give every parallel call index 0 (or none) with distinct ids, SGLang can
change the index after the first delta, Alibaba repeats `"id": ""` on every delta. So a
call is found by its id when the delta has a non-empty one, else by its index, else it is
the choice's latest call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base import (
    ProviderCall,
    Session,
    StreamAdapter,
    StreamedCall,
    field_reader,
    get,
    keyed,
    listed,
)

__all__ = [
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "parse",
    "parse_responses",
    "responses_result",
    "result",
]


def parse(call: Any) -> ProviderCall | None:
    """An OpenAI chat tool call (object or dict), with `"type": "function"` or without it
    (Mistral); None for anything else. Calls without an id are Ollama's (`ollama.parse`).

    Args:
        call: One of a chat message's `tool_calls`, as an SDK object or a dict.
    """
    function = get(call, "function")
    call_id = get(call, "id")
    if get(call, "type") not in (None, "function") or function is None or call_id is None:
        return None
    name = get(function, "name")
    if not isinstance(name, str):
        return None
    return ProviderCall(str(call_id), name, get(function, "arguments"), result)


def result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `tool` message answering the call (chat has no error flag: the text says so).

    Args:
        call: The call being answered (its id goes in `tool_call_id`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: chat has no error flag).
    """
    return {"role": "tool", "tool_call_id": call.call_id, "content": content}


def parse_responses(call: Any) -> ProviderCall | None:
    """An OpenAI Responses `function_call` output item (object or dict); else None.

    Args:
        call: An output item of a Responses response, as an SDK object or a dict.
    """
    if get(call, "type") != "function_call":
        return None
    name = get(call, "name")
    if not isinstance(name, str):
        return None
    return ProviderCall(str(get(call, "call_id")), name, get(call, "arguments"), responses_result)


def responses_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `function_call_output` input item answering the call.

    Args:
        call: The call being answered (its id goes in `call_id`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: the item has no error flag).
    """
    return {"type": "function_call_output", "call_id": call.call_id, "output": content}


@dataclass
class _Choice:
    """The calls of one choice: by provider id, by index, and the latest."""

    by_id: dict[Any, StreamedCall] = field(default_factory=dict)
    by_index: dict[Any, StreamedCall] = field(default_factory=dict)
    latest: StreamedCall | None = None
    finished: bool = False


# What the fast paths read, one reader a level (see `field_reader`): a chat chunk's five
# levels, and a Responses event.
_chunk_fields = field_reader("object", "id", "choices")
_choice_fields = field_reader("index", "delta", "finish_reason")
_delta_fields = field_reader("tool_calls")
_tool_call_fields = field_reader("id", "index", "function")
_function_fields = field_reader("name", "arguments")
_event_fields = field_reader("type", "item_id", "output_index", "delta")


class OpenAIChatStream(StreamAdapter):
    """Feeds `chat.completions.create(stream=True)` chunks, the events of
    `chat.completions.stream(...)`, or LiteLLM's `ModelResponseStream` chunks into a session.

    Each choice of an `n > 1` request is keyed and finished on its own; pass `choice=` to
    follow one of them and ignore the others, and `results_for(choice)` to read one's results.

    Args:
        session: The `PlanSession` the plan calls go to (anything with the methods the
            adapters use of it).
        choice: The index of the one choice to follow, ignoring the others' calls. None:
            every choice.
    """

    def __init__(self, session: Session, *, choice: int | None = None) -> None:
        super().__init__(session)
        self._only = choice
        self._choices: dict[Any, _Choice] = {}
        self._chunk_id: Any = None

    def _all_finished(self) -> bool:
        return bool(self._choices) and all(c.finished for c in self._choices.values())

    def results_for(self, choice: int) -> list[dict[str, Any]]:
        """The native results of one choice's plan calls, in stream order.

        Args:
            choice: The choice's index (0 for a request with `n == 1`).
        """
        return [c.result for c in self._calls if c.group == choice and c.result is not None]

    def tool_calls(self, choice: int | None = None) -> list[dict[str, Any]]:
        """Every tool call of the response so far, plan calls and others, as this adapter told
        them apart, in the order they began: the `tool_calls` of the assistant message to send
        back.

        Build the history from these rather than keying deltas anew: servers key streamed
        calls differently (see the module docstring), and a record keyed another way merges or
        splits calls the session applied on their own.

        Args:
            choice: Keep only this choice's calls. None: every choice's.
        """
        return [
            {
                "id": call.provider_id or "",
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call)},
            }
            for call in self._calls
            # A tentative call never got arguments: a repeated name, not a call.
            if (choice is None or call.group == choice) and not call.tentative
        ]

    def _shape(self, call: StreamedCall, content: str, ok: bool) -> dict[str, Any]:
        return result(ProviderCall(call.provider_id, call.name, None, result), content, ok)

    async def _new_response(self) -> None:
        await super()._new_response()
        self._choices.clear()

    def _usual(self, event: Any) -> bool | None:
        """The usual chunk, nearly every one of a stream: one choice, not finishing, whose one
        tool call delta is more text for the call being streamed. Taken at once, read at dict
        speed (see `field_reader`); whether a preview is due. None, having changed nothing, for any
        other chunk: `_general` takes it, and would take this one the same way."""
        chunk = _chunk_fields(event)
        if chunk is None or chunk.get("object") != "chat.completion.chunk":
            return None  # also the stream helper's events, which `_general` unwraps
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = _choice_fields(choices[0])
        if choice is None or choice.get("finish_reason"):
            return None
        try:
            # Only the choices followed (`choice=`) are there; an index that is no key of it
            # (a list, say) is left to the general path.
            calls = self._choices.get(choice.get("index") or 0)
        except TypeError:
            return None
        if calls is None or calls.finished:
            return None
        delta = _delta_fields(choice.get("delta"))
        tool_calls = None if delta is None else delta.get("tool_calls")
        if type(tool_calls) is not list or len(tool_calls) != 1:
            return None
        # First, as `_general` does: an unfinished choice never makes a new response, so the
        # id is the one `_general` would keep whether or not the delta is taken here.
        self._chunk_id = chunk.get("id") or self._chunk_id
        return self._more(calls, tool_calls[0])

    async def _general(self, event: Any) -> None:
        """Any chunk (or stream helper event), read with `get`."""
        if get(event, "object") != "chat.completion.chunk":  # a raw chunk is the usual case
            kind = get(event, "type")
            if kind == "chunk":  # the stream helper wraps each raw chunk
                event = get(event, "chunk")
            elif kind is not None:
                return  # another of the stream helper's events
        chunk_id = get(event, "id")
        choices = listed(get(event, "choices"))
        fresh = chunk_id and self._chunk_id and chunk_id != self._chunk_id
        if fresh and choices and self._all_finished():
            await self._new_response()  # one adapter reused for the next response
        self._chunk_id = chunk_id or self._chunk_id
        for choice in choices:
            index = keyed(get(choice, "index")) or 0
            if self._only is not None and index != self._only:
                continue
            calls = self._choices.setdefault(index, _Choice())
            if calls.finished:
                continue
            for delta in listed(get(get(choice, "delta"), "tool_calls")):
                due = self._more(calls, delta)
                if due is None:
                    await self._delta(index, calls, delta)
                elif due:
                    await self._session.flush()
            # Some servers (Ollama, SGLang versions) send "" on every chunk until the last.
            reason = get(choice, "finish_reason")
            if reason:
                calls.finished = True
                await self._finish_group(index, reason == "length")

    def _more(self, calls: _Choice, delta: Any) -> bool | None:
        """More text for the call being streamed, the usual delta: handed to the session
        at once (whether a preview is due). None, having changed nothing, for any other
        delta, which `_delta` takes (and would take this one the same way)."""
        call = calls.latest
        if call is None:
            return None
        values = _tool_call_fields(delta)
        function = None if values is None else _function_fields(values.get("function"))
        if values is None or function is None or values.get("id"):
            return None
        arguments = function.get("arguments")
        if function.get("name"):
            return None
        try:
            if calls.by_index.get(values.get("index")) is not call:
                return None
        except TypeError:  # an index that is no key (a list, say): the general path's
            return None
        return self._stream(call, arguments)

    async def _delta(self, choice: Any, calls: _Choice, delta: Any) -> None:
        call_id, index = keyed(get(delta, "id")), keyed(get(delta, "index"))
        function = get(delta, "function")
        name = get(function, "name")
        call = calls.by_id.get(call_id) if call_id else calls.by_index.get(index)
        latest = calls.latest
        unfinished = latest is not None and (not name or not latest.is_complete_json())
        if call is None and not call_id and unfinished:
            call = latest  # an index that changed after the first delta (SGLang)
        arguments = get(function, "arguments")
        # A name under the key of a complete call, with no id to tell them apart, is the next
        # call (Gemini's "" ids); tentative, as a server may just be repeating the name.
        again = call is not None and name and not call_id and call.is_complete_json()
        if call is None or again:
            provider_id = call_id if isinstance(call_id, str) else None
            call = await self._start(provider_id, "", choice, tentative=bool(again))
            if call_id:
                calls.by_id[call_id] = call
        calls.by_index[index] = calls.latest = call
        if name and call.tool is None:
            await self._name(call, name)
        if arguments or isinstance(arguments, Mapping):  # `{}` too: complete arguments
            await self._feed(call, arguments)


def _arguments_text(call: StreamedCall) -> str:
    """A call's arguments as JSON text: complete ones the server sent as an object, else the
    text streamed."""
    if isinstance(call.final, Mapping):
        return json.dumps(dict(call.final))
    if isinstance(call.final, str):
        return call.final
    return "".join(call.parts)


class OpenAIResponsesStream(StreamAdapter):
    """Feeds `responses.create(stream=True)` events into a session, by output item.

    Arguments may come as deltas, or only in `function_call_arguments.done` or
    `output_item.done` (LM Studio); the complete ones reported there are the call's.

    Args:
        session: The `PlanSession` the plan calls go to (anything with the methods the
            adapters use of it).
    """

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._items: dict[Any, StreamedCall] = {}
        self._started = False

    def _shape(self, call: StreamedCall, content: str, ok: bool) -> dict[str, Any]:
        return responses_result(
            ProviderCall(call.provider_id, call.name, None, responses_result), content, ok
        )

    async def _new_response(self) -> None:
        await super()._new_response()
        self._items.clear()

    def _item(self, item_id: Any, output_index: Any) -> StreamedCall | None:
        """A call by output item id, or by output index when the id is missing."""
        try:
            found = self._items.get(item_id) if item_id else None
            return found or self._items.get(("output", output_index))
        except TypeError:  # what keys nothing (a list, say) counts as missing, as when stored
            return self._item(keyed(item_id), keyed(output_index))

    def _usual(self, event: Any) -> bool | None:
        """The usual event, more argument text for a call being streamed: taken at once, read
        at dict speed (see `field_reader`); whether a preview is due. None, having changed
        nothing, for any other event: `_general` takes it, and would take this one the same way."""
        values = _event_fields(event)
        if values is None or values.get("type") != "response.function_call_arguments.delta":
            return None
        call = self._item(values.get("item_id"), values.get("output_index"))
        return None if call is None else self._stream(call, values.get("delta"))

    async def _general(self, event: Any) -> None:
        """Any event, read with `get`."""
        kind = get(event, "type")
        if kind == "response.created":
            if self._started:
                await self._new_response()
            self._started = True
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = get(event, "item")
            if get(item, "type") != "function_call":
                return
            call = self._item(get(item, "id"), get(event, "output_index"))
            if call is None:
                call = await self._start(get(item, "call_id"), get(item, "name") or "")
                item_id = keyed(get(item, "id"))
                if item_id:
                    self._items[item_id] = call
                self._items[("output", keyed(get(event, "output_index")))] = call
            if kind.endswith(".done"):
                await self._finish(call, get(item, "arguments"))
            else:
                await self._feed(call, get(item, "arguments"))
        elif kind in (
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
        ):
            call = self._item(get(event, "item_id"), get(event, "output_index"))
            if call is None:
                return
            if kind.endswith(".done"):
                await self._finish(call, get(event, "arguments"))
            else:
                await self._feed(call, get(event, "delta"))
        elif kind == "response.incomplete":
            details = get(get(event, "response"), "incomplete_details")
            await self._finish_group(None, get(details, "reason") == "max_output_tokens")
        elif kind == "response.completed":
            for position, item in enumerate(listed(get(get(event, "response"), "output"))):
                call = self._item(get(item, "id"), position)
                if call is not None and get(item, "type") == "function_call":
                    await self._finish(call, get(item, "arguments"))
            await self.finish()
        elif kind in ("response.failed", "error"):
            await self.abort()
