"""LiteLLM: `ModelResponse` tool calls with `handle()`, `ModelResponseStream` chunks with
`OpenAIChatStream`.

LiteLLM pins `openai<3` and so cannot share this environment; these are faithful fixtures
of what it returns: pydantic objects (not mappings) that dump to the shapes below, with
`type: "function"` and `index` on every delta and `id` and `name` None after the first.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_plans.providers import OpenAIChatStream
from llm_plans.testing import pieces
from providers.test_compat import CREATE, NOTE, assert_client_sees_session, new_session


class LiteLLMObject:
    """As LiteLLM's `OpenAIObject`s: attributes, plus `get` and `[]`, and not a Mapping."""

    def __init__(self, data: dict[str, Any]) -> None:
        for key, value in data.items():
            setattr(self, key, wrap(value))

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


def wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return LiteLLMObject(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def model_response(calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    tool_calls = [
        {"function": {"arguments": args, "name": name}, "id": cid, "type": "function"}
        for cid, name, args in calls
    ]
    message = {"content": None, "role": "assistant", "tool_calls": tool_calls}
    message |= {"function_call": None, "provider_specific_fields": None}
    return {
        "id": "chatcmpl-7f3c",
        "created": 1_760_000_000,
        "model": "claude-sonnet-4-20250514",
        "object": "chat.completion",
        "system_fingerprint": None,
        "choices": [{"finish_reason": "tool_calls", "index": 0, "message": message}],
        "usage": {"completion_tokens": 20, "prompt_tokens": 50, "total_tokens": 70},
    }


def stream_chunk(tool_calls: list[dict[str, Any]] | None, reason: str | None) -> dict[str, Any]:
    delta: dict[str, Any] = {"provider_specific_fields": None, "refusal": None, "content": None}
    delta |= {"role": "assistant", "function_call": None, "tool_calls": tool_calls}
    return {
        "id": "chatcmpl-7f3c",
        "created": 1_760_000_000,
        "model": "claude-sonnet-4-20250514",
        "object": "chat.completion.chunk",
        "system_fingerprint": None,
        "choices": [{"finish_reason": reason, "index": 0, "delta": delta, "logprobs": None}],
        "provider_specific_fields": None,
        "citations": None,
    }


def model_response_stream(calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    out = []
    for index, (cid, name, args) in enumerate(calls):
        head = {"id": cid, "function": {"arguments": "", "name": name}}
        out.append(stream_chunk([{**head, "type": "function", "index": index}], None))
        for part in pieces(args, 16):
            tail = {"id": None, "function": {"arguments": part, "name": None}}
            out.append(stream_chunk([{**tail, "type": "function", "index": index}], None))
    out.append(stream_chunk(None, "tool_calls"))
    return out


CALLS = [("toolu_01", "create_plan", CREATE), ("toolu_02", "mcp__plans__create_plan", NOTE)]


@pytest.mark.parametrize("form", ["objects", "dicts"])
async def test_model_response_tool_calls(form: str) -> None:
    body = model_response([*CALLS, ("toolu_03", "bash", json.dumps({"command": "ls"}))])
    response = wrap(body) if form == "objects" else body
    session, send = new_session()
    choice = response["choices"][0]
    results = [await session.handle(call) for call in choice["message"]["tool_calls"]]
    assert [r and r["tool_call_id"] for r in results] == ["toolu_01", "toolu_02", None]
    assert list(session.plans) == ["plan-1", "notes"]
    assert_client_sees_session(send, session)


@pytest.mark.parametrize("form", ["objects", "dicts"])
async def test_model_response_stream_chunks(form: str) -> None:
    chunks = model_response_stream(CALLS)
    session, send = new_session()
    async with OpenAIChatStream(session) as plans:
        for chunk in chunks:
            await plans.on_event(wrap(chunk) if form == "objects" else chunk)
        results = await plans.finish()
    assert [r["tool_call_id"] for r in results] == ["toolu_01", "toolu_02"]
    assert all(r["content"].startswith("Created plan") for r in results)
    assert len(send.updates) > 2  # previews as the steps completed, then the finals
    assert_client_sees_session(send, session)
