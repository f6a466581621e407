"""Model API payloads in each API's real wire format, and SDK clients on a mock transport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai

Handler = Callable[[httpx2.Request], httpx2.Response]


def sse(events: list[dict[str, Any]], *, named: bool, done: bool = False) -> bytes:
    """A Server-Sent Events body: `event:` lines for Responses/Anthropic, `[DONE]` for chat."""
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def respond(body: dict[str, Any] | bytes) -> httpx2.Response:
    if isinstance(body, bytes):
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})
    return httpx2.Response(200, json=body)


class Recorder:
    """A mock transport handler serving canned bodies in order and keeping every request."""

    def __init__(self, *bodies: dict[str, Any] | bytes) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        return respond(self.bodies.pop(0))


def openai_client(handler: Handler) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def anthropic_client(handler: Handler) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# ---- OpenAI Chat Completions --------------------------------------------------------------


def chat_completion(
    calls: list[tuple[str, str, str]], finish: str = "tool_calls"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": "gpt-4.1",
        "system_fingerprint": "fp_1",
        "choices": [
            {
                "index": 0,
                "logprobs": None,
                "finish_reason": finish,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {"name": name, "arguments": args},
                        }
                        for cid, name, args in calls
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
    }


def chat_stream(
    calls: list[tuple[str, str, str]], size: int = 8, finish: str = "tool_calls"
) -> bytes:
    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1_760_000_000,
            "model": "gpt-4.1",
            "system_fingerprint": "fp_1",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}],
        }

    events = [chunk({"role": "assistant", "content": None})]
    for index, (cid, name, args) in enumerate(calls):
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": cid,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            for part in chunks(args, size)
        ]
    events.append(chunk({}, finish))
    return sse(events, named=False, done=True)


# ---- OpenAI Responses ---------------------------------------------------------------------


def _response(
    output: list[dict[str, Any]],
    status: str = "completed",
    incomplete: dict[str, Any] | None = None,
) -> dict[str, Any]:
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
        "incomplete_details": incomplete,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": 50,
            "output_tokens": 20,
            "total_tokens": 70,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _function_call(index: int, cid: str, name: str, args: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{index}",
        "call_id": cid,
        "name": name,
        "arguments": args,
        "status": status,
    }


def responses_response(calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    return _response([_function_call(i, *c, "completed") for i, c in enumerate(calls)])


def responses_stream(
    calls: list[tuple[str, str, str]], size: int = 8, cut_at: int | None = None
) -> bytes:
    seq = iter(range(10_000))
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": _response([], "in_progress"),
        }
    ]
    for index, (cid, name, args) in enumerate(calls):
        sent = args if cut_at is None else args[:cut_at]
        events.append(
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": index,
                "item": _function_call(index, cid, name, "", "in_progress"),
            }
        )
        events += [
            {
                "type": "response.function_call_arguments.delta",
                "sequence_number": next(seq),
                "item_id": f"fc_{index}",
                "output_index": index,
                "delta": part,
            }
            for part in chunks(sent, size)
        ]
        if cut_at is not None:
            break
        events.append(
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": next(seq),
                "item_id": f"fc_{index}",
                "name": name,
                "output_index": index,
                "arguments": args,
            }
        )
        events.append(
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": index,
                "item": _function_call(index, cid, name, args, "completed"),
            }
        )
    if cut_at is None:
        events.append(
            {
                "type": "response.completed",
                "sequence_number": next(seq),
                "response": responses_response(calls),
            }
        )
    else:
        events.append(
            {
                "type": "response.incomplete",
                "sequence_number": next(seq),
                "response": _response([], "incomplete", {"reason": "max_output_tokens"}),
            }
        )
    return sse(events, named=True)


# ---- Anthropic Messages -------------------------------------------------------------------


def message(calls: list[tuple[str, str, dict[str, Any]]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5",
        "content": [{"type": "text", "text": "Here is my plan."}]
        + [
            {"type": "tool_use", "id": cid, "name": name, "input": args}
            for cid, name, args in calls
        ],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 20},
    }


def message_stream(
    calls: list[tuple[str, str, str]],
    size: int = 8,
    stop: str = "tool_use",
    cut_at: int | None = None,
) -> bytes:
    start = message([])
    start.update(content=[], stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, (cid, name, args) in enumerate(calls):
        sent = args if cut_at is None else args[:cut_at]
        events.append(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": cid, "name": name, "input": {}},
            }
        )
        events += [
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
            for part in chunks(sent, size)
        ]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
    )
    events.append({"type": "message_stop"})
    return sse(events, named=True)
