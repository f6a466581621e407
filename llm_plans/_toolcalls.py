"""Tool calls as each model API returns them, in one provider-neutral form, and the tool
result each API expects back.

This is what `PlanSession.handle()` needs of the providers, kept apart from their stream
adapters: the adapters build on the session (`llm_plans.providers`), and the session knows
only these shapes, so dependencies point one way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Arguments = str | Mapping[str, Any] | None
"""A call's arguments as the provider sent them: JSON text, or an already decoded object."""
Shape = Callable[["ProviderCall", str, bool], dict[str, Any]]
"""Puts a tool result in the provider's native shape: (call, content, ok) -> message."""


def get(obj: Any, key: str) -> Any:
    """An attribute of an SDK object, or a key of its dict form; None when it has neither.

    Runs several times per stream chunk, so each kind of object takes its fastest path:
    a dict its own lookup; an object its instance `__dict__` (and pydantic's extras) first.
    A name an SDK object lacks is not asked of `getattr`: on pydantic models a missing
    attribute goes through `__getattr__` and an exception, about 5 µs a time.
    """
    if type(obj) is dict:  # the common case first: one type check, no isinstance walk
        return obj.get(key)
    kind = _kinds.get(type(obj))
    if kind is None:
        kind = _kinds[type(obj)] = _kind(type(obj))
    if kind == _MAPPING:
        return obj.get(key)
    if kind == _RECORD:
        values = obj.__dict__
        if key in values:
            return values[key]
        extra = obj.__pydantic_extra__
        if extra and key in extra:
            return extra[key]
        if key not in _class_names(type(obj)):
            return None
    return getattr(obj, key, None)


def keyed(value: Any) -> Any:
    """A value a stream event keys something by (an index, an id), as given when it can key
    a dict; None for what cannot (a list or a dict a broken server sent there), which then
    keys nothing, as if it were missing."""
    try:
        hash(value)
    except TypeError:
        return None
    return value


def listed(value: Any) -> list[Any] | tuple[Any, ...]:
    """A list a stream event carries (its choices, its tool calls); empty for anything else."""
    return value if type(value) is list or type(value) is tuple else ()


Fields = Callable[[Any], "Mapping[str, Any] | None"]
"""Reads one object's fields for a stream adapter's fast path (see `field_reader`)."""


def field_reader(*names: str) -> Fields:
    """A reader giving, for an object, a mapping that answers `get(obj, name)` for each of
    `names` at dict speed; None for an object it cannot read so.

    For the stream adapters' usual chunk, read several levels deep per token: one reader
    per level, each remembering per type whether it can read it. A dict is its own mapping.
    A pydantic model (an SDK object) whose class declares every one of `names` as a field
    is read through its instance `__dict__`, extras or not: `get` looks there first too, and
    a declared field that is not there (left unset) is None to both, as pydantic takes field
    names out of the class namespace. The one way they could differ, a declared name only
    among the extras, takes an alias (`model_construct` given both), and no field the
    adapters read has one. Anything else gets None, and the adapter reads it with `get`.
    """
    wanted = frozenset(names)
    readable: dict[type, bool] = {}

    def read(obj: Any) -> Mapping[str, Any] | None:
        kind = type(obj)
        if kind is dict:
            return obj  # type: ignore[no-any-return]
        known = readable.get(kind)
        if known is None:
            known = readable[kind] = wanted <= _declared_fields(kind)
        return obj.__dict__ if known else None

    return read


_MAPPING, _RECORD, _OTHER = range(3)
_kinds: dict[type, int] = {}
_names: dict[type, frozenset[str]] = {}


def _kind(kind: type) -> int:
    if issubclass(kind, Mapping):
        return _MAPPING
    # A pydantic model: its fields sit in the instance `__dict__`, extras in
    # `__pydantic_extra__`, and its `__getattr__` only knows private `_names`.
    if hasattr(kind, "__pydantic_fields__") and "__pydantic_extra__" in dir(kind):
        return _RECORD
    return _OTHER


def _declared_fields(kind: type) -> frozenset[str]:
    """The field names a pydantic model class declares; none for any other class."""
    if _kind(kind) != _RECORD:
        return frozenset()
    return frozenset(kind.__pydantic_fields__)  # type: ignore[attr-defined]


def _class_names(kind: type) -> frozenset[str]:
    """Names the class itself answers (properties, methods): asked through `getattr`."""
    names = _names.get(kind)
    if names is None:
        names = _names[kind] = frozenset(dir(kind))
    return names


@dataclass(frozen=True)
class ProviderCall:
    """One tool call as a provider sent it, and how that provider expects its result.

    Made by `parse`, rarely by hand.

    Args:
        call_id: The id as sent (even ""); None for providers whose calls carry none
            (Ollama).
        name: The tool name as sent, prefix included (`mcp__plans__create_plan`).
        arguments: The arguments as sent: JSON text, an already decoded object, or None.
        shape: Puts a tool result in the provider's native shape, from the call, the
            result's text and whether it succeeded.
    """

    call_id: str | None
    """The id as sent (even ""); None for providers whose calls carry none (Ollama)."""
    name: str
    """The tool name as sent, prefix included (`mcp__plans__create_plan`)."""
    arguments: Arguments
    """The arguments as sent: JSON text, an already decoded object, or None."""
    shape: Shape = field(repr=False, compare=False)
    """Puts a tool result in the provider's native shape, from the call, the result's text
    and whether it succeeded."""

    def result(self, content: str, ok: bool) -> dict[str, Any]:
        """The tool result to append to the conversation, in the provider's native shape.

        Args:
            content: The result's text (`ToolResult.content`).
            ok: Whether the call succeeded; a rejection is flagged as an error where the
                provider has a flag (Anthropic's `is_error`), else only its text says so.
        """
        return self.shape(self, content, ok)


# ---- Anthropic Messages ---------------------------------------------------------------------


def parse_anthropic(call: Any) -> ProviderCall | None:
    """An Anthropic `tool_use` content block (object or dict); else None.

    Args:
        call: A content block of an Anthropic message, as an SDK object or a dict.
    """
    name = get(call, "name")
    if get(call, "type") != "tool_use" or not isinstance(name, str):
        return None
    return ProviderCall(str(get(call, "id")), name, get(call, "input"), anthropic_result)


def anthropic_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
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


# ---- OpenAI Chat Completions (and the servers that speak it) --------------------------------


def parse_openai_chat(call: Any) -> ProviderCall | None:
    """An OpenAI chat tool call (object or dict), with `"type": "function"` or without it
    (Mistral); None for anything else. Calls without an id are Ollama's (`parse_ollama`).

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
    return ProviderCall(str(call_id), name, get(function, "arguments"), openai_chat_result)


def openai_chat_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `tool` message answering the call (chat has no error flag: the text says so).

    Args:
        call: The call being answered (its id goes in `tool_call_id`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: chat has no error flag).
    """
    return {"role": "tool", "tool_call_id": call.call_id, "content": content}


# ---- OpenAI Responses -----------------------------------------------------------------------


def parse_openai_responses(call: Any) -> ProviderCall | None:
    """An OpenAI Responses `function_call` output item (object or dict); else None.

    Args:
        call: An output item of a Responses response, as an SDK object or a dict.
    """
    if get(call, "type") != "function_call":
        return None
    name = get(call, "name")
    if not isinstance(name, str):
        return None
    return ProviderCall(
        str(get(call, "call_id")), name, get(call, "arguments"), openai_responses_result
    )


def openai_responses_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `function_call_output` input item answering the call.

    Args:
        call: The call being answered (its id goes in `call_id`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: the item has no error flag).
    """
    return {"type": "function_call_output", "call_id": call.call_id, "output": content}


# ---- Ollama native chat ---------------------------------------------------------------------


def parse_ollama(call: Any) -> ProviderCall | None:
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
    return ProviderCall(None, name, get(function, "arguments"), ollama_result)


def ollama_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """A `tool` message naming the tool it answers, as Ollama matches results by name.

    Args:
        call: The call being answered (its name goes in `tool_name`).
        content: The result's text (`ToolResult.content`).
        ok: Whether the call succeeded (unused: the message has no error flag).
    """
    return {"role": "tool", "tool_name": call.name, "content": content}


PARSERS: tuple[Callable[[Any], ProviderCall | None], ...] = (
    parse_anthropic,
    parse_openai_responses,
    parse_openai_chat,
    parse_ollama,
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
    for parser in PARSERS:
        parsed = parser(call)
        if parsed is not None:
            return parsed
    return None
