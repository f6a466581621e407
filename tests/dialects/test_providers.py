"""Another dialect's calls through the provider stream adapters, from each API's real wire
format: previews while the call streams, and the same plans and result as a plain call."""

from __future__ import annotations

import json
from typing import Any

import pytest
from wire_payloads import (
    Recorder,
    anthropic_client,
    chat_stream,
    message_stream,
    openai_client,
    responses_stream,
)

from llm_plans import PlanSession
from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream
from llm_plans.testing import RecordingSend

TODOS = json.dumps(
    {
        "todos": [
            {"content": f"Step {n}", "status": "pending", "activeForm": f"Doing step {n}"}
            for n in range(6)
        ]
    }
)
CAPS: dict[str, Any] = {"plan": {}}


async def _anthropic(session: PlanSession) -> list[dict[str, Any]]:
    client = anthropic_client(Recorder(message_stream([("toolu_1", "TodoWrite", TODOS)], size=5)))
    adapter = AnthropicStream(session)
    async for event in await client.messages.create(
        model="m", max_tokens=99, messages=[], stream=True
    ):
        await adapter.on_event(event)
    return adapter.results


async def _chat(session: PlanSession) -> list[dict[str, Any]]:
    client = openai_client(Recorder(chat_stream([("call_1", "TodoWrite", TODOS)], size=5)))
    adapter = OpenAIChatStream(session)
    async for chunk in await client.chat.completions.create(model="m", messages=[], stream=True):
        await adapter.on_event(chunk)
    return adapter.results


async def _responses(session: PlanSession) -> list[dict[str, Any]]:
    client = openai_client(Recorder(responses_stream([("call_1", "TodoWrite", TODOS)], size=5)))
    adapter = OpenAIResponsesStream(session)
    async for event in await client.responses.create(model="m", input="x", stream=True):
        await adapter.on_event(event)
    return adapter.results


@pytest.mark.parametrize("run", [_anthropic, _chat, _responses], ids=lambda f: f.__name__[1:])
async def test_a_streamed_todo_write_previews_and_ends_as_a_plain_call(run: Any) -> None:
    send = RecordingSend()
    session = PlanSession(
        send, session_id="s", client_capabilities=CAPS, dialects="claude_todos", stream_interval=0
    )
    [result] = await run(session)
    plain = PlanSession(RecordingSend(), session_id="s", dialects="claude_todos")
    expected = await plain.call("TodoWrite", TODOS)
    assert expected.content in result.values()
    assert session.snapshot() == plain.snapshot()
    counts = [len(u["plan"]["entries"]) for u in send.updates]
    assert counts[0] < 6  # shown while it streamed
    assert counts[-1] == 6
