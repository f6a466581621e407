"""What each of the library's fast paths saves over its reference side, per use.

    python scripts/twins.py

Each fast path (docs/internals.md lists them, with the test that holds the two sides equal)
is timed against its reference side on the same input, with `timeit`: the best of five
repeats of many calls each, in µs per use. This reaches into the internals on purpose and
publishes nothing: the benchmarks (benchmarks/) time only the public API.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import timeit
from collections.abc import Callable
from typing import Any

from llm_plans import Limits
from llm_plans._core.arguments import parse
from llm_plans._core.builder import Rules, build, usual_items
from llm_plans._core.plans import Book
from llm_plans._streaming.preview import Built, grown, preview
from llm_plans._wire.flatten import Flattener, read_plan_file
from llm_plans._wire.forms import Scale, WireForm, notification, plan_update, weight
from llm_plans._wire.outbox import Outbox
from llm_plans.dialects.llm_plans import CREATE_PLAN, UPDATE_PLAN


def best(work: Callable[[], Any], number: int = 2000) -> float:
    """µs per call: the best of five repeats."""
    return min(timeit.repeat(work, number=number, repeat=5)) / number * 1e6


def entries(n: int) -> list[dict[str, str]]:
    return [
        {"content": f"Step {k}: update the parser", "priority": "medium", "status": "pending"}
        for k in range(n)
    ]


def row(name: str, fast: float, reference: float) -> None:
    print(f"| {name} | {fast:.2f} | {reference:.2f} | {reference - fast:.2f} |")


def main() -> None:
    print("| fast path | fast µs | reference µs | saved µs |")
    print("|---|---|---|---|")
    limits, rules = Limits(), Rules()
    strict = dataclasses.replace(UPDATE_PLAN, quick_parse=None)
    for n in (10, 100):
        text = json.dumps({"id": "p", "entries": entries(n)})
        row(
            f"one-pass parse, {n} entries",
            best(functools.partial(parse, UPDATE_PLAN, text, limits)),
            best(functools.partial(parse, strict, text, limits)),
        )
        args = parse(UPDATE_PLAN, text, limits)
        row(
            f"usual_items before build, {n} entries",
            best(functools.partial(usual_items, "p", args["entries"], rules, None, bounded=True)),
            best(functools.partial(build, "items", "p", args, rules, [], None, validated=True)),
        )
    # A streamed create's preview with one step more than the last one.
    new = entries(41)
    fields = {"type": "items", "id": "p", "entries": new}
    book = Book()

    def incremental() -> None:
        built = Built()
        preview(book, CREATE_PLAN, {**fields, "entries": new[:40]}, rules, built)
        preview(book, CREATE_PLAN, fields, rules, built)

    def whole() -> None:
        built = Built()
        preview(book, CREATE_PLAN, {**fields, "entries": new[:40]}, rules, built)
        preview(book, CREATE_PLAN, fields, rules, Built())

    def grown_lane() -> None:
        built = Built()
        preview(book, CREATE_PLAN, {**fields, "entries": new[:40]}, rules, built)
        grown(book, CREATE_PLAN, new[40:], rules, built)

    # Each side works out the 40-step preview first, then the one with a step more.
    row("preview from the new steps, 40 + 1 steps", best(incremental, 300), best(whole, 300))
    row("grown preview, 40 + 1 steps", best(grown_lane, 300), best(incremental, 300))
    # Weighing a notification without serialising it, and a preview by what is new.
    plan = build("items", "p", {"entries": entries(100)}, rules, [], None, validated=True)
    assert plan is not None
    update = plan_update(WireForm.SCHEMA, plan)
    row(
        "weight, 100 entries",
        best(lambda: weight("s", update)),
        best(lambda: len(json.dumps(notification("s", update), separators=(",", ":")))),
    )
    scale = Scale()
    scale.weigh("s", update)
    row(
        "Scale.weigh of a weighed preview, 100 entries",
        best(lambda: scale.weigh("s", update)),
        best(lambda: weight("s", update)),
    )
    # The outbox's one-plan quick path, against the whole way, for a commit.
    loop = asyncio.new_event_loop()

    async def nothing(_: Any) -> None:
        return None

    plans = {"p": plan}
    quick = Outbox(nothing, "s", WireForm.SCHEMA, Flattener(limits, None, read_plan_file))
    slow = Outbox(nothing, "s", WireForm.SCHEMA, Flattener(limits, None, read_plan_file))
    slow._show_one = lambda *args, **kwargs: None  # type: ignore[method-assign]

    async def shown(box: Outbox, plans: dict[str, Any]) -> None:
        await box.show(plans, ["p"])

    for box in (quick, slow):
        loop.run_until_complete(shown(box, plans))
    others = [
        build("items", "p", {"entries": entries(100)[::-1]}, rules, [], None, validated=True),
        plan,
    ]
    turn = [0]

    def show(box: Outbox) -> Callable[[], None]:
        def once() -> None:
            turn[0] += 1
            loop.run_until_complete(shown(box, {"p": others[turn[0] % 2]}))

        return once

    row("outbox quick path, 100 entries", best(show(quick), 500), best(show(slow), 500))
    loop.close()


if __name__ == "__main__":
    main()
