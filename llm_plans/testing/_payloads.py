"""Model API payloads in each API's real wire format, streamed and whole, built from calls."""

from __future__ import annotations

from typing import Any

Call = tuple[str, str, Any]
"""(id, tool name, arguments): JSON text, or a dict for Anthropic's decoded `input`."""


def pieces(text: str, size: int) -> list[str]:
    """`text` in fragments of `size` characters, as a model streams arguments.

    Args:
        text: The text to cut.
        size: The characters per fragment (the last may be shorter); at least 1.
    """
    return [text[i : i + size] for i in range(0, len(text), size)]


# ---- OpenAI Chat Completions ----------------------------------------------------------------


def chat_completion(calls: list[Call], finish: str = "tool_calls") -> dict[str, Any]:
    """A non-streamed chat completion whose message makes `calls`.

    Args:
        calls: The tool calls, each `(id, tool name, arguments)` with the arguments as JSON
            text.
        finish: The choice's `finish_reason` (`"length"` for a response cut by the token
            limit).
    """
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
    """One `chat.completion.chunk` with one choice's delta.

    Args:
        delta: The choice's `delta`, as the API sends it.
        reason: The choice's `finish_reason`; None for every chunk but a choice's last.
        choice: The choice's index.
    """
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
    """The chunks OpenAI streams for `calls`: id and name first, then argument fragments.

    Args:
        calls: The tool calls, each `(id, tool name, arguments)` with the arguments as JSON
            text.
        size: The characters of arguments per delta event, as a model streams them.
        finish: The `finish_reason` of the last chunk (`"length"` for a response cut by
            the token limit).
        choice: The index of the choice every chunk belongs to, for `n > 1` streams.
    """
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
    """A non-streamed Responses response whose output makes `calls`.

    Args:
        calls: The tool calls, each `(id, tool name, arguments)` with the arguments as JSON
            text.
    """
    return _response([_function_call(i, c, c[2], "completed") for i, c in enumerate(calls)])


def responses_events(
    calls: list[Call], *, size: int = 8, cut_at: int | None = None
) -> list[dict[str, Any]]:
    """The events OpenAI streams for `calls`.

    Args:
        calls: The tool calls, each `(id, tool name, arguments)` with the arguments as JSON
            text.
        size: The characters of arguments per delta event, as a model streams them.
        cut_at: Stop the first call's arguments after this many characters and end the
            response as incomplete (`max_output_tokens`). None: every call whole.
    """
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
    """A non-streamed Messages response: a text block, then a `tool_use` block per call.

    Args:
        calls: The tool calls, each `(id, tool name, input)` with the input a dict, as
            Anthropic sends it decoded.
        stop: The response's `stop_reason` (`"max_tokens"` for one cut by the token limit).
    """
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
    """The events Anthropic streams for `calls`.

    Args:
        calls: The tool calls, each `(id, tool name, arguments)` with the arguments as JSON
            text.
        size: The characters of arguments per delta event, as a model streams them.
        stop: The `stop_reason` of the `message_delta` event (`"max_tokens"` for a
            response cut by the token limit).
        cut_at: Cut every call's arguments after this many characters, as a response
            stopped at `max_tokens` leaves the last. None: every call whole.
    """
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
