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
from typing import Any

from timing import Ratio, VirtualClockLoop, compare
from workload import CAPS, DumpingSend, compact, entries

from llm_plans import PlanSession

STREAM_SIZES = (20, 80, 200)
FRAGMENT = 4  # bytes per fragment: about one token, as the model APIs stream them
RATE = 200.0  # bytes per second: 50 tokens/s at about 4 bytes a token
PLAN_ID = "p"
REMOVE = '{"id":"p"}'


def create_text(n: int) -> tuple[str, list[int]]:
    """Strict-form create_plan arguments, and the offset of each entry's closing brace."""
    text = '{"type":"items","id":"p","entries":['
    braces = []
    for k, entry in enumerate(entries(n)):
        text += ("," if k else "") + compact(entry)
        braces.append(len(text) - 1)
    return text + '],"content":null,"uri":null}', braces


class Observer:
    """A send that notes each plan notification: when, at which fragment, entries, bytes."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.fragment = 0
        self.seen: list[tuple[float, int, int, int]] = []  # time, fragment, entries, bytes

    async def __call__(self, params: dict[str, Any]) -> None:
        size = len(json.dumps(params))
        update = params["update"]
        if update["sessionUpdate"] == "plan_update":
            count = len(update["plan"]["entries"])
            self.seen.append((self.loop.time(), self.fragment, count, size))


def split(text: str) -> list[str]:
    return [text[i : i + FRAGMENT] for i in range(0, len(text), FRAGMENT)]


def back_to_back(n: int, rounds: int) -> list[object]:
    text, _ = create_text(n)
    fragments = split(text)
    loop = asyncio.new_event_loop()
    observer = Observer(loop)
    session = PlanSession(observer, session_id="s", client_capabilities=CAPS)
    plain = PlanSession(DumpingSend(), session_id="s", client_capabilities=CAPS)

    async def streamed_once() -> None:
        for position, fragment in enumerate(fragments, 1):
            observer.fragment = position
            await session.feed("c", "create_plan", fragment)
        assert (await session.finish("c")).ok
        await session.call("remove_plan", REMOVE)

    def streamed(number: int) -> None:
        for _ in range(number):
            loop.run_until_complete(streamed_once())

    def unstreamed(number: int) -> None:
        async def batch() -> None:
            for _ in range(number):
                await plain.call("create_plan", text)
                await plain.call("remove_plan", REMOVE)

        loop.run_until_complete(batch())

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

    async def drive(feed: bool) -> None:
        # An agent's loop turns once per fragment it reads from the network: so does this
        # driver, and `idle` (the driver without a session) is subtracted from the CPU.
        for position, fragment in enumerate(fragments, 1):
            due = loop.advance(interval)
            observer.fragment = position
            if feed:
                await session.feed("c", "create_plan", fragment)
            await asyncio.sleep(0)
            if due:  # run the timers now due, and wait for the work they started
                await asyncio.sleep(0)
                await asyncio.gather(*asyncio.all_tasks() - {asyncio.current_task()})
        if feed:
            assert (await session.finish("c")).ok
            await session.call("remove_plan", REMOVE)

    def streamed(number: int) -> None:
        for _ in range(number):
            loop.run_until_complete(drive(feed=True))

    def idle(number: int) -> None:
        for _ in range(number):
            loop.run_until_complete(drive(feed=False))

    def unstreamed(number: int) -> None:
        async def batch() -> None:
            for _ in range(number):
                await plain.call("create_plan", text)
                await plain.call("remove_plan", REMOVE)

        loop.run_until_complete(batch())

    try:
        start = loop.now
        streamed(1)
        observed = list(observer.seen)
        t = compare([streamed, idle, unstreamed], rounds)
    finally:
        loop.close()

    latencies = []
    for k, brace in enumerate(braces):
        arrived = start + (brace // FRAGMENT + 1) * interval
        shown = next(when for when, _, count, _ in observed if count > k)
        latencies.append(shown - arrived)
    cpu = Ratio(tuple((s - i) / u for s, i, u in zip(*t.samples, strict=True)))
    total = sum(size for *_, size in observed)
    return [
        n,
        f"{len(fragments) * interval:.0f}",
        cpu.cell(),
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


def chat_chunks(n: int) -> list[dict[str, Any]]:
    """An OpenAI chat stream of one create_plan call, as the wire sends it: one chunk a token."""
    text, _ = create_text(n)
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "create_plan", "arguments": ""},
    }
    chunks = [
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "tool_calls": [first]},
                    "finish_reason": None,
                }
            ],
        }
    ]
    for fragment in split(text):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}
        chunks.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return chunks


def anthropic_events(n: int) -> list[dict[str, Any]]:
    """An Anthropic stream of one create_plan tool use, one `input_json_delta` a token."""
    text, _ = create_text(n)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "m",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "create_plan",
                "input": {},
            },
        },
    ]
    for fragment in split(text):
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
            "usage": {"output_tokens": 1},
        }
    )
    return events


def adapter_rows(rounds: int) -> list[list[object]]:
    """Table rows: µs per chunk an adapter adds over a loop that only iterates the chunks."""
    from anthropic.types import RawMessageStreamEvent
    from openai.types.chat import ChatCompletionChunk
    from pydantic import TypeAdapter

    from llm_plans.providers import AnthropicStream, OpenAIChatStream

    n = 200
    chat = chat_chunks(n)
    events = anthropic_events(n)
    anthropic_type: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    cases = [
        ("OpenAI chat", "dicts", OpenAIChatStream, chat),
        (
            "OpenAI chat",
            "SDK objects",
            OpenAIChatStream,
            [ChatCompletionChunk.model_validate(c) for c in chat],
        ),
        ("Anthropic", "dicts", AnthropicStream, events),
        (
            "Anthropic",
            "SDK objects",
            AnthropicStream,
            [anthropic_type.validate_python(e) for e in events],
        ),
    ]
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
                            await _idle(chunk)

                loop.run_until_complete(batch())

            t = compare([adapted, baseline], rounds)
            per_chunk = [(a - b) / len(chunks) * 1e6 for a, b in zip(*t.samples, strict=True)]
            cell = Ratio(tuple(per_chunk)).cell().replace("x", " µs", 1)
            rows.append([provider, form, len(chunks), cell, "<= 2 µs"])
    finally:
        loop.close()
    return rows


async def _idle(chunk: Any) -> None:
    """What the baseline awaits per chunk: an agent's loop hands each chunk on somewhere."""
    return None
