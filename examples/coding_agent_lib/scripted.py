"""The scripted offline model: a fixed, realistic run of streamed tool calls, no API needed.

It fixes the bug in the sample project (examples/sample_project) the way a model would:
an items plan worked through step by step with real file edits, a markdown design note,
a second plan, and a removal. Plan calls stream in small fragments, like a real model's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from llm_plans import PlanSession, tools

from .models import Backend, OnText, Reply, ToolUse

LABEL = "[scripted offline model: no API key, every reply is canned] "
# Small fragments and a short pause between them make the plan visibly grow in the demo.
FRAGMENT_BYTES = 8

FIXED_CALC = '''"""A tiny statistics helper."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`; raises ValueError when there are none."""
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) / len(values)


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to the range [low, high]."""
    return max(low, min(value, high))
'''

TEST_CALC = """from calc import clamp, mean

assert mean([2, 4]) == 3.0
assert mean([5]) == 5.0
assert clamp(7, 0, 5) == 5
print("all tests passed")
"""

DESIGN = (
    "## Fixing `mean`\n"
    "- [x] The divisor is `len(values) - 1`: off by one\n"
    "- [ ] Divide by `len(values)`\n"
    "- [ ] Reject an empty list with a clear error instead of ZeroDivisionError\n"
)


def _plan(tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    if tool == "create_plan":
        arguments = {
            "type": None,
            "id": None,
            "entries": None,
            "content": None,
            "uri": None,
            **arguments,
        }
    elif tool == "update_plan":
        arguments = {
            "id": None,
            "type": None,
            "entries": None,
            "content": None,
            "uri": None,
            "changes": None,
            **arguments,
        }
    return tool, arguments


def _step(n: int, status: str) -> dict[str, Any]:
    return {"step": n, "status": status, "priority": None, "content": None}


def _entry(text: str, priority: str | None = None, status: str | None = None) -> dict[str, Any]:
    return {"content": text, "priority": priority, "status": status}


# Each turn: what the model says, then the tool calls it makes.
TURNS: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    (
        "I'll fix `mean` in calc.py. Here is my plan.",
        [
            _plan(
                "create_plan",
                type="items",
                entries=[
                    _entry("Read the project and find the bug", "high", "in_progress"),
                    _entry("Fix mean() in calc.py", "high"),
                    _entry("Add a regression test"),
                    _entry("Run the tests", "low"),
                ],
            ),
            ("list_files", {"path": "."}),
            ("read_file", {"path": "calc.py"}),
        ],
    ),
    (
        "Found it: the divisor is off by one. A short design note first.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(1, "completed"), _step(2, "in_progress")]
            ),
            _plan("create_plan", type="markdown", id="design", content=DESIGN),
            ("write_file", {"path": "calc.py", "content": FIXED_CALC}),
        ],
    ),
    (
        "Fixed. Now a regression test.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(2, "completed"), _step(3, "in_progress")]
            ),
            ("write_file", {"path": "test_calc.py", "content": TEST_CALC}),
        ],
    ),
    (
        "Running the tests.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(3, "completed"), _step(4, "in_progress")]
            ),
            ("run_command", {"command": "python test_calc.py"}),
        ],
    ),
    (
        "Tests pass. Wrapping up, with follow-ups in a second plan.",
        [
            _plan("update_plan", id="plan-1", changes=[_step(4, "completed")]),
            _plan(
                "create_plan",
                type="items",
                id="follow-ups",
                entries=[
                    _entry("Document the empty-list error in the README", "low"),
                    _entry("Check other callers of mean()", "medium"),
                ],
            ),
            _plan("remove_plan", id="design"),
        ],
    ),
    (
        "Done: `mean` divides by the number of values and rejects an empty list; "
        "test_calc.py covers it.",
        [],
    ),
]


class Scripted(Backend):
    label = "scripted offline model"

    def __init__(self, delay: float = 0.03) -> None:
        self.delay = delay
        self.turn = 0
        self.labelled = False

    def add_user(self, text: str) -> None:
        self.turn = 0  # every prompt replays the same run

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        if self.turn >= len(TURNS):
            await on_text("Nothing more to do.")
            return Reply()
        text, calls = TURNS[self.turn]
        self.turn += 1
        await on_text(("" if self.labelled else LABEL) + text + "\n")
        self.labelled = True
        reply = Reply()
        for number, (name, arguments) in enumerate(calls, 1):
            use = ToolUse(f"call_{self.turn}_{number}", name, json.dumps(arguments))
            reply.uses.append(use)
            if name in tools.NAMES:
                for start in range(0, len(use.arguments), FRAGMENT_BYTES):
                    await plans.feed(use.id, name, use.arguments[start : start + FRAGMENT_BYTES])
                    await asyncio.sleep(self.delay)
                result = await plans.finish(use.id)
                reply.plan_results[use.id] = self.result(use, result.content, result.ok)
        return reply

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        return {"id": use.id, "content": text, "ok": ok}

    def add_results(self, results: list[dict[str, Any]]) -> None:
        failed = [r for r in results if not r.get("ok", True)]
        if failed:  # a real model would react; the script can only say so
            self.turn = len(TURNS)
