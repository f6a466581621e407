"""Streams in any mix of the servers' quirks: every plan call gets exactly one result, under
the id the server sent, and the client ends where the session is."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_plans.providers import (
    AnthropicStream,
    OpenAIChatStream,
    OpenAIResponsesStream,
    StreamAdapter,
)
from llm_plans.testing import (
    anthropic_events,
    chat_chunk,
    chat_chunks,
    pieces,
    responses_events,
)
from providers.test_compat import assert_client_sees_session, new_session

quirks = st.fixed_dictionaries(
    {
        "ids": st.sampled_from(["first", "every", "empty", "none"]),
        "index": st.sampled_from(["normal", "none", "zero", "shifted"]),
        "whole": st.sampled_from(["no", "text", "dict"]),
        "names": st.sampled_from(["first", "every"]),
        "size": st.integers(1, 40),
    }
)


def plan(number: int) -> dict[str, Any]:
    steps = [{"content": f"Step {s} of call {number}"} for s in range(1, 4)]
    return {"type": "items", "id": f"p{number}", "entries": steps}


def provider_id(number: int, q: dict[str, Any]) -> str | None:
    return {"first": f"call_{number}", "every": f"call_{number}", "empty": ""}.get(q["ids"])


def deltas(number: int, q: dict[str, Any]) -> list[dict[str, Any]]:
    """One call's deltas, in the shape of the quirks drawn."""
    index = {"normal": number, "none": None, "zero": 0, "shifted": number}[q["index"]]
    args = plan(number) if q["whole"] == "dict" else json.dumps(plan(number))
    parts: list[Any] = [args] if q["whole"] != "no" else ["", *pieces(str(args), q["size"])]
    out = []
    for n, part in enumerate(parts):
        delta: dict[str, Any] = {"function": {"arguments": part}}
        if n == 0 or q["names"] == "every":
            delta["function"]["name"] = "create_plan"
        if q["ids"] != "none" and (n == 0 or q["ids"] != "first"):
            delta["id"] = provider_id(number, q)
        if index is not None:
            delta["index"] = index + (10 if n and q["index"] == "shifted" else 0)
        out.append(delta)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    calls=st.lists(quirks, min_size=1, max_size=3),
    reason=st.sampled_from([None, ""]),
    last=st.sampled_from(["tool_calls", None]),
)
async def test_any_mix_of_quirks(
    calls: list[dict[str, Any]], reason: str | None, last: str | None
) -> None:
    session, send = new_session()
    async with OpenAIChatStream(session) as stream:
        for number, q in enumerate(calls):
            for delta in deltas(number, q):
                await stream.on_event(chat_chunk({"tool_calls": [delta]}, reason))
        if last is not None:
            await stream.on_event(chat_chunk({}, last))
        results = await stream.finish()
    assert [r["tool_call_id"] for r in results] == [provider_id(n, q) for n, q in enumerate(calls)]
    assert all(r["content"].startswith(f'Created plan "p{n}"') for n, r in enumerate(results))
    assert list(session.plans) == [f"p{n}" for n in range(len(calls))]
    assert_client_sees_session(send, session)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kept=st.lists(
        # An empty set: the arguments are only in `response.completed`'s output.
        st.sets(st.sampled_from(["delta", "arguments.done", "output_item.done"])),
        min_size=1,
        max_size=3,
    ),
    item_ids=st.booleans(),
)
async def test_responses_streams_with_any_of_the_events_that_carry_arguments(
    kept: list[set[str]], item_ids: bool
) -> None:
    calls = [(f"call_{n}", "create_plan", json.dumps(plan(n))) for n in range(len(kept))]
    events = []
    for event in responses_events(calls, size=16):
        kind = event["type"]
        carries = {
            "response.function_call_arguments.delta": "delta",
            "response.function_call_arguments.done": "arguments.done",
            "response.output_item.done": "output_item.done",
        }.get(kind)
        if carries is not None and carries not in kept[event["output_index"]]:
            continue
        if not item_ids:  # servers that leave item ids out: the output index tells items apart
            event.pop("item_id", None)
            event.get("item", {}).pop("id", None)
        events.append(event)
    session, send = new_session()
    async with OpenAIResponsesStream(session) as stream:
        for event in events:
            await stream.on_event(event)
        results = await stream.finish()
    assert [r["call_id"] for r in results] == [c[0] for c in calls]
    assert all(r["output"].startswith(f'Created plan "p{n}"') for n, r in enumerate(results))
    assert_client_sees_session(send, session)


STREAMS: dict[str, tuple[type[StreamAdapter], Callable[..., list[dict[str, Any]]]]] = {
    "chat": (OpenAIChatStream, chat_chunks),
    "responses": (OpenAIResponsesStream, responses_events),
    "anthropic": (AnthropicStream, anthropic_events),
}
# What a broken server or gateway might put where an index, an id, a list or a text belongs.
WRONG = st.sampled_from([[], [0], {}, {"index": 0}, 1.5, True, -1, "x", ""])


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in an event a value stands: its keys and list positions, at any depth."""
    if not isinstance(value, (dict, list)):
        return []
    found: list[tuple[Any, ...]] = []
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        found += [(*at, key), *_paths(item, (*at, key))]
    return found


def _replaced(event: Any, path: tuple[Any, ...], wrong: Any) -> Any:
    out = json.loads(json.dumps(event))
    holder = out
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = wrong
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(api=st.sampled_from(sorted(STREAMS)), data=st.data())
async def test_a_field_of_the_wrong_type_is_taken_as_if_missing(api: str, data: Any) -> None:
    # A gateway's broken event must not crash the agent's loop, nor leave the client
    # seeing anything the session does not hold.
    adapter, stream_of = STREAMS[api]
    calls = [("call_0", "create_plan", json.dumps(plan(0))), ("call_1", "read", '{"path": "a"}')]
    events = stream_of(calls, size=12)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(events) - 1))
        paths = _paths(events[at])
        if paths:
            path = data.draw(st.sampled_from(paths))
            events[at] = _replaced(events[at], path, data.draw(WRONG))
    session, send = new_session()
    async with adapter(session) as stream:
        for event in events:
            await stream.on_event(event)
        await stream.finish()
    assert_client_sees_session(send, session)
    assert all("path" not in json.dumps(update) for update in send.updates)
