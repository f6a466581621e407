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
