"""A fake model API for `httpx2.MockTransport`, and the real SDK clients put on it.

httpx2 and the SDKs are imported where used, so that importing `llm_plans.testing` needs
neither.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anthropic
    import httpx2
    import openai

Body = dict[str, Any] | bytes


def sse(events: list[dict[str, Any]], *, named: bool | None = None) -> bytes:
    """A Server-Sent Events body. Events with a `type` (Responses, Anthropic) get `event:`
    lines; chat chunks are data only and end with `data: [DONE]`.

    Args:
        events: The events, each sent as one `data:` line of JSON.
        named: Whether to send `event:` lines (and no `[DONE]`). None: decided by whether
            the first event has a `type`.
    """
    named = bool(events) and "type" in events[0] if named is None else named
    out = [
        (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events
    ]
    if not named:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


@dataclass(frozen=True)
class Broken:
    """A streamed body whose connection drops after `after` events, raising `error`.

    Args:
        body: The SSE stream, as the server would send it whole.
        after: How many events get through before the connection drops.
        error: What the client's read raises then; None: `httpx2.RemoteProtocolError`, as a
            server closing mid-stream gives.
    """

    body: bytes
    """The SSE stream, as the server would send it whole."""
    after: int
    """How many events get through before the connection drops."""
    error: BaseException | None = None
    """Defaults to `httpx2.RemoteProtocolError`, as a server closing mid-stream gives."""


class FakeModelAPI:
    """A handler for `httpx2.MockTransport` serving canned bodies in order.

    A dict is served as JSON, bytes as an SSE stream, a `Broken` as a stream that fails
    part way. Every request's JSON body is kept in `requests` (`{}` for a request without one).

    Args:
        *bodies: What to answer each request with, in order; one per request expected.
    """

    def __init__(self, *bodies: Body | Broken) -> None:
        self.bodies = list(bodies)
        """The bodies still to serve, in order."""
        self.requests: list[dict[str, Any]] = []
        """The JSON body of every request served, in order."""

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        """Record the request's JSON body and answer with the next canned body.

        Args:
            request: The request the SDK's client sent through the mock transport.
        """
        import httpx2

        self.requests.append(json.loads(request.content) if request.content else {})
        body = self.bodies.pop(0)
        stream = {"content-type": "text/event-stream"}
        if isinstance(body, Broken):
            return httpx2.Response(200, content=_broken(body), headers=stream)
        if isinstance(body, bytes):
            return httpx2.Response(200, content=body, headers=stream)
        return httpx2.Response(200, json=body)


async def _broken(body: Broken) -> AsyncIterator[bytes]:
    import httpx2

    for event in body.body.split(b"\n\n")[: body.after]:
        yield event + b"\n\n"
    raise body.error or httpx2.RemoteProtocolError("peer closed connection mid-stream")


def openai_client(handler: Callable[[httpx2.Request], httpx2.Response]) -> openai.AsyncOpenAI:
    """An `openai.AsyncOpenAI` whose HTTP requests all go to `handler`.

    Args:
        handler: Answers each request (a `FakeModelAPI`, or any function from an
            `httpx2.Request` to an `httpx2.Response`).
    """
    import httpx2
    import openai

    transport = httpx2.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="test-key", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


def anthropic_client(
    handler: Callable[[httpx2.Request], httpx2.Response],
) -> anthropic.AsyncAnthropic:
    """An `anthropic.AsyncAnthropic` whose HTTP requests all go to `handler`.

    Args:
        handler: Answers each request (a `FakeModelAPI`, or any function from an
            `httpx2.Request` to an `httpx2.Response`).
    """
    import anthropic
    import httpx2

    transport = httpx2.MockTransport(handler)
    return anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


async def sdk_stream(api: str, events: list[dict[str, Any]]) -> list[Any]:
    """The objects the real SDK client yields for a stream of these wire events. Each is
    built by the SDK from the SSE body on a fake transport, exactly as a live stream's would
    be (the SDKs do not validate stream events, so extras and missing fields come through).

    Args:
        api: Which SDK and API: `"chat"` (OpenAI Chat Completions chunks), `"responses"`
            (OpenAI Responses) or `"anthropic"` (Anthropic Messages); ValueError otherwise.
        events: The wire events, as the payload builders here make them.
    """
    fake = FakeModelAPI(sse(events))
    stream: Any
    if api == "chat":
        completions = openai_client(fake).chat.completions
        stream = await completions.create(model="m", messages=[], stream=True)
    elif api == "responses":
        stream = await openai_client(fake).responses.create(model="m", input="", stream=True)
    elif api == "anthropic":
        messages = anthropic_client(fake).messages
        stream = await messages.create(model="m", max_tokens=1, messages=[], stream=True)
    else:
        raise ValueError(f"api must be chat, responses or anthropic; got {api!r}")
    return [event async for event in stream]
