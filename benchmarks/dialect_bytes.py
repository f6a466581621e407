"""Bytes per dialect: each dialect's tool definitions, and what a model writes to move a plan on.

Every figure is exact (bytes of compact JSON, tokens counted offline), so the section takes no
timing. The calls are written in the strict form a strict-mode model must use (every property
present, null where unused) and each is applied by a session taking that dialect, which must
accept it and leave the plan as intended: the bytes are those of calls that really work.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from workload import STEP, DumpingSend, compact, strict_changes

from llm_plans import PlanSession, dialects, tools

OURS = "llm_plans"
# Every dialect `PlanSession(dialects=...)` takes (one module each), ours first.
NAMES = (OURS, *(name for name in dialects.__all__ if name != OURS))

ACTIVE = "Updating the parser"  # TodoWrite's activeForm, as the `written` section writes it
SIZES = (5, 20, 100)
ONE_CHANGE_AT = 20  # the plan length of the "one status change" column
FORMATS: tuple[tuple[str, Callable[[str], Any]], ...] = (
    ("OpenAI Chat (strict)", lambda d: tools.openai_chat(dialect=d)),
    ("OpenAI Responses (strict)", lambda d: tools.openai_responses(dialect=d)),
    ("Anthropic", lambda d: tools.anthropic(dialect=d)),
    ("Anthropic (strict)", lambda d: tools.anthropic(strict=True, dialect=d)),
)

Call = tuple[str, dict[str, Any]]  # (tool, arguments)


def definition_rows(count: Callable[[str], str]) -> list[list[object]]:
    """Per dialect: its tools, then bytes / tokens of its definitions in each format, and of
    its system prompt."""
    rows: list[list[object]] = []
    for dialect in NAMES:
        names = [t["name"] for t in tools.anthropic(dialect=dialect)]
        cells: list[object] = [dialect, ", ".join(names)]
        for _, listed in FORMATS:
            text = compact(listed(dialect))
            cells.append(f"{len(text)} / {count(text)}")
        prompt = tools.system_prompt(dialect=dialect)
        cells.append(f"{len(prompt.encode())} / {count(prompt)}")
        rows.append(cells)
    return rows


def definition_header() -> list[str]:
    return ["dialect", "tools", *(f"{name}" for name, _ in FORMATS), "system prompt"]


# ---- the calls that move a plan on ----------------------------------------------------------


def statuses(n: int, current: int) -> list[str]:
    return [
        "completed" if k < current else "in_progress" if k == current else "pending"
        for k in range(n)
    ]


def _text(k: int) -> str:
    return f"{STEP} ({k})"


def _before_and_moves(dialect: str, n: int, moves: int) -> tuple[list[Call], list[Call]]:
    """The calls that set up an n-step plan with step 3 in progress, and those that complete
    it (`moves` 1) and also start step 4 (`moves` 2), as `dialect`'s model writes them."""
    before, after = statuses(n, 2), statuses(n, 3)
    if moves == 1:
        after[3] = "pending"
    changed = [k for k in range(n) if before[k] != after[k]]
    if dialect == OURS:
        entries = [{"content": _text(k), "status": s} for k, s in enumerate(before)]
        moved = [(k + 1, after[k]) for k in changed]
        return (
            [("create_plan", {"type": "items", "entries": entries})],
            [("update_plan", _decoded(strict_changes(*moved)))],
        )
    if dialect == "claude_tasks":
        setup: list[Call] = [
            ("TaskCreate", {"subject": _text(k), "description": _text(k)}) for k in range(n)
        ]
        setup += [
            ("TaskUpdate", {"taskId": str(k + 1), "status": s})
            for k, s in enumerate(before)
            if s != "pending"
        ]
        return setup, [("TaskUpdate", {"taskId": str(k + 1), "status": after[k]}) for k in changed]
    if dialect == "cursor":

        def todos(which: list[int], status: list[str]) -> list[dict[str, Any]]:
            return [{"id": str(k + 1), "content": _text(k), "status": status[k]} for k in which]

        return (
            [("todo_write", {"merge": False, "todos": todos(list(range(n)), before)})],
            [("todo_write", {"merge": True, "todos": todos(changed, after)})],
        )
    whole: dict[str, Callable[[list[str]], Call]] = {
        "claude_todos": lambda s: (
            "TodoWrite",
            {
                "todos": [
                    {"content": _text(k), "status": v, "activeForm": f"{ACTIVE} ({k})"}
                    for k, v in enumerate(s)
                ]
            },
        ),
        "codex": lambda s: (
            "update_plan",
            {"plan": [{"step": _text(k), "status": v} for k, v in enumerate(s)]},
        ),
        "write_todos": lambda s: (
            "write_todos",
            {"todos": [{"content": _text(k), "status": v} for k, v in enumerate(s)]},
        ),
        "opencode": lambda s: (
            "todowrite",
            {
                "todos": [
                    {"content": _text(k), "status": v, "priority": "medium"}
                    for k, v in enumerate(s)
                ]
            },
        ),
        "vibe": lambda s: (
            "todo",
            {
                "action": "write",
                "todos": [
                    {"id": str(k + 1), "content": _text(k), "status": v, "priority": "medium"}
                    for k, v in enumerate(s)
                ],
            },
        ),
    }
    if dialect not in whole:  # a dialect registered after this file: say so, do not guess
        raise NotImplementedError(f"no scripted calls for dialect {dialect!r}")
    return [whole[dialect](before)], [whole[dialect](after)]


def _decoded(text: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(text)
    return value


def strict_form(value: Any, schema: dict[str, Any]) -> Any:
    """`value` as strict mode makes the model write it: every property of every object
    present, those it leaves out as null (the schema allows null for each of them)."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {
            name: strict_form(value[name], sub) if name in value else None
            for name, sub in properties.items()
        }
    if isinstance(value, list):
        return [strict_form(v, schema.get("items", {})) for v in value]
    return value


async def written(dialect: str, n: int, moves: int) -> tuple[str, int]:
    """The call(s) that move an n-step plan on, and their bytes; applied to a session that
    must accept each and end with the plan as intended."""
    session = PlanSession(
        DumpingSend(), session_id="s", client_capabilities={"plan": {}}, dialects=[dialect]
    )
    setup, move = _before_and_moves(dialect, n, moves)
    size = 0
    for index, (tool, arguments) in enumerate([*setup, *move]):
        text = compact(
            strict_form(arguments, tools.schema(tool, all_required=True, dialect=dialect))
        )
        result = await session.call(tool, text)
        if not result.ok:
            raise AssertionError(f"{dialect} {tool}: {result.content}")
        if index >= len(setup):
            size += len(text.encode())
    (plan,) = session.plans.values()
    expected = statuses(n, 3)
    if moves == 1:
        expected[3] = "pending"
    got = [getattr(e, "status", None) for e in getattr(plan, "entries", [])]
    if got != expected:
        raise AssertionError(f"{dialect}: the plan is {got}, not {expected}")
    calls = [tool for tool, _ in move]
    label = calls[0] if len(calls) == 1 else f"{len(calls)} x {calls[0]}"
    return label, size


def written_rows() -> list[list[object]]:
    """Per dialect: the call(s), their bytes at each plan length, and one status change's."""
    rows: list[list[object]] = []
    for dialect in NAMES:
        cells: list[object] = [dialect]
        label = ""
        for n in SIZES:
            label, size = asyncio.run(written(dialect, n, 2))
            cells.append(size)
        _, one = asyncio.run(written(dialect, ONE_CHANGE_AT, 1))
        rows.append([*cells[:1], label, *cells[1:], one])
    return rows


def written_header() -> list[str]:
    return [
        "dialect",
        "call(s) to complete a step and start the next",
        *(f"{n} steps" for n in SIZES),
        f"one status change, {ONE_CHANGE_AT} steps",
    ]
