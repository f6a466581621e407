"""Ollama's native chat API (`/api/chat`, the `ollama` package): tool calls without ids.

Its streamed responses carry each tool call whole in one message; its OpenAI-compatible
endpoint (`/v1`) is served by `openai.py`.
"""

from __future__ import annotations

from typing import Any

from ._base import ProviderCall, get

__all__ = ["parse", "result"]


def parse(call: Any) -> ProviderCall | None:
    """An Ollama native tool call, `{"function": {"name": ..., "arguments": {...}}}` with no
    id (object or dict); else None.

    Args:
        call: One of an Ollama chat message's `tool_calls`, as an SDK object or a dict.
    """
    function = get(call, "function")
    name = get(function, "name")
    if get(call, "type") not in (None, "function") or get(call, "id") is not None:
        return None
    if function is None or not isinstance(name, str):
        return None
    return ProviderCall(None, name, get(function, "arguments"), result)


def result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `tool` message naming the tool it answers, as Ollama matches results by name.

    Args:
        call: The call being answered (its name goes in `tool_name`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: the message has no error flag).
    """
    return {"role": "tool", "tool_name": call.name, "content": content}
