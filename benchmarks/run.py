"""Benchmarks: every figure is a ratio against a baseline measured in the same run.

    python benchmarks/run.py [--quick]

1. per tool call, against the floor `json.loads(arguments)` + `json.dumps(notification)`;
2. the same, against the ACP SDK's typed path for that notification;
3. model output bytes to move one step on, against the full-list tools of Codex and Claude Code;
4. streaming: when the first step reaches the client, and CPU against the non-streamed call;
5. end to end: plan updates per second over a real stdio pipe, against raw SDK updates;
6. tool definition bytes per provider format.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AgentPlanContentUpdate,
    PlanEntry,
    PlanUpdateItems,
    SessionNotification,
    TextContentBlock,
)

from llm_plans import Limits, PlanSession, tools

HERE = Path(__file__).parent
SIZES = (10, 100, 1_000)
STEP = "Update the parser to accept trailing commas in arrays"  # a typical 50-byte step


def best_of(fn: Callable[[], object], repeat: int, number: int) -> float:
    """Seconds per call: the best of `repeat` timings of `number` calls (noise only adds)."""
    gc.collect()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def entries(n: int) -> list[dict[str, Any]]:
    statuses = ("completed", "in_progress", "pending")
    return [
        {"content": f"{STEP} ({k})", "priority": "medium", "status": statuses[min(k, 2)]}
        for k in range(n)
    ]


def strict_update(n: int) -> str:
    """`update_plan` replacing every entry, as strict mode makes the model write it."""
    return json.dumps(
        {
            "id": "plan-1",
            "type": None,
            "entries": entries(n),
            "content": None,
            "uri": None,
            "changes": None,
        }
    )


class DumpingSend:
    """Serialises each notification to JSON, as a transport would."""

    def __init__(self) -> None:
        self.bytes = 0

    async def __call__(self, params: dict[str, Any]) -> None:
        self.bytes += len(json.dumps(params))


def per_call(n: int, repeat: int) -> tuple[float, float, float]:
    """Seconds per call: llm_plans, the json floor, the ACP SDK's typed path."""
    loop = asyncio.new_event_loop()
    session = PlanSession(
        DumpingSend(),
        session_id="sess_bench",
        client_capabilities={"plan": {}},
        limits=Limits(max_entries=10_000),
    )
    loop.run_until_complete(session.call("create_plan", {"type": "items", "entries": entries(n)}))
    arguments = strict_update(n)
    number = max(1, 2_000 // n)

    async def batch() -> None:
        for _ in range(number):
            await session.call("update_plan", arguments)

    def ours() -> None:  # one batch of `number` calls inside the running loop, as an agent
        loop.run_until_complete(batch())

    notification = {
        "sessionId": "sess_bench",
        "update": {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "plan-1", "entries": entries(n)},
        },
    }

    def floor() -> None:
        json.loads(arguments)
        json.dumps(notification)

    def sdk() -> None:
        args = json.loads(arguments)
        update = AgentPlanContentUpdate(
            session_update="plan_update",
            plan=PlanUpdateItems(
                type="items", plan_id=args["id"], entries=[PlanEntry(**e) for e in args["entries"]]
            ),
        )
        params = SessionNotification(session_id="sess_bench", update=update)
        json.dumps(params.model_dump(mode="json", by_alias=True, exclude_none=True))

    result = (
        best_of(ours, repeat, 1) / number,
        best_of(floor, repeat, number),
        best_of(sdk, repeat, number),
    )
    loop.close()
    return result


def output_bytes(n: int) -> tuple[int, int, int]:
    """Bytes the model writes to complete step 3 and start step 4 of an n-step plan."""
    ours = json.dumps(
        {
            "id": "plan-1",
            "type": None,
            "entries": None,
            "content": None,
            "uri": None,
            "changes": [
                {"step": 3, "status": "completed", "priority": None, "content": None},
                {"step": 4, "status": "in_progress", "priority": None, "content": None},
            ],
        }
    )
    statuses = ["completed"] * 3 + ["in_progress"] + ["pending"] * (n - 4)
    codex = json.dumps(
        {
            "explanation": None,
            "plan": [{"step": f"{STEP} ({k})", "status": s} for k, s in enumerate(statuses)],
        }
    )
    claude = json.dumps(
        {
            "todos": [
                {
                    "content": f"{STEP} ({k})",
                    "status": s,
                    "activeForm": f"Updating the parser ({k})",
                }
                for k, s in enumerate(statuses)
            ]
        }
    )
    return len(ours), len(codex), len(claude)


def streaming(repeat: int, interval: float) -> tuple[int, int, float, float]:
    """First-notification fragment, fragment count, streamed and plain seconds per call."""
    text = json.dumps(
        {"type": "items", "id": None, "entries": entries(20), "content": None, "uri": None}
    )
    fragments = [text[i : i + 8] for i in range(0, len(text), 8)]
    loop = asyncio.new_event_loop()
    first: list[int] = []

    class Marking:
        async def __call__(self, params: dict[str, Any]) -> None:
            json.dumps(params)
            if not first:
                first.append(position)

    position = 0
    session = PlanSession(
        Marking(), session_id="s", client_capabilities={"plan": {}}, stream_interval=interval
    )

    async def streamed_once() -> None:
        nonlocal position
        for position, fragment in enumerate(fragments, 1):  # noqa: B007 (read by Marking)
            await session.feed("c", "create_plan", fragment)
        await session.finish("c")
        await session.call("remove_plan", '{"id": "plan-1"}')

    loop.run_until_complete(streamed_once())
    first_at = first[0]
    plain_session = PlanSession(DumpingSend(), session_id="s", client_capabilities={"plan": {}})

    async def plain_once() -> None:
        await plain_session.call("create_plan", text)
        await plain_session.call("remove_plan", '{"id": "plan-1"}')

    streamed = best_of(lambda: loop.run_until_complete(streamed_once()), repeat, 50)
    plain = best_of(lambda: loop.run_until_complete(plain_once()), repeat, 50)
    loop.close()
    return first_at, len(fragments), streamed, plain


class _Counter:
    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.times: list[float] = []
        self.done = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if getattr(update, "session_update", "").startswith("plan"):
            self.times.append(time.perf_counter())
            if len(self.times) == self.expected:
                self.done.set()

    async def request_permission(self, **_: Any) -> Any:
        raise NotImplementedError


async def end_to_end(n: int, mode: str) -> float:
    """Plan updates per second received by a client process over a stdio pipe."""
    counter = _Counter(n + 1)
    async with acp.spawn_agent_process(
        counter, sys.executable, str(HERE / "e2e_agent.py"), use_unstable_protocol=True
    ) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(HERE))
        await conn.prompt(
            session_id=session.session_id,
            prompt=[TextContentBlock(type="text", text=f"{mode} {n}")],
        )
        await asyncio.wait_for(counter.done.wait(), 60)
    return n / (counter.times[-1] - counter.times[0])


def table(title: str, header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[Any]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([f"\n{title}\n", line(header), rule] + [line(r) for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (smoke test)")
    args = parser.parse_args()
    repeat = 2 if args.quick else 7
    print(
        f"llm_plans benchmarks on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}, {platform.system()}"
    )

    rows, sdk_rows = [], []
    for n in SIZES:
        ours, floor, sdk = per_call(n, repeat)
        rows.append(
            [
                n,
                f"{ours * 1e6:.0f}",
                f"{floor * 1e6:.0f}",
                f"{ours / floor:.2f}x",
                f"{ours / n * 1e9:.0f}",
            ]
        )
        sdk_rows.append([n, f"{ours * 1e6:.0f}", f"{sdk * 1e6:.0f}", f"{ours / sdk:.2f}x"])
    print(
        table(
            "1. One update_plan call (replace every entry), end to end: parse, repair, "
            "validate, apply, build, serialise",
            [
                "entries",
                "llm_plans µs",
                "floor µs (json.loads+dumps)",
                "ratio (target <= 2x)",
                "ns per entry",
            ],
            rows,
        )
    )
    print(
        table(
            "2. Against the ACP SDK's typed path (build SessionNotification, serialise)",
            ["entries", "llm_plans µs", "ACP SDK µs", "ratio (target <= 1x)"],
            sdk_rows,
        )
    )

    byte_rows = []
    for n in (5, 20, 100):
        ours_b, codex_b, claude_b = output_bytes(n)
        byte_rows.append(
            [n, ours_b, codex_b, claude_b, f"{codex_b / ours_b:.1f}x", f"{claude_b / ours_b:.1f}x"]
        )
    print(
        table(
            "3. Model output bytes to complete one step and start the next (strict mode)",
            [
                "steps",
                "llm_plans changes",
                "Codex update_plan",
                "Claude Code TodoWrite",
                "Codex / ours",
                "TodoWrite / ours",
            ],
            byte_rows,
        )
    )

    stream_rows = []
    for interval, label in ((0.1, "0.1 s (default)"), (0.0, "0 (every step sent)")):
        first, total, streamed, plain = streaming(repeat, interval)
        stream_rows.append(
            [
                label,
                f"{first} of {total}",
                f"{streamed * 1e6:.0f}",
                f"{plain * 1e6:.0f}",
                f"{streamed / plain:.2f}x",
            ]
        )
    print(
        table(
            "4. Streaming a 20-entry create_plan in 8-byte fragments (fed back to back)",
            [
                "stream_interval",
                "first notification at fragment",
                "streamed µs",
                "non-streamed µs",
                "CPU ratio (target <= 3x)",
            ],
            stream_rows,
        )
    )

    n = 300 if args.quick else 2_000
    ours_rate = asyncio.run(end_to_end(n, "plans"))
    raw_rate = asyncio.run(end_to_end(n, "raw"))
    print(
        table(
            "5. End to end over a stdio pipe with the ACP SDK (updates per second)",
            ["updates", "PlanSession", "raw session_update", "ratio (target >= 0.9x)"],
            [[n, f"{ours_rate:.0f}", f"{raw_rate:.0f}", f"{ours_rate / raw_rate:.2f}x"]],
        )
    )

    sizes = [
        ["OpenAI chat (strict)", len(json.dumps(tools.openai_chat()))],
        ["OpenAI Responses (strict)", len(json.dumps(tools.openai_responses()))],
        ["Anthropic", len(json.dumps(tools.anthropic()))],
        ["Anthropic (strict)", len(json.dumps(tools.anthropic(strict=True)))],
    ]
    print(
        table(
            "6. The three tools' definitions, sent with every request", ["format", "bytes"], sizes
        )
    )


if __name__ == "__main__":
    main()
