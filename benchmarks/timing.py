"""How the benchmarks time things: interleaved blocks, medians, spreads, and a virtual clock.

A ratio is only as honest as its two sides were measured under the same conditions. On a
shared machine, load comes and goes in bursts of seconds, so timing all of A and then all of
B (and keeping the best of each) can put a burst on one side only: the same code measured
0.39x and 1.20x that way. Here A and B run in alternating blocks of a few milliseconds (ABBA
ABBA ...), each round gives one ratio, and the report is the median ratio with its spread.

Blocks are timed in this thread's CPU time, not wall time: on a shared machine with two
cores, the time the OS gives other processes in the middle of a block would otherwise count
against whichever side was running. What remains (frequency, caches) interleaving spreads
evenly over both sides.

Each round starts with a full garbage collection, so that no side's block pays for another's
garbage, and then runs every side once untimed. The first block after a collection runs
slower, by about 10% for a plan call and 5% for the floor (the more a side allocates, the
more: the collection seems to empty CPython's free lists and memory pools, which that block
fills again). Timed, that cost fell on whichever side ran first: two identical sessions
measured 1.10x apart in the rounds one ran first, 0.95x in those the other did, and a
baseline that sits between the sides, as the per-call floor does, never paid it. Run without
the collection, the sides compare as they do with the untimed blocks.
"""

from __future__ import annotations

import asyncio
import gc
import heapq
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

BLOCK_SECONDS = 0.005  # long enough to dwarf the timer's resolution, short enough to interleave


@dataclass(frozen=True)
class Ratio:
    """One ratio per round of interleaved blocks."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def spread(self) -> str:
        """The interquartile range (min-max below five rounds), as `a-b`."""
        if len(self.values) < 5:
            low, high = min(self.values), max(self.values)
        else:
            low, _, high = statistics.quantiles(self.values, n=4, method="inclusive")
        return f"{low:.2f}-{high:.2f}"

    def cell(self) -> str:
        return f"{self.median:.2f}x ({self.spread()})"


@dataclass(frozen=True)
class Timings:
    """CPU seconds per call of each side, one sample per round."""

    samples: tuple[tuple[float, ...], ...]

    def seconds(self, side: int) -> float:
        return statistics.median(self.samples[side])

    def ratio(self, side: int, baseline: int) -> Ratio:
        pairs = zip(self.samples[side], self.samples[baseline], strict=True)
        return Ratio(tuple(a / b for a, b in pairs))


Side = Callable[[int], object]
"""Runs the measured operation `number` times (in one batch, so that an async side enters
its event loop once per block, as an agent's loop is always running). It may return the CPU
seconds it spent on scaffolding between the operations (removing the plan each create made,
so that the next can make it again), which are taken out of its time."""


def calls_per_block(fn: Side) -> int:
    """How many calls of `fn` fill about BLOCK_SECONDS."""
    fn(3)  # warm up: first calls build caches
    once = max(_timed(fn, 3) / 3, 1e-7)
    return max(1, math.ceil(BLOCK_SECONDS / once))


def _timed(fn: Side, number: int) -> float:
    """CPU seconds of `number` calls of `fn`, less the scaffolding it says it spent."""
    start = time.thread_time()
    aside = fn(number)
    spent = time.thread_time() - start
    return spent - aside if isinstance(aside, float) else spent


def compare(sides: Sequence[Side], rounds: int) -> Timings:
    """Time the sides in alternating blocks, forwards then backwards each round."""
    numbers = [calls_per_block(fn) for fn in sides]
    samples: list[list[float]] = [[] for _ in sides]
    for r in range(rounds):
        gc.collect()
        order = list(range(len(sides)) if r % 2 == 0 else reversed(range(len(sides))))
        for i in order:
            # Untimed, a shorter block: see the module's docstring.
            sides[i](max(1, numbers[i] // 4))
        for i in order:
            fn, number = sides[i], numbers[i]
            samples[i].append(_timed(fn, number) / number)
    return Timings(tuple(tuple(s) for s in samples))


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose `time()` is a clock the benchmark advances.

    Timers (`call_later`) fall due when the driver moves the clock past them, so a stream
    arriving at 50 tokens per second replays in milliseconds of real time while the code
    under test sees real intervals. Only drive it with work that never waits on a future
    timer, or `select` would block.
    """

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self._due: list[float] = []

    def time(self) -> float:
        return self.now

    def call_at(  # type: ignore[override]
        self, when: float, callback: Callable[..., object], *args: Any, context: Any = None
    ) -> asyncio.TimerHandle:
        heapq.heappush(self._due, when)
        return super().call_at(when, callback, *args, context=context)

    def advance(self, seconds: float) -> bool:
        """Move the clock on; True when a timer fell due, so the loop must turn to run it."""
        self.now += seconds
        due = False
        while self._due and self._due[0] <= self.now:
            heapq.heappop(self._due)
            due = True
        return due


def table(title: str, header: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([f"\n{title}\n", line(header), rule, *(line(r) for r in rows)])


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f}"
