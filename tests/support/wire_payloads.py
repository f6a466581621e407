"""Test glue over `llm_plans.testing`: the payload builders as the tests call them (bytes)."""

from __future__ import annotations

from typing import Any

from llm_plans.testing import (
    FakeModelAPI,
    anthropic_client,
    anthropic_events,
    anthropic_message,
    chat_chunks,
    chat_completion,
    openai_client,
    pieces,
    responses_events,
    responses_response,
    sse,
)

Recorder = FakeModelAPI
message = anthropic_message
chunks = pieces

__all__ = [
    "Recorder",
    "anthropic_client",
    "chat_completion",
    "chat_stream",
    "chunks",
    "message",
    "message_stream",
    "openai_client",
    "responses_response",
    "responses_stream",
    "sse",
]


def chat_stream(calls: list[Any], size: int = 8, finish: str = "tool_calls") -> bytes:
    return sse(chat_chunks(calls, size=size, finish=finish))


def responses_stream(calls: list[Any], size: int = 8, cut_at: int | None = None) -> bytes:
    return sse(responses_events(calls, size=size, cut_at=cut_at))


def message_stream(
    calls: list[Any], size: int = 8, stop: str = "tool_use", cut_at: int | None = None
) -> bytes:
    return sse(anthropic_events(calls, size=size, stop=stop, cut_at=cut_at))
