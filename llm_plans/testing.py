"""Helpers for testing code that uses llm_plans, with no model and no network.

- `RecordingSend`: a `send` that records every notification; `client_view` replays them
  into the plans a client shows.
- Model API payloads in each API's real wire format (`chat_completion`, `chat_chunks`,
  `responses_response`, `responses_events`, `anthropic_message`, `anthropic_events`), to
  edit into the shape of any server you target.
- `FakeModelAPI`: a handler for `httpx2.MockTransport` (as httpx's `MockTransport`) serving
  those payloads in order, JSON or as Server-Sent Events; `openai_client` and
  `anthropic_client` put the real SDK clients on it.

Example:
    api = FakeModelAPI(sse(chat_chunks([("call_1", "create_plan", arguments)])))
    client = openai_client(api)
    async for chunk in await client.chat.completions.create(..., stream=True): ...
    assert api.requests[0]["stream"] is True

Only `RecordingSend` is free of optional packages: the clients need `httpx2` and the SDK.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anthropic
    import httpx2
    import openai

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
    "sse",
]

Call = tuple[str, str, Any]
"""(id, tool name, arguments): JSON text, or a dict for Anthropic's decoded `input`."""
Body = dict[str, Any] | bytes


class RecordingSend:
    """A `send` for `PlanSession` that keeps every notification, as JSON round-tripped data.

    Set `fail_with` to an exception to make the next sends raise it, as a broken pipe would.

    Example:
        send = RecordingSend()
        session = PlanSession(send, session_id="s1")
        await session.call("create_plan", {...})
        assert send.updates[-1]["sessionUpdate"] == "plan"
    """

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.fail_with: BaseException | None = None

    async def __call__(self, params: dict[str, Any]) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        # Round-tripping proves the params are plain JSON and decouples them from the caller.
        self.sent.append(json.loads(json.dumps(params)))

    @property
    def updates(self) -> list[dict[str, Any]]:
        """The `update` objects, in order."""
        return [params["update"] for params in self.sent]

    def clear(self) -> None:
        self.sent.clear()


# ---- serving --------------------------------------------------------------------------------


def sse(events: list[dict[str, Any]], *, named: bool | None = None) -> bytes:
    """A Server-Sent Events body. Events with a `type` (Responses, Anthropic) get `event:`
    lines; chat chunks are data only and end with `data: [DONE]`. `named` overrides."""
    named = bool(events) and "type" in events[0] if named is None else named
    out = [
        (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events
    ]
    if not named:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


@dataclass(frozen=True)
class Broken:
    """A streamed body whose connection drops after `after` events, raising `error`."""

    body: bytes
    after: int
    error: BaseException | None = None
    """Defaults to `httpx2.RemoteProtocolError`, as a server closing mid-stream gives."""


class FakeModelAPI:
    """A handler for `httpx2.MockTransport` serving canned bodies in order.

    A dict is served as JSON, bytes as an SSE stream, a `Broken` as a stream that fails
    part way. Every request's JSON body is kept in `requests` (`{}` for a request without one).
    """

    def __init__(self, *bodies: Body | Broken) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
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
    """An `openai.AsyncOpenAI` whose HTTP requests all go to `handler`."""
    import httpx2
    import openai

    transport = httpx2.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="test-key", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


def anthropic_client(
    handler: Callable[[httpx2.Request], httpx2.Response],
) -> anthropic.AsyncAnthropic:
    """An `anthropic.AsyncAnthropic` whose HTTP requests all go to `handler`."""
    import anthropic
    import httpx2

    transport = httpx2.MockTransport(handler)
    return anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


def pieces(text: str, size: int) -> list[str]:
    """`text` in fragments of `size` characters, as a model streams arguments."""
    return [text[i : i + size] for i in range(0, len(text), size)]


# ---- OpenAI Chat Completions ----------------------------------------------------------------


def chat_completion(calls: list[Call], finish: str = "tool_calls") -> dict[str, Any]:
    """A non-streamed chat completion whose message makes `calls`."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    message["tool_calls"] = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        for cid, name, args in calls
    ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": "gpt-4.1",
        "system_fingerprint": "fp_1",
        "choices": [{"index": 0, "logprobs": None, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
    }


def chat_chunk(delta: dict[str, Any], reason: str | None = None, choice: int = 0) -> dict[str, Any]:
    """One `chat.completion.chunk` with one choice's delta."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_760_000_000,
        "model": "gpt-4.1",
        "system_fingerprint": "fp_1",
        "choices": [{"index": choice, "delta": delta, "logprobs": None, "finish_reason": reason}],
    }


def chat_chunks(
    calls: list[Call], *, size: int = 8, finish: str = "tool_calls", choice: int = 0
) -> list[dict[str, Any]]:
    """The chunks OpenAI streams for `calls`: id and name first, then argument fragments."""
    out = [chat_chunk({"role": "assistant", "content": None}, choice=choice)]
    for index, (cid, name, args) in enumerate(calls):
        head = {"index": index, "id": cid, "type": "function"}
        out.append(
            chat_chunk(
                {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]},
                choice=choice,
            )
        )
        out += [
            chat_chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": p}}]}, None, choice
            )
            for p in pieces(args, size)
        ]
    out.append(chat_chunk({}, finish, choice))
    return out


# ---- OpenAI Responses -----------------------------------------------------------------------


def _response(output: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": 50, "output_tokens": 20, "total_tokens": 70}
    usage["input_tokens_details"] = {"cached_tokens": 0, "cache_write_tokens": 0}
    usage["output_tokens_details"] = {"reasoning_tokens": 0}
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1_760_000_000,
        "status": status,
        "model": "gpt-4.1",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": usage,
    }


def _function_call(index: int, call: Call, arguments: str, status: str) -> dict[str, Any]:
    cid, name, _ = call
    kind = {"type": "function_call", "id": f"fc_{index}", "call_id": cid, "name": name}
    return {**kind, "arguments": arguments, "status": status}


def responses_response(calls: list[Call]) -> dict[str, Any]:
    """A non-streamed Responses response whose output makes `calls`."""
    return _response([_function_call(i, c, c[2], "completed") for i, c in enumerate(calls)])


def responses_events(
    calls: list[Call], *, size: int = 8, cut_at: int | None = None
) -> list[dict[str, Any]]:
    """The events OpenAI streams for `calls`; `cut_at` stops the first call's arguments
    there and ends the response as incomplete (`max_output_tokens`)."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _response([], "in_progress")}
    ]
    for index, call in enumerate(calls):
        where = {"item_id": f"fc_{index}", "output_index": index}
        args = call[2] if cut_at is None else call[2][:cut_at]
        item = _function_call(index, call, "", "in_progress")
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events += [
            {"type": "response.function_call_arguments.delta", **where, "delta": part}
            for part in pieces(args, size)
        ]
        if cut_at is not None:
            events.append({"type": "response.incomplete", "response": _response([], "incomplete")})
            break
        events.append({"type": "response.function_call_arguments.done", **where, "arguments": args})
        item = _function_call(index, call, args, "completed")
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    else:
        events.append({"type": "response.completed", "response": responses_response(calls)})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


# ---- Anthropic Messages ---------------------------------------------------------------------


def anthropic_message(calls: list[Call], stop: str = "tool_use") -> dict[str, Any]:
    """A non-streamed Messages response: a text block, then a `tool_use` block per call."""
    uses = [
        {"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls
    ]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5",
        "content": [{"type": "text", "text": "Here is my plan."}, *uses],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 20},
    }


def anthropic_events(
    calls: list[Call], *, size: int = 8, stop: str = "tool_use", cut_at: int | None = None
) -> list[dict[str, Any]]:
    """The events Anthropic streams for `calls` (arguments as JSON text); `cut_at` cuts
    every call's arguments there, as a response stopped at `max_tokens` leaves the last."""
    start = anthropic_message([])
    start.update(content=[], stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, (cid, name, args) in enumerate(calls):
        block = {"type": "tool_use", "id": cid, "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events += [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            for part in pieces(args if cut_at is None else args[:cut_at], size)
        ]
        events.append({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 20}})
    events.append({"type": "message_stop"})
    return events


def client_view(updates: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The plans a client shows after `updates` (`plan_update` / `plan_removed`), by id.

    Each plan is as last sent, its id under `id` whichever key the wire form used; compare
    it with `session.plans` to prove the client ends where the session is.
    """
    view: dict[str, dict[str, Any]] = {}
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind == "plan_update":
            plan = dict(update["plan"])
            plan_id = plan.pop("planId", None) or plan.pop("id")
            view[plan_id] = {"id": plan_id, **plan}
        elif kind == "plan_removed":
            view.pop(update.get("planId") or update["id"], None)
    return view
