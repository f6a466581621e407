"""Tool calls as each SDK returns them, and tool results in each provider's native shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._models import TOOL_NAMES

Provider = Literal["openai_chat", "openai_responses", "anthropic"]


@dataclass(frozen=True)
class Call:
    """A tool call in provider-neutral form."""

    provider: Provider
    call_id: str
    name: str
    arguments: Any
    """JSON text (OpenAI) or a decoded dict (Anthropic)."""

    @property
    def is_plan_tool(self) -> bool:
        return self.name in TOOL_NAMES


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def parse_call(call: Any) -> Call | None:
    """Recognise an OpenAI chat, OpenAI Responses or Anthropic tool call (object or dict)."""
    kind = _get(call, "type")
    function = _get(call, "function")
    if kind == "function" and function is not None:
        return Call(
            "openai_chat",
            str(_get(call, "id")),
            str(_get(function, "name")),
            _get(function, "arguments"),
        )
    if kind == "function_call":
        return Call(
            "openai_responses",
            str(_get(call, "call_id")),
            str(_get(call, "name")),
            _get(call, "arguments"),
        )
    if kind == "tool_use":
        return Call(
            "anthropic", str(_get(call, "id")), str(_get(call, "name")), _get(call, "input")
        )
    return None


def native_result(call: Call, content: str, ok: bool) -> dict[str, Any]:
    """The tool result to append to the conversation, in the call's provider format."""
    if call.provider == "openai_chat":
        return {"role": "tool", "tool_call_id": call.call_id, "content": content}
    if call.provider == "openai_responses":
        return {"type": "function_call_output", "call_id": call.call_id, "output": content}
    return {
        "type": "tool_result",
        "tool_use_id": call.call_id,
        "content": content,
        "is_error": not ok,
    }
