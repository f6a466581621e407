"""The scripted offline model: a fixed, realistic run of streamed tool calls, no API needed.

It fixes the bug in the sample project (examples/sample_project) the way a model would:
an items plan worked through step by step with real file edits, a markdown design note
ticked off once the fix is written and then removed, and a second plan (after the removal,
so that the run does not end on it and a client's view shows it going). Plan calls stream
in small fragments, like a real model's.
Like a real model it reads its tool results: when a write or command is declined or fails,
it claims nothing more, leaves that step in progress on the plan and says what it could not do;
the next prompt retries that step.

It only ever runs on the sample project: before any plan or write of a prompt it checks that
calc.py is the sample's own (byte for byte) and test_calc.py absent or the one it writes, and
otherwise stops, saying it changed nothing (see `unfit`). Its run happens once per session:
once finished, a later prompt (after `session/load` too, as the agent keeps `state()` with the
session) gets one message saying what it can do, and its plans stay as they are.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_plans import PlanSession, tools

from .models import Backend, OnText, Reply, ToolUse
from .sample import RUN_A_MODEL, unfit

LABEL = "[scripted offline model: not an LLM, its replies follow a script] "
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
# The note once calc.py is written: the fix does both of its open items.
DESIGN_DONE = DESIGN.replace("- [ ]", "- [x]")


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


@dataclass
class Turn:
    """One scripted reply: what the model says, the tool calls it makes, and the step of
    plan-1 those coding tool calls carry out."""

    text: str
    calls: list[tuple[str, dict[str, Any]]]
    step: int = 0


# Plan-1's steps, in order; the stop message names the one the script could not finish.
STEPS = [
    "Read the project and find the bug",
    "Fix mean() in calc.py",
    "Add a regression test",
    "Run the tests",
]

# Every claim ("Found it", "Fixed", "Tests pass", "Done") sits in the reply after the tool
# results that justify it, so the script only makes it once those results came back ok.
TURNS = [
    Turn(
        "I'll fix `mean` in calc.py. Here is my plan.",
        [
            _plan(
                "create_plan",
                type="items",
                id="plan-1",
                entries=[
                    _entry(STEPS[0], "high", "in_progress"),
                    _entry(STEPS[1], "high"),
                    _entry(STEPS[2]),
                    _entry(STEPS[3], "low"),
                ],
            ),
            ("list_files", {"path": "."}),
            ("read_file", {"path": "calc.py"}),
        ],
        step=1,
    ),
    Turn(
        "Found it: the divisor is off by one. A short design note first.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(1, "completed"), _step(2, "in_progress")]
            ),
            _plan("create_plan", type="markdown", id="design", content=DESIGN),
            ("write_file", {"path": "calc.py", "content": FIXED_CALC}),
        ],
        step=2,
    ),
    Turn(
        "Fixed. Now a regression test.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(2, "completed"), _step(3, "in_progress")]
            ),
            _plan("update_plan", id="design", content=DESIGN_DONE),
            ("write_file", {"path": "test_calc.py", "content": TEST_CALC}),
        ],
        step=3,
    ),
    Turn(
        "Running the tests.",
        [
            _plan(
                "update_plan", id="plan-1", changes=[_step(3, "completed"), _step(4, "in_progress")]
            ),
            ("run_command", {"command": "python test_calc.py"}),
        ],
        step=4,
    ),
    Turn(
        "Tests pass. The design note is done with; follow-ups go in a second plan.",
        [
            _plan("update_plan", id="plan-1", changes=[_step(4, "completed")]),
            _plan("remove_plan", id="design"),
            _plan(
                "create_plan",
                type="items",
                id="follow-ups",
                entries=[
                    _entry("Document the empty-list error in the README", "low"),
                    _entry("Check other callers of mean()", "medium"),
                ],
            ),
        ],
    ),
    Turn(
        "Done: `mean` divides by the number of values and rejects an empty list; "
        "test_calc.py covers it.",
        [],
    ),
]

# The files the script writes, and what it writes there: it runs only where each is still the
# sample's own or already this (sample.unfit).
WRITES = {"calc.py": FIXED_CALC, "test_calc.py": TEST_CALC}

# The answer to every prompt after the script's run finished in a session.
ONCE = (
    "The scripted model has run its script in this session and can do nothing more: it is "
    "not an LLM and does not read your request. All it does is fix llm_plans' sample project, "
    "once per session; its plans stay as they are. " + RUN_A_MODEL
)

# Enough of a failed tool's output to say what happened without pasting a whole log.
QUOTED_LINES = 6


@dataclass
class Failure:
    """A tool call that did not do what the script needed."""

    name: str
    arguments: dict[str, Any]
    content: str
    step: int = 0


@dataclass
class Scripted(Backend):
    """The offline model: TURNS in order, stopping honestly at the first failed tool call."""

    project: Path
    """The session's folder: the script runs only if it is the sample project."""
    delay: float = 0.03
    label: str = "scripted offline model"
    turn: int = 0
    labelled: bool = False
    failure: Failure | None = None
    stopped_at: int | None = None
    """The turn a failure stopped; the next prompt retries it instead of starting over."""
    finished: bool = False
    """The run reached its end: the script runs once per session."""
    prompted: bool = False
    """A prompt came and its first reply has not been given: the reply that checks first."""
    resuming: bool = False
    _calls: dict[str, ToolUse] = field(default_factory=dict)

    def add_user(self, text: str) -> None:
        self.prompted, self.failure = True, None

    def state(self) -> dict[str, Any]:
        return {"finished": self.finished, "stopped_at": self.stopped_at}

    def restore(self, state: dict[str, Any]) -> None:
        self.finished = state.get("finished") is True
        stopped = state.get("stopped_at")
        # A turn's number as the saved JSON holds it: an int, not a bool.
        self.stopped_at = stopped if type(stopped) is int and 0 <= stopped < len(TURNS) else None

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        prefix = "" if self.labelled else LABEL
        self.labelled = True
        if self.failure is not None:
            await on_text(prefix + stop_message(self.failure) + "\n")
            self.failure, self.stopped_at = None, self.turn - 1
            return Reply()
        if self.prompted:  # a prompt's first reply: before any plan or write, may it run?
            self.prompted = False
            resuming = self.stopped_at is not None
            refusal = ONCE if self.finished else unfit(self.project, WRITES, resuming=resuming)
            if refusal is not None:
                await on_text(prefix + refusal + "\n")
                return Reply()
            self.resuming, self.turn, self.stopped_at = resuming, self.stopped_at or 0, None
        turn = TURNS[self.turn]
        self.turn += 1
        self.finished = self.turn == len(TURNS)
        text, calls = turn.text, turn.calls
        if self.resuming:  # the plan is still there: retry the step, without re-creating plans
            text = (
                f"Trying step {turn.step} again: {STEPS[turn.step - 1]}."
                if turn.step
                else "Trying that again."
            )
            calls = [c for c in calls if not (c[0] == "create_plan" and c[1]["id"] in plans.plans)]
            self.resuming = False
        elif self.turn == 1 and plans.plans:  # a new run after a cancelled one: its plans go
            text = "Starting over. " + text
            calls = [("remove_plan", {"id": plan_id}) for plan_id in plans.plans] + calls
        await on_text(prefix + text + "\n")
        reply = Reply()
        for number, (name, arguments) in enumerate(calls, 1):
            use = ToolUse(f"call_{self.turn}_{number}", name, json.dumps(arguments))
            self._calls[use.id] = use
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
        """Read the results as a model would: the first failure ends the script's run."""
        for result in results:
            if result.get("ok", True):
                continue
            use = self._calls[result["id"]]
            step = TURNS[self.turn - 1].step if use.name not in tools.NAMES else 0
            arguments = json.loads(use.arguments)
            self.failure = Failure(use.name, arguments, str(result["content"]), step)
            return


def stop_message(failure: Failure) -> str:
    """What the script says when it cannot go on: what failed, and where the plan stopped."""
    args = failure.arguments
    if failure.name == "write_file":
        what = f"I could not write {args['path']}"
    elif failure.name == "run_command":
        what = f"`{args['command']}` did not succeed"
    else:
        what = f"my {failure.name} call did not succeed"
    lines = failure.content.strip().splitlines()
    quoted = "\n".join(f"> {line}" for line in lines[:QUOTED_LINES])
    if len(lines) > QUOTED_LINES:
        quoted += "\n> ..."
    text = f"I stopped: {what}.\n{quoted}\n"
    if failure.step:
        later = " and the steps after it were not started" if failure.step < len(STEPS) else ""
        text += (
            f"The plan shows where I stopped: step {failure.step}, "
            f"{STEPS[failure.step - 1]!r}, is still in progress{later}."
        )
    if "declined" in failure.content:
        text += "\nAllow writes and commands (in acpx: --approve-all) and ask me again."
    return text
