"""Streaming benchmarks: a create_plan's arguments fed fragment by fragment.

Back to back, the fragments arrive as fast as the session takes them: the CPU cost of
streaming against one non-streamed call. At a live rate (50 tokens/s, about what models
write), the fragments arrive on a virtual clock: the loop's `time()` is advanced by each
fragment's arrival interval, then the loop turns so that due timers fire, which replays a
minute of model output in milliseconds while the session sees real intervals. From that:
how many notifications a client gets, how many bytes, and how long after a step's closing
brace arrives the client sees that step.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from timing import Ratio, VirtualClockLoop, compare
from workload import CAPS, DumpingSend, compact, entries

from llm_plans import PlanSession

STREAM_SIZES = (20, 80, 200)
FRAGMENT = 4  # bytes per fragment: about one token, as the model APIs stream them
RATE = 200.0  # bytes per second: 50 tokens/s at about 4 bytes a token
PLAN_ID = "p"
CALL_ID = "c"
REMOVE = '{"id":"p"}'


def create_text(n: int) -> tuple[str, list[int]]:
    """Strict-form create_plan arguments, and the offset of each entry's closing brace."""
    text = '{"type":"items","id":"p","entries":['
    braces = []
    for k, entry in enumerate(entries(n)):
        text += ("," if k else "") + compact(entry)
        braces.append(len(text) - 1)
    return text + '],"content":null,"uri":null}', braces


FINISHING = 0  # `Observer.fragment` while the stream is finished and its plan removed


class Observer:
    """A send that notes each plan notification: when, at which fragment, entries, bytes;
    and, while `keeping`, each preview's params (for the floor to serialise the same)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.fragment = 0
        self.seen: list[tuple[float, int, int, int]] = []  # time, fragment, entries, bytes
        self.keeping = False
        self.previews: dict[int, list[dict[str, Any]]] = {}  # fragment -> params sent there

    async def __call__(self, params: dict[str, Any]) -> None:
        size = len(json.dumps(params))
        update = params["update"]
        if update["sessionUpdate"] == "plan_update":
            count = len(update["plan"]["entries"])
            self.seen.append((self.loop.time(), self.fragment, count, size))
        if self.keeping and self.fragment != FINISHING:
            self.previews.setdefault(self.fragment, []).append(params)


async def _keep(kept: list[str], fragment: str) -> bool:
    """The least a session's `feed` can do, awaited once per fragment as `feed` is: keep the
    fragment and look for a character that may end a step."""
    kept.append(fragment)
    return "}" in fragment or "]" in fragment


class Removal:
    """Removes the plan a streamed or plain create made, so that the next can make it again:
    scaffolding, not the call. Each removal's CPU time is noted, and a side returns it
    (`taken`) for `compare` to take out, so that every ratio is against the create alone."""

    def __init__(self) -> None:
        self._spent = 0.0

    async def __call__(self, session: PlanSession) -> None:
        start = time.thread_time()
        await session.call("remove_plan", REMOVE)
        self._spent += time.thread_time() - start

    def taken(self) -> float:
        """The CPU seconds removals took since the last time this was asked."""
        spent, self._spent = self._spent, 0.0
        return spent


def unstreamed_side(
    loop: asyncio.AbstractEventLoop, plain: PlanSession, text: str, removal: Removal
) -> Callable[[int], float]:
    """The baseline every streaming ratio divides by: the same create_plan, not streamed, as
    a `compare` side (its removals returned, to be taken out)."""

    def unstreamed(number: int) -> float:
        async def batch() -> None:
            for _ in range(number):
                await plain.call("create_plan", text)
                await removal(plain)

        loop.run_until_complete(batch())
        return removal.taken()

    return unstreamed


def split(text: str) -> list[str]:
    return [text[i : i + FRAGMENT] for i in range(0, len(text), FRAGMENT)]


def back_to_back(n: int, rounds: int) -> list[object]:
    text, _ = create_text(n)
    fragments = split(text)
    # The clock stands still: the whole stream arrives within one `stream_interval`, as it
    # does in real time (a few ms), also when the machine stalls a stream for longer, so
    # the exact cells (where the first step goes out, notifications, bytes) are the same
    # in every run.
    loop = VirtualClockLoop()
    observer = Observer(loop)
    session = PlanSession(observer, session_id="s", client_capabilities=CAPS)
    plain = PlanSession(DumpingSend(), session_id="s", client_capabilities=CAPS)
    removal = Removal()

    async def streamed_once() -> None:
        for position, fragment in enumerate(fragments, 1):
            observer.fragment = position
            await session.feed("c", "create_plan", fragment)
        assert (await session.finish("c")).ok
        await removal(session)

    def streamed(number: int) -> float:
        for _ in range(number):
            loop.run_until_complete(streamed_once())
        return removal.taken()

    unstreamed = unstreamed_side(loop, plain, text, removal)

    try:
        streamed(1)
        observed = list(observer.seen)
        t = compare([streamed, unstreamed], rounds)
    finally:
        loop.close()
    total = sum(size for *_, size in observed)
    return [
        n,
        len(fragments),
        f"{observed[0][1]} of {len(fragments)}",
        t.ratio(0, 1).cell(),
        len(observed),
        f"{total / observed[-1][3]:.1f}x",
    ]


def live(n: int, rounds: int) -> list[object]:
    text, braces = create_text(n)
    fragments = split(text)
    interval = FRAGMENT / RATE
    loop = VirtualClockLoop()
    observer = Observer(loop)
    session = PlanSession(observer, session_id="s", client_capabilities=CAPS)
    plain = PlanSession(DumpingSend(), session_id="s", client_capabilities=CAPS)
    removal = Removal()

    async def drive(feed: bool, least: bool = False) -> None:
        # An agent's loop turns once per fragment it reads from the network: so does this
        # driver, and `idle` (the driver without a session) is subtracted from the CPU.
        kept: list[str] = []
        for position, fragment in enumerate(fragments, 1):
            due = loop.advance(interval)
            observer.fragment = position
            if feed:
                await session.feed(CALL_ID, "create_plan", fragment)
            elif least:  # the floor: what any session must do per fragment and preview
                await _keep(kept, fragment)
                for params in observer.previews.get(position, ()):
                    json.dumps(params)
            await asyncio.sleep(0)
            if due:  # run the timers now due, and wait for the work they started
                await asyncio.sleep(0)
                await asyncio.gather(*asyncio.all_tasks() - {asyncio.current_task()})
        observer.fragment = FINISHING
        if feed:
            assert (await session.finish("c")).ok
            await removal(session)
        elif least:
            await plain.call("create_plan", text)
            await removal(plain)

    def side(**options: Any) -> Callable[[int], float]:
        """A `compare` side: the driver with these options, its removals returned."""

        def drives(number: int) -> float:
            for _ in range(number):
                loop.run_until_complete(drive(**options))
            return removal.taken()

        return drives

    streamed = side(feed=True)
    idle = side(feed=False)  # (removes nothing)
    floor = side(feed=False, least=True)
    unstreamed = unstreamed_side(loop, plain, text, removal)

    try:
        start = loop.now
        observer.keeping = True
        streamed(1)
        observer.keeping = False
        observed = list(observer.seen)
        t = compare([streamed, idle, unstreamed, floor], rounds)
    finally:
        loop.close()

    latencies = []
    for k, brace in enumerate(braces):
        arrived = start + (brace // FRAGMENT + 1) * interval
        shown = next(when for when, _, count, _ in observed if count > k)
        latencies.append(shown - arrived)
    samples = list(zip(*t.samples, strict=True))

    def against_unstreamed(k: int) -> Ratio:
        """Side k's CPU less the idle driver's (side 1), over the unstreamed create's (2)."""
        return Ratio(tuple((row[k] - row[1]) / row[2] for row in samples))

    cpu, floor_ratio = map(against_unstreamed, (0, 3))
    total = sum(size for *_, size in observed)
    return [
        n,
        f"{len(fragments) * interval:.0f}",
        cpu.cell(),
        floor_ratio.cell(),
        len(observed),
        f"{total / observed[-1][3]:.1f}x",
        f"{statistics.median(latencies) * 1e3:.0f} / {max(latencies) * 1e3:.0f}",
    ]


def stream_rows(rounds: int) -> tuple[list[list[object]], list[list[object]]]:
    """Table rows: back to back, and at the live rate, for each plan size."""
    return (
        [back_to_back(n, rounds) for n in STREAM_SIZES],
        [live(n, rounds) for n in STREAM_SIZES],
    )


# ---- the preview budget against latency ------------------------------------------------------

BUDGETS = (2, 4, 6, 8, 12, 16)
BUDGET_SIZES = (20, 200)


def replay(n: int, budget: float) -> tuple[list[float], int, float]:
    """One live stream on the virtual clock with this `preview_budget`: each step's latency
    from its closing brace to the send showing it, the previews, and their bytes against the
    final notification. The clock is virtual, so these figures are exact, not sampled."""
    text, braces = create_text(n)
    fragments = split(text)
    interval = FRAGMENT / RATE
    loop = VirtualClockLoop()
    observer = Observer(loop)
    session = PlanSession(observer, session_id="s", client_capabilities=CAPS, preview_budget=budget)

    async def drive() -> None:
        for position, fragment in enumerate(fragments, 1):
            due = loop.advance(interval)
            observer.fragment = position
            await session.feed("c", "create_plan", fragment)
            await asyncio.sleep(0)
            if due:
                await asyncio.sleep(0)
                await asyncio.gather(*asyncio.all_tasks() - {asyncio.current_task()})
        assert (await session.finish("c")).ok

    try:
        start = loop.now
        loop.run_until_complete(drive())
    finally:
        loop.close()
    seen = observer.seen
    latencies = []
    for k, brace in enumerate(braces):
        arrived = start + (brace // FRAGMENT + 1) * interval
        latencies.append(next(when for when, _, count, _ in seen if count > k) - arrived)
    previews = seen[:-1] if len(seen) > 1 and seen[-1][2] == n else seen
    final = seen[-1][3]
    return latencies, len(previews), sum(size for *_, size in previews) / final


def budget_rows() -> list[list[object]]:
    """Table rows: latency p50/p90 and preview count and bytes for each budget and size."""
    rows: list[list[object]] = []
    for n in BUDGET_SIZES:
        for budget in BUDGETS:
            latencies, previews, share = replay(n, budget)
            p50 = statistics.median(latencies)
            p90 = statistics.quantiles(latencies, n=10, method="inclusive")[-1]
            rows.append(
                [
                    n,
                    budget,
                    f"{max(p50, 0) * 1e3:.0f}",
                    f"{max(p90, 0) * 1e3:.0f}",
                    previews,
                    f"{share:.1f}x",
                ]
            )
    return rows


# ---- what a stream adapter adds per chunk ----------------------------------------------------


class _Session:
    """The session side of an adapter, doing nothing: what remains is the adapter's own work."""

    def plan_tool(self, name: str) -> str | None:
        return name if name == "create_plan" else None

    def feed_nowait(self, call_id: str, name: str, fragment: str | bytes) -> bool:
        return False

    async def flush(self) -> None:
        return None

    async def finish(self, call_id: str, *, truncated: bool = False, arguments: Any = None) -> Any:
        return _Result()

    async def abort(self, call_id: str) -> bool:
        return False


class _Result:
    ok = True
    content = "ok"


# The chunks below copy what the APIs send today, extra fields included: an adapter that is
# fast only on the minimal shape would be measured on a shape no server sends. Sources:
# ../shared/recorded (OpenAI chat: pydantic-ai's test_complex_agent_run; Responses:
# test_openai_responses_streaming_usage; Anthropic: anthropic-sdk-python's tool_use_response).


def _obfuscation(k: int) -> str:
    """OpenAI pads every streamed event with an `obfuscation` string of varying length."""
    return "aB3dE6gH9jK2mN5pQ8"[: 4 + k % 12]


def chat_chunks(n: int) -> list[dict[str, Any]]:
    """An OpenAI chat stream of one create_plan call, one chunk a token, as OpenAI sends it:
    a role chunk, the call's id and name, its argument text, the finish, the usage chunk."""
    text, _ = create_text(n)
    base = {
        "id": "chatcmpl-C2QD1kGWsTW5OWiqAtOSFEAOfPfQH",
        "object": "chat.completion.chunk",
        "created": 1754693439,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_07871e2ad8",
        "usage": None,
    }
    first = {
        "index": 0,
        "id": "call_q2UyBRP7eXNTzAoR8lEhjc9Z",
        "type": "function",
        "function": {"name": "create_plan", "arguments": ""},
    }
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "refusal": None},
        {"tool_calls": [first]},
    ]
    deltas += [
        {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}
        for fragment in split(text)
    ]
    chunks = [
        {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
            "obfuscation": _obfuscation(k),
        }
        for k, delta in enumerate(deltas)
    ]
    finish = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}
    chunks.append({**base, "choices": [finish], "obfuscation": "onPp"})
    usage = {"prompt_tokens": 364, "completion_tokens": len(deltas), "total_tokens": 999}
    chunks.append({**base, "choices": [], "usage": usage, "obfuscation": "F1wZCrV0lEsbu"})
    return chunks


def responses_events(n: int) -> list[dict[str, Any]]:
    """An OpenAI Responses stream of one create_plan function call, one delta a token, with
    the `sequence_number` and `obfuscation` every event carries."""
    text, _ = create_text(n)
    response: dict[str, Any] = {
        "id": "resp_0050471a34b36ae60068c97bac",
        "object": "response",
        "created_at": 1758034860,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": "gpt-5-2025-08-07",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None,
        "metadata": {},
    }
    item = {
        "id": "fc_0050471a34b36ae60068c97bf19d9c8195",
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_CWXgs68YprAjp6t0371hiPOI",
        "name": "create_plan",
    }
    where = {"item_id": item["id"], "output_index": 0}
    done = {**item, "status": "completed", "arguments": text}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    ]
    events += [
        {
            "type": "response.function_call_arguments.delta",
            **where,
            "delta": fragment,
            "obfuscation": _obfuscation(k),
        }
        for k, fragment in enumerate(split(text))
    ]
    events += [
        {"type": "response.function_call_arguments.done", **where, "arguments": text},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done]},
        },
    ]
    return [{**event, "sequence_number": k} for k, event in enumerate(events)]


def anthropic_events(n: int) -> list[dict[str, Any]]:
    """An Anthropic stream of one create_plan tool use, one `input_json_delta` a token, as
    Anthropic sends it (a ping, an empty first delta, the message's stop)."""
    text, _ = create_text(n)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_019Q1hrJbZG26Fb9BQhrkHEr",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 377,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                    "service_tier": "standard",
                },
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
                "name": "create_plan",
                "caller": {"type": "direct"},
                "input": {},
            },
        },
        {"type": "ping"},
    ]
    for fragment in ["", *split(text)]:
        events.append(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
        )
    events.append({"type": "content_block_stop", "index": 0})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": len(events)},
        }
    )
    events.append({"type": "message_stop"})
    return events


def _as_sdk_yields(api: str, events: list[dict[str, Any]]) -> list[Any]:
    """The events as the SDK's own stream yields them (built by the SDK, not validated)."""
    from llm_plans.testing import sdk_stream

    return asyncio.run(sdk_stream(api, events))


def adapter_rows(rounds: int) -> list[list[object]]:
    """Table rows: µs per chunk an adapter adds (everything `await plans.on_event(chunk)`
    costs, the adapter's start and finish spread over the chunks) over a loop that only
    iterates the chunks, as an agent's loop without an adapter would."""
    from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream

    # A 20-step plan's stream, replayed: an SDK yields each chunk right after building it, so
    # an adapter reads it from the cache. A 200-step stream's chunks, all built beforehand,
    # are 5,644 chunks of five SDK objects each, more than the cache holds: the adapter then
    # also paid for reading them back from memory (2.0 µs a chunk against 1.4 for the first
    # 575 of the same objects), which no live stream costs and the host's load moves.
    n = 20
    streams = [
        ("OpenAI chat", OpenAIChatStream, "chat", chat_chunks(n)),
        ("OpenAI Responses", OpenAIResponsesStream, "responses", responses_events(n)),
        ("Anthropic", AnthropicStream, "anthropic", anthropic_events(n)),
    ]
    cases = []
    for provider, adapter, api, events in streams:
        cases.append((provider, "dicts", adapter, events))
        cases.append((provider, "SDK objects", adapter, _as_sdk_yields(api, events)))
    rows: list[list[object]] = []
    loop = asyncio.new_event_loop()
    try:
        for provider, form, adapter, chunks in cases:

            def adapted(number: int, adapter: Any = adapter, chunks: Any = chunks) -> None:
                async def batch() -> None:
                    for _ in range(number):
                        plans = adapter(_Session())
                        for chunk in chunks:
                            await plans.on_event(chunk)
                        await plans.finish()

                loop.run_until_complete(batch())

            def baseline(number: int, chunks: Any = chunks) -> None:
                async def batch() -> None:
                    for _ in range(number):
                        for chunk in chunks:
                            _idle(chunk)

                loop.run_until_complete(batch())

            t = compare([adapted, baseline], rounds)
            per_chunk = [(a - b) / len(chunks) * 1e6 for a, b in zip(*t.samples, strict=True)]
            cell = Ratio(tuple(per_chunk)).cell().replace("x", " µs", 1)
            rows.append([provider, form, len(chunks), cell, "<= 2 µs"])
    finally:
        loop.close()
    return rows


def _idle(chunk: Any) -> None:
    """The baseline's loop body: takes the chunk and does nothing. Not a coroutine: the
    coroutine an agent awaits per chunk to use an adapter is part of what the adapter costs."""
