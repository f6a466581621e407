"""Helpers for testing code that uses llm_plans, with no model and no network.

- `RecordingSend`: a `send` that records every notification; `client_view` replays them
  into the plans a client shows.
- Model API payloads in each API's real wire format (`chat_completion`, `chat_chunks`,
  `responses_response`, `responses_events`, `anthropic_message`, `anthropic_events`), to
  edit into the shape of any server you target.
- `FakeModelAPI`: a handler for `httpx2.MockTransport` (as httpx's `MockTransport`) serving
  those payloads in order, JSON or as Server-Sent Events; `openai_client` and
  `anthropic_client` put the real SDK clients on it, and `sdk_stream` gives the objects a
  client yields for a stream of wire events.

Example:
    api = FakeModelAPI(sse(chat_chunks([("call_1", "create_plan", arguments)])))
    client = openai_client(api)
    async for chunk in await client.chat.completions.create(..., stream=True): ...
    assert api.requests[0]["stream"] is True

Only `RecordingSend`, `client_view` and the payload builders are free of optional packages:
`FakeModelAPI` needs `httpx2` (the `testing` extra; the `openai` and `anthropic` extras bring
it too), and each client its SDK.
"""

from ._client import RecordingSend, client_view
from ._fake_api import Broken, FakeModelAPI, anthropic_client, openai_client, sdk_stream, sse
from ._payloads import (
    anthropic_events,
    anthropic_message,
    chat_chunk,
    chat_chunks,
    chat_completion,
    pieces,
    responses_events,
    responses_response,
)

__all__ = [
    "Broken",
    "FakeModelAPI",
    "RecordingSend",
    "anthropic_client",
    "anthropic_events",
    "anthropic_message",
    "chat_chunk",
    "chat_chunks",
    "chat_completion",
    "client_view",
    "openai_client",
    "pieces",
    "responses_events",
    "responses_response",
    "sdk_stream",
    "sse",
]
