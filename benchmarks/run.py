"""Benchmarks: every timed figure is a median ratio over rounds interleaved with its baseline.

    python benchmarks/run.py [--quick] [--sections per-call,streaming,...] [--out results.json]
    python benchmarks/run.py --runs 5   # the published figures: medians of five runs
    python benchmarks/run.py --sections dialects --update   # refresh exact sections only

A full run writes its figures and the machine's description to benchmarks/results.json;
benchmarks/tables.py renders them into docs/benchmarks.md and benchmarks/README.md. With
`--runs N` the benchmark runs N times, each in a fresh process, and each measured figure is
published as its median over the runs (medians.py), as the goals count them.

The sections, by the names `--sections` takes:

per-call     one tool call against the floor `json.loads(arguments)` + building the
             notification + `json.dumps` + one awaited no-op `send` (table per-call);
             `snapshot()` against one call (snapshot); the same calls against the ACP
             SDK's typed path for that notification (acp-sdk);
written      bytes the model writes to move one step on, against the full-list tools of
             Codex and Claude Code;
results      bytes of the results the model reads back;
streaming    fed back to back (streaming-fed) and at a live 50 tokens/s on a virtual clock
             beside the streaming floor (streaming-live), the preview budget's curve
             (preview-budget), and what a stream adapter adds per chunk (adapters); see
             streamed.py;
legacy-file  the legacy form: one step's update with a 1 MB file plan active, against a
             10-line file plan;
pipe         end to end: plan updates per second over a real stdio pipe, against raw SDK
             updates;
definitions  tool definition bytes and tokens per provider format, and the system prompt's;
dialects     per dialect: definition bytes and tokens (dialect-definitions), and the bytes a
             model writes to move a plan on (dialect-written).

Everything timed goes through llm_plans' public API, and every baseline is built from
`json` and the ACP SDK's public models, so the figures stay comparable as the internals
change. Timing method: benchmarks/timing.py.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import acp
from acp.schema import (
    AgentPlanContentUpdate,
    PlanEntry,
    PlanUpdateItems,
    SessionNotification,
    TextContentBlock,
)
from dialect_bytes import definition_header, definition_rows, written_header, written_rows
from medians import combined
from streamed import adapter_rows, budget_rows, stream_rows
from timing import Ratio, Timings, compare, table, us
from workload import CAPS, STEP, DumpingSend, compact, entries, strict_changes, strict_update

from llm_plans import Limits, PlanSession, tools

HERE = Path(__file__).parent
RESULTS = HERE / "results.json"
T = TypeVar("T")
# Every table of this run, in order, as benchmarks/tables.py reads them from the results file.
TABLES: list[dict[str, Any]] = []
CALL_SIZES = (10, 100, 400)
RESULT_SIZES = (5, 20, 100, 200)
ACTIVE = "Updating the parser"  # TodoWrite's activeForm, shown while the step runs


def report(key: str, title: str, header: list[str], rows: Sequence[Sequence[object]]) -> None:
    """Print one table and keep it for the results file; `key` names it (per-call, ...)."""
    cells = [[str(c) for c in row] for row in rows]
    TABLES.append({"key": key, "title": title, "header": header, "rows": cells})
    print(table(f"{key}: {title}", header, cells))


# ---- per-call: one call against the floor and the ACP SDK ---------------------------------------


async def _noop_send(message: str) -> None:
    """The floor's send: awaited once per call, as any adapter awaits its transport."""


def _floor_side(
    loop: asyncio.AbstractEventLoop,
    arguments: list[str],
    entries_sent: list[list[Any]],
    *,
    changes: bool = False,
) -> Any:
    """The floor any adapter pays for one call: `json.loads` of the arguments, building the
    notification dict (the entries as the client receives them), `json.dumps` and one
    awaited `send`. No validation, no lock, no result text, no bookkeeping. With `changes`,
    building the notification includes the new entries: the ones the client holds, with
    the call's changes applied to copies (`_with_changes`), as an adapter must."""
    held = entries_sent[-1]  # before the first call: what the last one left
    turn = _turns(list(zip(arguments, entries_sent, strict=True)))

    def floor(number: int) -> None:
        async def batch() -> None:
            nonlocal held
            for _ in range(number):
                text, sent = turn()
                args = json.loads(text)
                if changes:
                    held = _with_changes(held, args["changes"])
                params = {
                    "sessionId": "sess_bench",
                    "update": {
                        "sessionUpdate": "plan_update",
                        "plan": {
                            "type": "items",
                            "planId": args["id"],
                            "entries": held if changes else sent,
                        },
                    },
                }
                await _noop_send(json.dumps(params))

        loop.run_until_complete(batch())

    return floor


def _with_changes(entries: list[Any], changes: list[Any]) -> list[Any]:
    """The floor's update of a plan: the entries the client holds, each changed one a copy
    with the fields the change gives."""
    updated = list(entries)
    for change in changes:
        index = change["step"] - 1
        entry = dict(updated[index])
        for field in ("content", "priority", "status"):
            value = change.get(field)
            if value is not None:
                entry[field] = value
        updated[index] = entry
    return updated


def _turns(items: list[T]) -> Callable[[], T]:
    """The next of `items` in turn, on from where the last block stopped: so that every call
    changes the plan, whatever the length of a block (the untimed warm-up's included). A
    block that started again at the first would repeat the call before it whenever the
    last block had an odd length, and a repeated call changes nothing and sends nothing."""
    return itertools.cycle(items).__next__


def _ours_side(
    loop: asyncio.AbstractEventLoop, session: PlanSession, turn: Callable[[], str]
) -> Any:
    """The session's calls, taking their arguments in `turn` (shared by every side that
    calls the same session)."""

    def ours(number: int) -> None:
        async def batch() -> None:
            for _ in range(number):
                await session.call("update_plan", turn())

        loop.run_until_complete(batch())

    return ours


def _session(n: int, loop: asyncio.AbstractEventLoop) -> tuple[PlanSession, DumpingSend]:
    send = DumpingSend()
    session = PlanSession(
        send, session_id="sess_bench", client_capabilities=CAPS, limits=Limits(max_entries=n)
    )
    loop.run_until_complete(session.call("create_plan", {"type": "items", "entries": entries(n)}))
    return session, send


def _sent(
    loop: asyncio.AbstractEventLoop, session: PlanSession, send: DumpingSend, arguments: list[str]
) -> list[dict[str, Any]]:
    """What the session really sends for each of the arguments, for the baselines to build."""
    notifications = []
    for text in arguments:
        assert loop.run_until_complete(session.call("update_plan", text)).ok
        notifications.append(send.last)
    return notifications


def per_call(n: int, rounds: int) -> Timings:
    """Seconds per `update_plan` replacing n entries: ours, the floor, the ACP SDK path.

    Calls alternate between two plans (the step in progress moves), so every call changes
    the plan and sends a notification; both baselines alternate the same way.
    """
    loop = asyncio.new_event_loop()
    session, send = _session(n, loop)
    arguments = [strict_update(n, 2), strict_update(n, 1)]
    sent = [p["update"]["plan"]["entries"] for p in _sent(loop, session, send, arguments)]

    sdk_turn = _turns(arguments)

    def sdk(number: int) -> None:
        for _ in range(number):
            args = json.loads(sdk_turn())
            update = AgentPlanContentUpdate(
                session_update="plan_update",
                plan=PlanUpdateItems(
                    type="items",
                    plan_id=args["id"],
                    entries=[PlanEntry(**e) for e in args["entries"]],
                ),
            )
            params = SessionNotification(session_id="sess_bench", update=update)
            json.dumps(params.model_dump(mode="json", by_alias=True, exclude_none=True))

    try:
        ours = _ours_side(loop, session, _turns(arguments))
        return compare([ours, _floor_side(loop, arguments, sent), sdk], rounds)
    finally:
        loop.close()


def update_call(rounds: int) -> Timings:
    """Seconds per `update_plan` with two changes on a 20-step plan, ours and the floor.

    The calls alternate between completing step 3 and starting step 4, and the reverse, so
    every call changes the plan; the floor applies the changes to the entries the client
    holds and builds the whole 20-step notification it receives, as an adapter must.
    """
    loop = asyncio.new_event_loop()
    session, send = _session(20, loop)
    arguments = [
        strict_changes((3, "completed"), (4, "in_progress")),
        strict_changes((3, "in_progress"), (4, "pending")),
    ]
    sent = [p["update"]["plan"]["entries"] for p in _sent(loop, session, send, arguments)]
    for before, text, after in ((sent[1], arguments[0], sent[0]), (sent[0], arguments[1], sent[1])):
        assert _with_changes(before, json.loads(text)["changes"]) == after  # what the client gets
    try:
        ours = _ours_side(loop, session, _turns(arguments))
        floor = _floor_side(loop, arguments, sent, changes=True)
        return compare([ours, floor], rounds)
    finally:
        loop.close()


def snapshot_cost(rounds: int) -> tuple[list[float], Timings, list[float]]:
    """What a `snapshot()` right after a commit costs: on its own, in seconds, one figure
    per round; the timings of the 10-entry call with a snapshot after each (side 0) and
    alone (side 1); and, one figure per round, its whole cost as a share of a call when
    other work runs between calls.

    The snapshot is taken right after each commit, as an agent persisting in `on_commit`
    takes it, so nothing of the previous state can be reused. It is timed on its own in a
    third side: this thread's CPU clock read just before and after it, less a pair of reads
    with nothing between (the clock's own cost). The difference between sides 0 and 1 is
    what taking it costs in all, in a loop that does nothing but calls. An agent does much
    between two plan calls (a model's reply, tools, I/O), so the last figure puts other
    work (other memory, other code) before each call, outside the clock, and compares the
    calls followed by a snapshot with those that are not, in the same rounds.
    """
    loop = asyncio.new_event_loop()
    session, _ = _session(10, loop)
    arguments = [strict_update(10, 2), strict_update(10, 1)]
    clock = time.thread_time_ns
    turn = _turns(arguments)  # one session: its sides take the arguments in one turn
    own: list[tuple[int, float]] = []  # per block of the third side: its calls, ns a snapshot

    def call_and_snapshot(number: int) -> None:
        async def batch() -> None:
            for _ in range(number):
                await session.call("update_plan", turn())
                session.snapshot()

        loop.run_until_complete(batch())

    def timed(number: int) -> None:
        async def batch() -> float:
            spent = 0
            for _ in range(number):
                await session.call("update_plan", turn())
                before = clock()
                session.snapshot()
                after = clock()
                spent += (after - before) - (clock() - after)
            return spent / number

        own.append((number, loop.run_until_complete(batch())))

    memory, zeros = bytearray(2 << 20), bytes(2 << 20)  # more than a core's own caches
    unrelated = [{"step": k, "words": [str(w) for w in range(12)]} for k in range(400)]

    def other_work() -> None:
        memory[:] = zeros
        json.dumps(unrelated)
        sorted(map(str, range(500)))

    async def between(groups: int) -> float:
        spent = [0, 0]  # ns of the calls without a snapshot, and with one
        for k in range(4 * groups):
            other_work()
            snapshot = k % 4 < 2  # both arguments come as often with a snapshot as without
            start = clock()
            await session.call("update_plan", turn())
            if snapshot:
                session.snapshot()
            done = clock()
            spent[snapshot] += (done - start) - (clock() - done)
        return spent[True] / spent[False] - 1

    try:
        timings = compare([call_and_snapshot, _ours_side(loop, session, turn), timed], rounds)
        cold = [loop.run_until_complete(between(10)) for _ in range(rounds)]
    finally:
        loop.close()
    # The timed blocks, one a round, are the longest: the blocks before them and the untimed
    # ones that open each round (see timing.py) are shorter.
    block = max(number for number, _ in own)
    timed_blocks = [ns / 1e9 for number, ns in own if number == block]
    assert len(timed_blocks) == rounds, "a warm-up as long as a timed block"
    return timed_blocks, timings, cold


def _against_floor(t: Timings) -> list[str]:
    """Ours and the floor, and their ratio."""
    return [us(t.seconds(0)), us(t.seconds(1)), t.ratio(0, 1).cell()]


def section_per_call(rounds: int) -> None:
    floor_rows, sdk_rows = [], []
    for n in CALL_SIZES:
        t = per_call(n, rounds)
        target = "<= 1.75x" if n == 10 else "<= 1.5x"
        call = f"{n} entries replaced"
        floor_rows.append([call, *_against_floor(t), target])
        sdk_rows.append([n, us(t.seconds(0)), us(t.seconds(2)), t.ratio(0, 2).cell()])
    t = update_call(rounds)
    floor_rows.append(["2 changes, 20 steps", *_against_floor(t), "<= 1.75x"])
    report(
        "per-call",
        "One update_plan call (parse, repair, validate, apply, build, serialise, send, result "
        "text) against the floor `json.loads(arguments)` + building the notification + "
        "`json.dumps` + one awaited no-op `send`",
        ["update_plan", "llm_plans µs", "floor µs", "ratio, median (IQR)", "target"],
        floor_rows,
    )
    own, t, cold = snapshot_cost(rounds)
    # Per round: the snapshot's own time, and the whole difference it makes, against the
    # call timed in the same round.
    share = Ratio(tuple(s / c for s, c in zip(own, t.samples[1], strict=True)))
    in_all = Ratio(tuple(r - 1 for r in t.ratio(0, 1).values))
    report(
        "snapshot",
        "`snapshot()` right after each commit of a session with one 10-step plan, against "
        "the 10-entry call itself: the snapshot timed on its own (this thread's CPU clock "
        "read around it); in all, in a loop of calls (a call followed by a snapshot, against "
        "the call alone); and in all with other work before each call, as in an agent",
        [
            "plan",
            "snapshot() µs",
            "call µs",
            "snapshot / call, median (IQR); target <= 0.10x",
            "in all / call, median (IQR); target <= 0.10x",
            "in all, other work between calls, median (IQR); target <= 0.10x",
        ],
        [
            [
                "10 steps",
                f"{statistics.median(own) * 1e6:.1f}",
                us(t.seconds(1)),
                share.cell(),
                in_all.cell(),
                Ratio(tuple(cold)).cell(),
            ]
        ],
    )
    report(
        "acp-sdk",
        "The same calls against the ACP SDK's typed path "
        "(`json.loads`, build `SessionNotification`, `model_dump`, `json.dumps`)",
        ["entries", "llm_plans µs", "ACP SDK µs", "ratio, median (IQR)"],
        sdk_rows,
    )


# ---- written, results: bytes the model writes and reads -----------------------------------------


def output_bytes(n: int) -> tuple[int, int, int]:
    """Compact bytes the model writes to complete step 3 and start step 4 of an n-step plan."""
    ours = strict_changes((3, "completed"), (4, "in_progress"))
    statuses = ["completed"] * 3 + ["in_progress"] + ["pending"] * (n - 4)
    codex = compact(
        {
            "explanation": None,
            "plan": [{"step": f"{STEP} ({k})", "status": s} for k, s in enumerate(statuses)],
        }
    )
    claude = compact(
        {
            "todos": [
                {"content": f"{STEP} ({k})", "status": s, "activeForm": f"{ACTIVE} ({k})"}
                for k, s in enumerate(statuses)
            ]
        }
    )
    return len(ours), len(codex), len(claude)


def section_written() -> None:
    rows = []
    for n in (5, 20, 100):
        ours, codex, claude = output_bytes(n)
        rows.append([n, ours, codex, claude, f"{codex / ours:.1f}x", f"{claude / ours:.1f}x"])
    report(
        "written",
        "Bytes the model writes to complete one step and start the next "
        "(strict mode, compact JSON)",
        [
            "steps",
            "llm_plans changes",
            "Codex update_plan",
            "Claude Code TodoWrite",
            "Codex / ours",
            "TodoWrite / ours",
        ],
        rows,
    )


async def result_bytes(n: int) -> tuple[int, int]:
    """Bytes of the create_plan result and of an update_plan-with-changes result."""
    session = PlanSession(DumpingSend(), session_id="s", client_capabilities=CAPS)
    create = {"type": "items", "id": None, "entries": entries(n, 0), "content": None, "uri": None}
    created = await session.call("create_plan", compact(create))
    moves = strict_changes((1, "completed"), (2, "in_progress"))
    updated = await session.call("update_plan", moves)
    assert created.ok, created.content
    assert updated.ok, updated.content
    return len(created.content.encode()), len(updated.content.encode())


def section_results() -> None:
    rows = []
    for n in RESULT_SIZES:
        created, updated = asyncio.run(result_bytes(n))
        rows.append([n, created, updated])
    report(
        "results",
        "Bytes of the tool results the model reads",
        ["steps", "create_plan result", "update_plan changes result (target <= 600)"],
        rows,
    )


# ---- streaming (streamed.py) --------------------------------------------------------------------


def section_streaming(rounds: int) -> None:
    back_to_back, live = stream_rows(rounds)
    report(
        "streaming-fed",
        "Streaming a create_plan fed back to back in 4-byte fragments (about a token each), "
        "default `stream_interval` 0.1 s; CPU against the same create_plan not streamed (the "
        "removal that lets each side create the plan again is timed and taken out)",
        [
            "entries",
            "fragments",
            "first step sent at fragment",
            "CPU vs non-streamed, median (IQR)",
            "notifications",
            "bytes sent / final notification",
        ],
        back_to_back,
    )
    report(
        "streaming-live",
        "The same streams at a live 50 tokens/s (200 bytes/s, virtual clock); each ratio is "
        "CPU time against one non-streamed create_plan of the same arguments (the streaming "
        "goal's measure), not against the per-call floor; the removal that lets each side create "
        "the plan again is timed and taken out",
        [
            "entries",
            "stream seconds",
            "CPU vs non-streamed, median (IQR)",
            "streaming floor (keep each fragment, serialise the same previews, the call) vs "
            "non-streamed, median (IQR)",
            "notifications",
            "bytes sent / final notification",
            "step latency median / max ms",
        ],
        live,
    )
    report(
        "preview-budget",
        "The preview budget (`PlanSession(preview_budget=...)`) against latency, live at 50 "
        "tokens/s: from a step's closing brace to the send that shows it (virtual clock, so "
        "exact); the default is 8",
        [
            "entries",
            "preview_budget",
            "latency p50 ms",
            "latency p90 ms",
            "previews",
            "preview bytes / final notification",
        ],
        budget_rows(),
    )
    report(
        "adapters",
        "What a stream adapter adds per chunk (one create_plan of 20 steps, replayed, a chunk "
        "a token, as the APIs send them; SDK objects built by the SDK client from the SSE body; "
        "a session that does nothing): everything `await on_event(chunk)` costs, over a loop "
        "that only iterates the chunks",
        ["adapter", "chunks as", "chunks", "µs per chunk, median (IQR)", "target"],
        adapter_rows(rounds),
    )


# ---- legacy-file: the legacy form with file plans -----------------------------------------------


def plan_file(directory: Path, name: str, size: int) -> Path:
    """A markdown plan file of about `size` bytes whose 10 list items come last: the same
    ten entries whatever the size, so only reading and scanning the file differ."""
    items = "".join(f"- [ ] Step {k} of the design\n" for k in range(10))
    paragraph = "The parser keeps its state in one place, so every branch sees the same. " * 8
    filler = ""
    while len(filler) + len(items) + len(paragraph) + 1 < size:
        filler += paragraph + "\n"
    path = directory / name
    path.write_text(f"# Design\n\n{filler}\n{items}", "utf-8")
    return path


def legacy_call(rounds: int) -> tuple[Timings, int, int]:
    """Seconds per one-step update in the legacy form, 1 MB file plan vs 10-line file plan."""
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        big = plan_file(Path(tmp), "big.md", 1_000_000)
        small = plan_file(Path(tmp), "small.md", 0)
        sides = []
        for path in (big, small):
            session = PlanSession(DumpingSend(), session_id="s", client_capabilities=None)
            items = session.call("create_plan", {"type": "items", "entries": entries(20)})
            assert loop.run_until_complete(items).ok  # plan-1, the one updated
            create = session.call("create_plan", {"type": "file", "uri": str(path)})
            assert loop.run_until_complete(create).ok
            moves = itertools.cycle(["completed", "in_progress"])

            def side(number: int, session: PlanSession = session, moves: Any = moves) -> None:
                async def batch() -> None:
                    for _ in range(number):
                        result = await session.call("update_plan", strict_changes((2, next(moves))))
                        assert result.ok, result.content

                loop.run_until_complete(batch())

            sides.append(side)
        try:
            return compare(sides, rounds), big.stat().st_size, small.stat().st_size
        finally:
            loop.close()


def section_legacy_file(rounds: int) -> None:
    t, big, small = legacy_call(rounds)
    report(
        "legacy-file",
        "Legacy form: update_plan with one change, a file plan and a 20-step plan active",
        [
            f"1 MB file plan µs ({big:,} B)",
            f"10-line file plan µs ({small} B)",
            "ratio, median (IQR); target about 1x",
        ],
        [[us(t.seconds(0)), us(t.seconds(1)), t.ratio(0, 1).cell()]],
    )


# ---- pipe: end to end over a stdio pipe ---------------------------------------------------------


class _Counter:
    """The client: notes when each plan notification arrives."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.expected = 0
        self.done = asyncio.Event()

    def expect(self, count: int) -> None:
        self.times.clear()
        self.expected = count
        self.done.clear()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        if getattr(update, "session_update", "").startswith("plan"):
            self.times.append(time.perf_counter())
            if len(self.times) == self.expected:
                self.done.set()

    async def request_permission(self, **_: Any) -> Any:
        raise NotImplementedError


async def end_to_end(n: int, rounds: int) -> tuple[list[float], list[float]]:
    """Updates per second a client process receives, PlanSession and raw, interleaved."""
    counter = _Counter()
    rates: dict[str, list[float]] = {"plans": [], "raw": []}
    async with acp.spawn_agent_process(
        cast("acp.Client", counter),
        sys.executable,
        str(HERE / "e2e_agent.py"),
        env=dict(os.environ),  # the same llm_plans as this process, whatever PYTHONPATH says
        use_unstable_protocol=True,
    ) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(HERE))
        for r in range(rounds):
            for mode in ("plans", "raw") if r % 2 == 0 else ("raw", "plans"):
                counter.expect(n + 1)  # the create_plan, then n updates
                await conn.prompt(
                    session_id=session.session_id,
                    prompt=[TextContentBlock(type="text", text=f"{mode} {n}")],
                )
                await asyncio.wait_for(counter.done.wait(), 60)
                rates[mode].append(n / (counter.times[-1] - counter.times[0]))
    return rates["plans"], rates["raw"]


def section_pipe(quick: bool, rounds: int) -> None:
    n = 300 if quick else 2_000
    ours, raw = asyncio.run(end_to_end(n, rounds))
    ratio = Ratio(tuple(a / b for a, b in zip(ours, raw, strict=True)))
    report(
        "pipe",
        "End to end over a stdio pipe with the ACP SDK (updates per second received)",
        ["updates per run", "PlanSession", "raw session_update", "ratio, median (IQR)"],
        [
            [
                f"{n} x {rounds}",
                f"{statistics.median(ours):.0f}",
                f"{statistics.median(raw):.0f}",
                ratio.cell(),
            ]
        ],
    )


# ---- definitions: tool definitions --------------------------------------------------------------


def token_counter() -> tuple[str, Any]:
    try:
        import bpe_openai  # type: ignore[import-untyped]
    except ImportError:
        return "tokens: not counted (pip install bpe-openai)", None
    encoding = bpe_openai.get_encoding("o200k_base")
    return "tokens: o200k_base, counted offline by bpe-openai", encoding


def section_definitions() -> None:
    label, encoding = token_counter()

    def count(text: str) -> str:
        return str(len(encoding.encode(text))) if encoding is not None else "-"

    rows = []
    for name, value in (
        ("OpenAI Chat (strict)", tools.openai_chat()),
        ("OpenAI Responses (strict)", tools.openai_responses()),
        ("Anthropic", tools.anthropic()),
        ("Anthropic (strict)", tools.anthropic(strict=True)),
    ):
        text = compact(value)
        rows.append([name, len(text), count(text)])
    prompt = tools.system_prompt()
    system = "system prompt (prompts/llm_plans/system.md, counted apart)"
    rows.append([system, len(prompt.encode()), count(prompt)])
    report(
        "definitions",
        f"The three tools' definitions, sent with every request (compact JSON; {label})",
        ["format", "bytes (target <= 3000)", "tokens"],
        rows,
    )


# ---- dialects (dialect_bytes.py) ----------------------------------------------------------------


def section_dialects() -> None:
    label, encoding = token_counter()

    def count(text: str) -> str:
        return str(len(encoding.encode(text))) if encoding is not None else "-"

    report(
        "dialect-definitions",
        "Each dialect's tool definitions and system prompt, bytes / tokens "
        f"(compact JSON; {label})",
        definition_header(),
        definition_rows(count),
    )
    report(
        "dialect-written",
        "Bytes a model writes to move a plan on, per dialect (strict form, compact JSON; "
        "every call applied by a session of that dialect)",
        written_header(),
        written_rows(),
    )


SECTIONS: dict[str, Callable[[bool, int], None]] = {
    "per-call": lambda quick, rounds: section_per_call(rounds),
    "written": lambda quick, rounds: section_written(),
    "results": lambda quick, rounds: section_results(),
    "streaming": lambda quick, rounds: section_streaming(rounds),
    "legacy-file": lambda quick, rounds: section_legacy_file(rounds),
    "pipe": lambda quick, rounds: section_pipe(quick, 2 if quick else 6),
    "definitions": lambda quick, rounds: section_definitions(),
    "dialects": lambda quick, rounds: section_dialects(),
}
"""Every section by its name, in the order a run takes them."""
# Sections whose figures are exact (bytes, tokens): `--update` may refresh them alone in a
# results file of a full run, since no timing of theirs could disagree with the others'.
EXACT = frozenset({"written", "results", "definitions", "dialects"})
TABLES_OF: dict[str, tuple[str, ...]] = {
    "per-call": ("per-call", "snapshot", "acp-sdk"),
    "written": ("written",),
    "results": ("results",),
    "streaming": ("streaming-fed", "streaming-live", "preview-budget", "adapters"),
    "legacy-file": ("legacy-file",),
    "pipe": ("pipe",),
    "definitions": ("definitions",),
    "dialects": ("dialect-definitions", "dialect-written"),
}
"""The tables each section writes, in order."""
_ORDER = [key for keys in TABLES_OF.values() for key in keys]


def sections_of(text: str) -> list[str]:
    """The sections a `--sections` value names (comma-separated), in run order."""
    wanted = {name.strip() for name in text.split(",") if name.strip()}
    unknown = wanted - set(SECTIONS)
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(
            f"unknown section {', '.join(sorted(unknown)) or text!r}; "
            f"use some of {', '.join(SECTIONS)}"
        )
    return [name for name in SECTIONS if name in wanted]


def updated(results: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """`results` with `tables` in place of those of the same keys (new ones in section order)."""
    fresh = {t["key"]: t for t in tables}
    kept = [fresh.pop(t["key"], t) for t in results["tables"]]
    ordered = sorted([*kept, *fresh.values()], key=lambda t: _ORDER.index(t["key"]))
    return {**results, "tables": ordered}


def several(runs: int, sections: list[str], quick: bool, out: Path | None) -> None:
    """Run the benchmark `runs` times, each in a fresh process (no run inherits another's
    caches or heap), and write each measured figure's median over them (`medians.combined`)
    where a single run would write its own."""
    folder = Path(tempfile.mkdtemp(prefix="llm-plans-runs-"))
    paths = [folder / f"run{k}.json" for k in range(1, runs + 1)]
    try:
        for k, path in enumerate(paths, 1):
            print(f"\n---- run {k} of {runs} ----", flush=True)
            command = [sys.executable, __file__, "--sections", ",".join(sections)]
            command += ["--out", str(path)]
            subprocess.run([*command, *(["--quick"] if quick else [])], check=True)
        results = combined([json.loads(path.read_text("utf-8")) for path in paths])
    except BaseException:
        print(f"\nThe runs so far are kept in {folder}.", file=sys.stderr)
        raise
    shutil.rmtree(folder)
    print(f"\n---- medians of {runs} runs ----")
    for t in results["tables"]:
        print(table(f"{t['key']}: {t['title']}", t["header"], t["rows"]))
    out = out or published(quick, sections)
    if out is not None:
        write(out, results, "Wrote")


def published(quick: bool, sections: list[str]) -> Path | None:
    """Where a run writes its results when not told: the results file after a full run of
    every section, nowhere after a quick or partial one."""
    return RESULTS if not quick and set(sections) >= set(SECTIONS) else None


def write(out: Path, results: dict[str, Any], verb: str) -> None:
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"\n{verb} {out}; python benchmarks/tables.py puts its tables into the docs.")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.python_implementation()} {platform.python_version()}, {cpu}, "
        f"{os.cpu_count()} cores, {platform.system()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (a smoke test)")
    parser.add_argument(
        "--sections",
        type=sections_of,
        default=list(SECTIONS),
        help=f"which sections to run, comma-separated: {', '.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only these sections' tables in the results file (default "
        f"{RESULTS.name}); for the exact sections {', '.join(sorted(EXACT))} alone",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"where to write the results (default: {RESULTS.name} after a full run of every "
        "section; a quick or partial run writes none unless asked)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="run the benchmark this many times, each in a fresh process, and publish each "
        "measured figure's median over them (the published figures are of --runs 5)",
    )
    args = parser.parse_args()
    if args.update and not set(args.sections) <= EXACT:
        parser.error(f"--update refreshes exact sections only ({', '.join(sorted(EXACT))})")
    if args.runs < 1:
        parser.error("--runs counts runs: 1 or more")
    if args.runs > 1:
        if args.update:
            parser.error("--update refreshes exact sections, which need no more than one run")
        several(args.runs, args.sections, args.quick, args.out)
        return
    rounds = 3 if args.quick else 21
    print(f"llm_plans benchmarks on {machine()}; {rounds} interleaved rounds per ratio")
    load = os.getloadavg()[0]  # one-minute load: other work on the machine moves the µs
    for name in args.sections:
        SECTIONS[name](args.quick, rounds)
    out = args.out
    if args.update:
        out = out or RESULTS
        write(out, updated(json.loads(out.read_text("utf-8")), TABLES), "Updated")
        return
    out = out or published(args.quick, args.sections)
    if out is not None:
        results = {
            "machine": machine(),
            "load_average": f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
            "rounds": rounds,
            "quick": args.quick,
            "tables": TABLES,
        }
        write(out, results, "Wrote")


if __name__ == "__main__":
    main()
