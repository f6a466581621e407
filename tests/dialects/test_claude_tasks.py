"""`claude_tasks`: Claude Code's Task* calls, as its models send them, patching one ACP list by
the task numbers the session issues."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from inline_snapshot import snapshot
from plan_kinds import items_plan
from spec_shapes import check

from llm_plans import Limits, PlanSession, ToolResult, tools
from llm_plans._core.results import MAX_REJECTION_BYTES
from llm_plans.testing import RecordingSend

CAPS: dict[str, dict[str, Any]] = {"schema": {"plan": {}}, "legacy": {}}


def session(form: str = "schema", **kwargs: Any) -> tuple[PlanSession, RecordingSend]:
    send = RecordingSend()
    kwargs.setdefault("dialects", "claude_tasks")
    kwargs.setdefault("stream_interval", 0)
    plans = PlanSession(send, session_id="s", client_capabilities=CAPS[form], **kwargs)
    return plans, send


def create(subject: str, description: str = "", active: str | None = None) -> tuple[str, Any]:
    args: dict[str, Any] = {"subject": subject, "description": description}
    if active is not None:
        args["activeForm"] = active
    return "TaskCreate", args


def update(task: str, **fields: Any) -> tuple[str, Any]:
    return "TaskUpdate", {"taskId": task, **fields}


async def run(plans: PlanSession, calls: list[tuple[str, Any]]) -> list[str]:
    out = []
    for tool, args in calls:
        result = await plans.call(tool, args)
        assert result.ok, result.content
        out.append(result.content)
    return out


# Written from the shapes Claude Code 2.1.330 defines (`TaskCreateInput`, `TaskUpdateInput`,
# `TaskListInput`, `TaskGetInput`): one call per change, tasks named by the number a result gave.
SCRIPT = [
    create("Read the failing test", "Find what the parser gets wrong.", "Reading the failing test"),
    create("Fix the parser", "Handle nested lists.", "Fixing the parser"),
    create("Update the changelog", "One line under Unreleased."),
    create("Run the suite", "All of it, not just the parser tests.", "Running the suite"),
    update("1", status="in_progress"),  # progress
    update("1", status="completed"),  # complete
    update("2", status="in_progress"),
    update("3", status="cancelled"),  # cancel: ours, as a variant; it keeps its place
    update("4", status="deleted"),  # delete
]


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_scripted_run_sends_compliant_notifications(form: str) -> None:
    plans, send = session(form)
    texts = await run(plans, SCRIPT)
    for params in send.sent:
        check(form, params)
    assert send.updates[3:] == GOLDEN[form]
    assert texts == snapshot(
        [
            "Task #1 created successfully: Read the failing test",
            "Task #2 created successfully: Fix the parser",
            "Task #3 created successfully: Update the changelog",
            "Task #4 created successfully: Run the suite",
            """\
Updated task #1 status
In progress: #1 "Read the failing test".
Next: #2 "Fix the parser".\
""",
            """\
Updated task #1 status
Next: #2 "Fix the parser".
Note: tasks remain but none is in_progress; set the one you work on now to in_progress.\
""",
            """\
Updated task #2 status
In progress: #2 "Fix the parser".
Next: #3 "Update the changelog".\
""",
            """\
Updated task #3 status
In progress: #2 "Fix the parser".
Next: #4 "Run the suite".\
""",
            """\
Updated task #4 deleted
In progress: #2 "Fix the parser".\
""",
        ]
    )


GOLDEN = {
    "legacy": snapshot(
        [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fix the parser",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Update the changelog",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "4",
                                "description": "All of it, not just the parser tests.",
                                "activeForm": "Running the suite",
                            }
                        },
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Reading the failing test",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fix the parser",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Update the changelog",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "4",
                                "description": "All of it, not just the parser tests.",
                                "activeForm": "Running the suite",
                            }
                        },
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fix the parser",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Update the changelog",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "4",
                                "description": "All of it, not just the parser tests.",
                                "activeForm": "Running the suite",
                            }
                        },
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fixing the parser",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Update the changelog",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "4",
                                "description": "All of it, not just the parser tests.",
                                "activeForm": "Running the suite",
                            }
                        },
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fixing the parser",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                    {
                        "content": "Run the suite",
                        "priority": "medium",
                        "status": "pending",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "4",
                                "description": "All of it, not just the parser tests.",
                                "activeForm": "Running the suite",
                            }
                        },
                    },
                ],
            },
            {
                "sessionUpdate": "plan",
                "entries": [
                    {
                        "content": "Read the failing test",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "1",
                                "description": "Find what the parser gets wrong.",
                                "activeForm": "Reading the failing test",
                            }
                        },
                    },
                    {
                        "content": "Fixing the parser",
                        "priority": "medium",
                        "status": "in_progress",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "2",
                                "description": "Handle nested lists.",
                                "activeForm": "Fixing the parser",
                            }
                        },
                    },
                    {
                        "content": "Cancelled: Update the changelog",
                        "priority": "medium",
                        "status": "completed",
                        "_meta": {
                            "llm_plans": {
                                "taskId": "3",
                                "description": "One line under Unreleased.",
                            }
                        },
                    },
                ],
            },
        ]
    ),
    "schema": snapshot(
        [
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fix the parser",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Update the changelog",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "4",
                                    "description": "All of it, not just the parser tests.",
                                    "activeForm": "Running the suite",
                                }
                            },
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Reading the failing test",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fix the parser",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Update the changelog",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "4",
                                    "description": "All of it, not just the parser tests.",
                                    "activeForm": "Running the suite",
                                }
                            },
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fix the parser",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Update the changelog",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "4",
                                    "description": "All of it, not just the parser tests.",
                                    "activeForm": "Running the suite",
                                }
                            },
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fixing the parser",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Update the changelog",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "4",
                                    "description": "All of it, not just the parser tests.",
                                    "activeForm": "Running the suite",
                                }
                            },
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fixing the parser",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Cancelled: Update the changelog",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                        {
                            "content": "Run the suite",
                            "priority": "medium",
                            "status": "pending",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "4",
                                    "description": "All of it, not just the parser tests.",
                                    "activeForm": "Running the suite",
                                }
                            },
                        },
                    ],
                },
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": "main",
                    "entries": [
                        {
                            "content": "Read the failing test",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "1",
                                    "description": "Find what the parser gets wrong.",
                                    "activeForm": "Reading the failing test",
                                }
                            },
                        },
                        {
                            "content": "Fixing the parser",
                            "priority": "medium",
                            "status": "in_progress",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "2",
                                    "description": "Handle nested lists.",
                                    "activeForm": "Fixing the parser",
                                }
                            },
                        },
                        {
                            "content": "Cancelled: Update the changelog",
                            "priority": "medium",
                            "status": "completed",
                            "_meta": {
                                "llm_plans": {
                                    "taskId": "3",
                                    "description": "One line under Unreleased.",
                                }
                            },
                        },
                    ],
                },
            },
        ]
    ),
}


# ---- results in the shapes Claude Code's models know ---------------------------------------


async def test_list_and_get_read_as_claude_code_shows_tasks_and_change_nothing() -> None:
    plans, send = session()
    assert (await plans.call("TaskList", {})).content == "No tasks found"
    await run(
        plans,
        [
            create("Design the schema", "Tables and keys.", "Designing the schema"),
            create("Write the migration", "Forward and back."),
            create("Seed the data", ""),
            update("2", addBlockedBy=["1"], owner="db-agent"),
            update("3", addBlockedBy=["2"]),
            update("1", status="in_progress"),
        ],
    )
    before, sent = plans.snapshot(), len(send.sent)
    listed = await plans.call("TaskList", {})
    got = await plans.call("TaskGet", {"taskId": "2"})
    assert (listed.ok, got.ok) == (True, True)
    assert listed.content == snapshot("""\
#1 [in_progress] Design the schema
#2 [pending] Write the migration (db-agent) [blocked by #1]
#3 [pending] Seed the data [blocked by #2]\
""")
    assert got.content == snapshot("""\
Task #2: Write the migration
Status: pending
Description: Forward and back.
Owner: db-agent
Blocked by: #1
Blocks: #3\
""")
    assert (plans.snapshot(), len(send.sent)) == (before, sent)
    # A finished blocker no longer blocks; the next task is the first one free to start.
    done = await plans.call("TaskUpdate", {"taskId": "1", "status": "completed"})
    assert done.content == snapshot("""\
Updated task #1 status
Next: #2 "Write the migration".
Note: tasks remain but none is in_progress; set the one you work on now to in_progress.\
""")
    listed = await plans.call("TaskList", {})
    assert "#2 [pending] Write the migration (db-agent)\n" in listed.content


async def test_update_names_what_changed_and_an_update_to_the_same_values_sends_nothing() -> None:
    plans, send = session()
    await run(plans, [create("Profile the loop", "Find the hot path.")])
    result = await plans.call(
        "TaskUpdate",
        {
            "taskId": "1",
            "subject": "Profile the inner loop",
            "activeForm": "Profiling",
            "status": "in_progress",
        },
    )
    assert result.content.split("\n")[0] == "Updated task #1 subject, status, activeForm"
    sent = len(send.sent)
    again = await plans.call("TaskUpdate", {"taskId": "1", "status": "in_progress"})
    assert again.ok
    assert again.content == "Task #1 already has the values sent; nothing changed."
    assert len(send.sent) == sent


async def test_several_in_progress_get_a_note_and_discipline_off_drops_it() -> None:
    for discipline in (True, False):
        plans, _ = session(discipline=discipline)
        await run(plans, [create("A"), create("B"), update("1", status="in_progress")])
        result = await plans.call("TaskUpdate", {"taskId": "2", "status": "in_progress"})
        note = "Note: tasks #1, #2 are all in_progress; keep exactly one in progress."
        assert (note in result.content) is discipline
        assert result.content.startswith('Updated task #2 status\nIn progress: #1 "A" and 1 more.')


async def test_every_task_done_or_cancelled_is_said() -> None:
    plans, _ = session()
    await run(plans, [create("A"), create("B")])
    await run(plans, [update("1", status="completed")])
    last = await plans.call("TaskUpdate", {"taskId": "2", "status": "completed"})
    assert last.content == "Updated task #2 status\nAll tasks are completed."
    await run(plans, [update("2", status="cancelled")])
    plans2, _ = session()
    await run(plans2, [create("A"), update("1", status="deleted")])
    assert (await plans2.call("TaskList", {})).content == "No tasks found"
    assert (await plans2.call("TaskCreate", {"subject": "B", "description": ""})).content == (
        "Task #2 created successfully: B"
    )


async def test_deleting_a_task_unlinks_it_and_keeps_its_number_spent() -> None:
    plans, _ = session()
    await run(plans, [create("A"), create("B"), create("C"), update("3", addBlockedBy=["1", "2"])])
    await run(plans, [update("2", status="deleted")])
    assert (await plans.call("TaskGet", {"taskId": "3"})).content == snapshot("""\
Task #3: C
Status: pending
Blocked by: #1\
""")
    assert (
        await plans.call("TaskGet", {"taskId": "1"})
    ).content == "Task #1: A\nStatus: pending\nBlocks: #3"
    assert (await plans.call("TaskCreate", {"subject": "D", "description": ""})).content == (
        "Task #4 created successfully: D"
    )


# ---- numbers: issued by us, never reused, across snapshots ---------------------------------


async def test_a_restored_session_issues_the_next_number_never_a_removed_one() -> None:
    plans, _ = session()
    await run(plans, [create("A"), create("B"), create("C"), update("3", status="deleted")])
    saved = json.loads(json.dumps(plans.snapshot()))
    assert saved["last_task"] == 3
    again, send = session()
    again.restore(saved)
    assert len(send.sent) == 0
    result = await again.call("TaskCreate", {"subject": "D", "description": ""})
    assert result.content == "Task #4 created successfully: D"
    # Every task gone: the counter still holds.
    await run(again, [update(n, status="deleted") for n in ("1", "2", "4")])
    emptied = session()[0]
    emptied.restore(again.snapshot())
    assert (await emptied.call("TaskCreate", {"subject": "E", "description": ""})).content == (
        "Task #5 created successfully: E"
    )


class Numbers(RuleBasedStateMachine):
    """Creates, deletes and restarts in any order: a number is issued once, ever; TaskList
    shows exactly the tasks created and not deleted, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.plans, self.send = session()
        self.issued: list[int] = []
        self.alive: list[str] = []

    def call(self, tool: str, args: Any) -> ToolResult:
        return self.loop.run_until_complete(self.plans.call(tool, args))

    @rule(subject=st.sampled_from(["Write", "Test", "Ship it", "\u00e9t\u00e9 \U0001f600"]))
    def create(self, subject: str) -> None:
        result = self.call("TaskCreate", {"subject": subject, "description": ""})
        number = int(result.content.split("#")[1].split(" ")[0])
        assert all(number > old for old in self.issued), (number, self.issued)
        self.issued.append(number)
        self.alive.append(str(number))

    @precondition(lambda self: self.alive)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        number = data.draw(st.sampled_from(self.alive))
        assert self.call("TaskUpdate", {"taskId": number, "status": "deleted"}).ok
        self.alive.remove(number)
        assert not self.call("TaskGet", {"taskId": number}).ok

    @rule()
    def restart(self) -> None:
        saved = json.loads(json.dumps(self.plans.snapshot()))
        self.plans, self.send = session()
        self.plans.restore(saved)

    @invariant()
    def listed(self) -> None:
        text = self.call("TaskList", {}).content
        lines = [] if text == "No tasks found" else text.split("\n")
        assert [line.split(" ")[0][1:] for line in lines] == self.alive

    def teardown(self) -> None:
        self.loop.close()


Numbers.TestCase.settings = settings(max_examples=30, stateful_step_count=20)
TestNumbers = Numbers.TestCase


async def test_a_mirror_passes_claude_codes_own_number() -> None:
    plans, _ = session()
    mirrored = await plans.mirror("TaskCreate", {"subject": "A", "description": "", "taskId": "7"})
    assert mirrored.content == "Task #7 created successfully: A"
    assert plans.snapshot()["last_task"] == 7
    ours = await plans.call("TaskCreate", {"subject": "B", "description": ""})
    assert ours.content == "Task #8 created successfully: B"
    lower = await plans.mirror("TaskCreate", {"subject": "C", "description": "", "taskId": 3})
    assert lower.content == "Task #3 created successfully: C"
    assert (await plans.call("TaskCreate", {"subject": "D", "description": ""})).content == (
        "Task #9 created successfully: D"
    )
    before = plans.snapshot()
    taken = await plans.mirror("TaskCreate", {"subject": "E", "description": "", "taskId": "8"})
    assert taken.content == snapshot("""\
TaskCreate was not applied (1 problem); no plan was changed.
- taskId: sent "8"; a task has this number; leave taskId out.
Existing tasks: #7, #8, #3, #9.
Fix the errors and call TaskCreate again.\
""")
    for bad in ("07", "0", "x1", "1.5", "9" * 65, True, 2.0, -1, ""):
        result = await plans.mirror(
            "TaskCreate", {"subject": "F", "description": "", "taskId": bad}
        )
        assert not result.ok, bad
        assert result.content.split("\n")[1].startswith("- taskId: "), result.content
    assert plans.snapshot() == before


async def test_items_another_tool_wrote_are_numbered_by_the_next_task_change() -> None:
    plans, _ = session(dialects=["claude_todos", "claude_tasks"])
    todo = {"status": "pending", "activeForm": "Working"}
    await run(plans, [("TodoWrite", {"todos": [{"content": "Old one", **todo}]})])
    before = plans.snapshot()
    listed = await plans.call("TaskList", {})
    assert listed.content == "- [pending] Old one (no task number yet)"
    assert not (await plans.call("TaskGet", {"taskId": "1"})).ok  # never told, so unknown
    assert plans.snapshot() == before
    assert (await plans.call("TaskCreate", {"subject": "New", "description": ""})).content == (
        "Task #2 created successfully: New"
    )
    assert (await plans.call("TaskList", {})).content == "#1 [pending] Old one\n#2 [pending] New"
    # A number once told names its task for good: rewritten away, it is never given again.
    await run(plans, [("TodoWrite", {"todos": [{"content": "Other", **todo}]})])
    await run(plans, [create("Newer")])
    assert (await plans.call("TaskList", {})).content == "#3 [pending] Other\n#4 [pending] Newer"
    assert plans.snapshot()["last_task"] == 4


async def test_a_restored_list_with_odd_task_data_is_refused_key_by_key() -> None:
    def item(content: str, kept: Any) -> dict[str, Any]:
        meta = {"llm_plans": kept}
        return {"content": content, "priority": "medium", "status": "pending", "_meta": meta}

    entries = [
        item("A", {"taskId": "1", "blockedBy": "2", "metadata": "m", "owner": 5}),
        item("Copy of A", {"taskId": "1"}),
        item("Padded", {"taskId": "007", "blocks": [2, None, "1"]}),
        item("Forged", {"taskId": "9" * 64}),
    ]
    main = {"type": "items", "id": "main", "entries": entries}
    saved = {"version": 1, "next_number": 1, "last_task": 1, "plans": [main]}
    plans, send = session()
    [skipped] = plans.restore(saved, partial=True)
    assert skipped.reason.split(". entries") == snapshot(
        [
            'entries[0]._meta.llm_plans.blockedBy: sent "2"; must be a list of task numbers',
            '[0]._meta.llm_plans.metadata: sent "m"; must be a JSON object',
            "[0]._meta.llm_plans.owner: sent 5; must be a string",
            '[1]._meta.llm_plans.taskId: sent "1"; entries[0] has this task number; a number '
            "names one task of a list",
            '[2]._meta.llm_plans.taskId: sent "007"; must be a task number: decimal digits such '
            'as "4", no leading zero',
            '[2]._meta.llm_plans.blocks: sent [2, null, "1"]; 2 in it: must be a task number: '
            'decimal digits such as "4", no leading zero',
            '[3]._meta.llm_plans.taskId: sent "9999999999999999999999999999999999999999999999'
            '999999999999999999"; higher than every task number the session issued (its '
            "last_task).",
        ]
    )
    assert (plans.plans, send.sent) == ({}, [])
    assert (await plans.call("TaskCreate", {"subject": "B", "description": ""})).content == (
        "Task #2 created successfully: B"
    )


async def test_a_mirrors_number_is_kept_when_other_items_are_numbered_with_it() -> None:
    plans, _ = session(dialects=["claude_todos", "claude_tasks"])
    todo = {"status": "pending", "activeForm": "Working"}
    await run(plans, [("TodoWrite", {"todos": [{"content": "Old", **todo}]})])
    result = await plans.mirror("TaskCreate", {"subject": "Mirrored", "taskId": "1"})
    assert result.content == "Task #1 created successfully: Mirrored"
    assert (await plans.call("TaskList", {})).content == "#2 [pending] Old\n#1 [pending] Mirrored"


# ---- hostile input: answered in the dialect's own terms, changing nothing -------------------

HOSTILE: list[tuple[str, Any, str]] = [
    ("TaskCreate", {"description": "no subject"}, "- subject: this field is required."),
    (
        "TaskCreate",
        {"subject": "  ", "description": ""},
        '- subject: sent "  "; must not be empty.',
    ),
    ("TaskCreate", {"subject": 5, "description": ""}, "- subject: sent 5; expected a string."),
    (
        "TaskCreate",
        {"subject": "x" * 1001, "description": ""},
        "- subject: 1001 characters; at most 1000.",
    ),
    (
        "TaskCreate",
        {"subject": "x", "description": "d" * 1001},
        "- description: 1001 characters; at most 1000.",
    ),
    (
        "TaskCreate",
        {"subject": "x", "description": "", "status": "pending"},
        '- status: sent "pending"; not a known field.',
    ),
    (
        "TaskCreate",
        {"subject": "x", "description": "", "metadata": {"k": "v" * 1000}},
        "- metadata: 1008 characters as JSON; at most 1000",
    ),
    (
        "TaskCreate",
        {"subject": "x", "description": "", "metadata": []},
        "- metadata: sent []; expected a JSON object.",
    ),
    (
        "TaskCreate",
        '{"subject": "x", "description": "", "metadata": {"n": 1e999}}',
        "- metadata: NaN and Infinity",
    ),
    (
        "TaskUpdate",
        {"taskId": "9", "status": "completed"},
        '- taskId: sent "9"; no task has this number.',
    ),
    (
        "TaskUpdate",
        {"taskId": "1", "status": "sideways"},
        '- status: sent "sideways"; accepted values:',
    ),
    ("TaskUpdate", {"taskId": "1"}, "- this call changes nothing;"),
    ("TaskUpdate", {"taskId": ["1"], "status": "completed"}, '- taskId: sent ["1"];'),
    ("TaskUpdate", {"taskId": True, "status": "completed"}, "- taskId: sent true;"),
    (
        "TaskUpdate",
        {"taskId": "1", "addBlocks": ["1"]},
        '- addBlocks[0]: sent "1"; a task cannot wait for itself.',
    ),
    (
        "TaskUpdate",
        {"taskId": "1", "addBlockedBy": ["2", "5"]},
        '- addBlockedBy[1]: sent "5"; no task has this number.',
    ),
    ("TaskUpdate", {"taskId": "1", "owner": "o" * 1001}, "- owner: 1001 characters; at most 1000."),
    (
        "TaskUpdate",
        {"taskId": "1", "priority": "high"},
        '- priority: sent "high"; not a known field.',
    ),
    ("TaskGet", {"taskId": "0"}, '- taskId: sent "0"; no task has this number.'),
    ("TaskGet", {}, "- taskId: this field is required."),
    ("TaskGet", {"taskId": None}, "- taskId: sent null;"),
]


@pytest.mark.parametrize(("tool", "args", "line"), HOSTILE)
async def test_hostile_calls_are_rejected_naming_the_dialects_fields(
    tool: str, args: Any, line: str
) -> None:
    plans, send = session()
    await run(plans, [create("A"), create("B")])
    before, sent = plans.snapshot(), len(send.sent)
    result = await plans.call(tool, args)
    assert not result.ok
    assert (plans.snapshot(), len(send.sent)) == (before, sent)
    lines = result.content.split("\n")
    assert lines[0].startswith(f"{tool} was not applied (")
    assert any(text.startswith(line) for text in lines[1:]), result.content
    assert lines[-1] == f"Fix the errors and call {tool} again."
    assert "entries" not in result.content


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", " ", "1", "#2", "7", "done", "deleted", "x" * 1001, "\u00e9\U0001f600"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
VALID: dict[str, dict[str, Any]] = {
    "TaskCreate": {"subject": "S", "description": "D", "activeForm": "A", "metadata": {"k": 1}},
    "TaskUpdate": {"taskId": "1", "status": "completed", "addBlocks": ["2"], "owner": "o"},
    "TaskList": {},
    "TaskGet": {"taskId": "2"},
}
# The fields each tool accepts, by the names the model uses (TaskCreate's hidden `taskId` too).
FIELDS = {
    "TaskCreate": {"subject", "description", "activeForm", "metadata", "taskId"},
    "TaskUpdate": {
        "taskId",
        "subject",
        "description",
        "activeForm",
        "status",
        "addBlocks",
        "addBlockedBy",
        "owner",
        "metadata",
    },
    "TaskList": set(),
    "TaskGet": {"taskId"},
}


@given(
    tool=st.sampled_from(sorted(VALID)),
    changes=st.lists(
        st.tuples(st.sampled_from([*sorted(FIELDS["TaskUpdate"]), "zz"]), JSON), max_size=3
    ),
    drop=st.lists(st.sampled_from(sorted(FIELDS["TaskUpdate"])), max_size=2),
)
@settings(max_examples=150)
def test_any_values_are_applied_compliantly_or_rejected_in_the_dialects_terms(
    tool: str, changes: list[tuple[str, Any]], drop: list[str]
) -> None:
    args = {**VALID[tool], **dict(changes)}
    for name in drop:
        args.pop(name, None)
    asyncio.run(_applied_or_rejected(tool, args))


async def _applied_or_rejected(tool: str, args: dict[str, Any]) -> None:
    plans, send = session()
    await run(plans, [create("A"), create("B"), update("2", addBlockedBy=["1"])])
    before, sent = plans.snapshot(), len(send.sent)
    result = await plans.call(tool, args)
    if not result.ok:
        assert (plans.snapshot(), len(send.sent)) == (before, sent)
        for line in result.content.split("\n")[1:-1]:
            if line.startswith("- ") and ": " in line and "not a known field" not in line:
                path = line[2:].split(":")[0]
                top = path.split("[")[0].split(".")[0]
                assert top in FIELDS[tool] or " " in path, line
        assert "entries" not in result.content
        return
    for params in send.sent[sent:]:
        check("schema", params)
    again = session()[0]
    again.restore(plans.snapshot())
    assert again.plans == plans.plans
    assert all(
        e.status in ("pending", "in_progress", "completed", "cancelled")
        for e in items_plan(plans.plans["main"]).entries
    )


async def test_an_unknown_number_names_the_tasks_within_a_bound() -> None:
    plans, _ = session(limits=Limits(max_entries=300))
    await run(plans, [create(f"Task {n}") for n in range(60)])
    result = await plans.call("TaskGet", {"taskId": "61"})
    assert "Existing tasks: #1, #2, " in result.content
    assert "#20 and 40 more." in result.content
    empty = await session()[0].call("TaskUpdate", {"taskId": "1", "status": "completed"})
    assert "There are no tasks yet; create one with TaskCreate." in empty.content


async def test_a_full_list_refuses_a_task_and_says_how_to_make_room() -> None:
    plans, _ = session(limits=Limits(max_entries=2))
    await run(plans, [create("A"), create("B")])
    result = await plans.call("TaskCreate", {"subject": "C", "description": ""})
    assert not result.ok
    assert (
        "the task list has 2 tasks, the most allowed. Delete tasks that no longer matter"
        in result.content
    )
    await run(plans, [update("1", status="deleted")])
    assert (await plans.call("TaskCreate", {"subject": "C", "description": ""})).ok


async def test_huge_arguments_get_a_bounded_answer_and_change_nothing() -> None:
    plans, send = session()
    await run(plans, [create("A"), create("B")])
    before, sent = plans.snapshot(), len(send.sent)
    ghosts = [str(n) for n in range(3, 40_000)]  # under the 512 KB bound on arguments
    for tool, args, line in [
        ("TaskUpdate", {"taskId": "1", "addBlocks": ghosts}, '- addBlocks[0]: sent "3"; no task'),
        (
            "TaskUpdate",
            {"taskId": "1", "addBlockedBy": ["2"] * 50_000 + ["1"]},
            "- addBlockedBy[50000]",
        ),
        ("TaskCreate", {"subject": "x" * 600_000, "description": ""}, "- the arguments are"),
    ]:
        result = await plans.call(tool, args)
        assert not result.ok
        assert result.content.split("\n")[1].startswith(line), result.content
        assert len(result.content.encode()) <= MAX_REJECTION_BYTES
        assert (plans.snapshot(), len(send.sent)) == (before, sent)
    # The same ids many times over are one link.
    await run(plans, [update("1", addBlockedBy=["2"] * 50_000)])
    assert plans.snapshot()["plans"][0]["entries"][0]["_meta"]["llm_plans"]["blockedBy"] == ["2"]


async def test_a_session_out_of_numbers_says_so() -> None:
    plans, _ = session()
    plans.restore({"version": 1, "next_number": 1, "last_task": 10**64 - 1, "plans": []})
    result = await plans.call("TaskCreate", {"subject": "A", "description": ""})
    assert not result.ok
    assert "every task number below 10**64 has been issued in this session." in result.content
    assert plans.plans == {}


async def test_metadata_merges_and_null_removes_a_key() -> None:
    plans, _ = session()
    await run(
        plans,
        [("TaskCreate", {"subject": "A", "description": "", "metadata": {"a": 1, "b": None}})],
    )
    await run(plans, [update("1", metadata={"a": None, "c": [1, 2]})])
    entry = plans.snapshot()["plans"][0]["entries"][0]
    assert entry["_meta"] == {"llm_plans": {"taskId": "1", "metadata": {"c": [1, 2]}}}


async def test_variants_models_send_are_taken() -> None:
    plans, _ = session()
    await run(plans, [create("A"), create("B")])
    variants = [
        ("TaskUpdate", {"taskId": 1, "status": "In Progress"}),
        ("TaskUpdate", {"taskId": "#2", "addBlockedBy": "1"}),
        ("TaskUpdate", json.dumps(json.dumps({"taskId": "1", "status": "done"}))),
        ("TaskGet", {"taskId": 2}),
        ("TaskList", {"status": "pending"}),  # a filter TaskList has not: the whole list
        ("TaskCreate", {"subject": "C"}),  # older versions: description optional
    ]
    for tool, args in variants:
        result = await plans.call(tool, args)
        assert result.ok, (args, result.content)
    entries = plans.snapshot()["plans"][0]["entries"]
    assert [e["status"] for e in entries] == ["completed", "pending", "pending"]
    assert entries[1]["_meta"]["llm_plans"]["blockedBy"] == ["1"]
    assert (await plans.call("TaskUpdate", {"taskId": "3", "status": "delete"})).content.startswith(
        "Updated task #3 deleted"
    )


# ---- streamed calls end as the same call sent whole -----------------------------------------

SETUP = [create("A", "first"), create("B"), update("1", status="in_progress")]
FINAL_CALLS = [
    create("Write the docs", "Usage and limits.", "Writing the docs"),
    ("TaskCreate", {"subject": "Mirror", "description": "", "taskId": "12"}),
    update("2", status="in_progress", addBlocks=["1"], owner="me"),
    update("1", status="deleted"),
    update("1", status="completed"),  # the same values: a read's answer
    ("TaskList", {}),
    ("TaskGet", {"taskId": "2"}),
    ("TaskGet", {"taskId": "9"}),
    update("2", status="sideways"),
    ("TaskCreate", {"subject": "\u00e9t\u00e9 \U0001f600", "description": "\u2603"}),
]


@given(
    call=st.sampled_from(FINAL_CALLS),
    cuts=st.lists(st.integers(0, 400), max_size=12),
    as_bytes=st.booleans(),
    nowait=st.booleans(),
)
@settings(max_examples=60)
def test_streamed_equals_plain(
    call: tuple[str, Any], cuts: list[int], as_bytes: bool, nowait: bool
) -> None:
    asyncio.run(_streamed_equals_plain(call, cuts, as_bytes, nowait))


async def _streamed_equals_plain(
    call: tuple[str, Any], cuts: list[int], as_bytes: bool, nowait: bool
) -> None:
    tool, args = call
    plain, plain_send = session()
    streamed, streamed_send = session()
    await run(plain, SETUP)
    await run(streamed, SETUP)
    dumped = json.dumps(args, ensure_ascii=False)
    # As bytes, a cut may fall inside a character.
    text: str | bytes = dumped.encode("utf-8") if as_bytes else dumped
    whole = await plain.call(tool, text)
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    for start, end in itertools.pairwise(points):
        if nowait:
            streamed.feed_nowait("c1", tool, text[start:end])
        else:
            await streamed.feed("c1", tool, text[start:end])
    done = await streamed.finish("c1")
    assert (done.ok, done.content, done.plan_id) == (whole.ok, whole.content, whole.plan_id)
    assert streamed.snapshot() == plain.snapshot()
    assert streamed_send.updates == plain_send.updates
    for params in streamed_send.sent:
        check("schema", params)


async def test_an_aborted_stream_leaves_nothing() -> None:
    plans, send = session()
    await run(plans, SETUP)
    before, sent = plans.snapshot(), len(send.sent)
    await plans.feed("c1", "TaskCreate", '{"subject": "Half')
    assert await plans.abort("c1")
    assert (plans.snapshot(), len(send.sent)) == (before, sent)


# ---- what the model is told -----------------------------------------------------------------


# The argument shapes of Claude Code 2.1.330 (`sdk-tools.d.ts`), descriptions left out.
CLAUDE_CODE: dict[str, dict[str, list[str]]] = {
    "TaskCreate": {
        "properties": ["subject", "description", "activeForm", "metadata"],
        "required": ["subject", "description"],
    },
    "TaskUpdate": {
        "properties": [
            "taskId",
            "subject",
            "description",
            "activeForm",
            "status",
            "addBlocks",
            "addBlockedBy",
            "owner",
            "metadata",
        ],
        "required": ["taskId"],
    },
    "TaskList": {"properties": [], "required": []},
    "TaskGet": {"properties": ["taskId"], "required": ["taskId"]},
}


@pytest.mark.parametrize("tool", ["TaskCreate", "TaskUpdate", "TaskList", "TaskGet"])
def test_definitions_have_claude_codes_shape_and_lean_descriptions(tool: str) -> None:
    reference = CLAUDE_CODE[tool]
    ours = tools.schema(tool, dialect="claude_tasks")
    # `metadata`, an open object no strict format takes, is accepted but not shown.
    assert set(ours["properties"]) == set(reference["properties"]) - {"metadata"}
    assert set(ours.get("required", [])) == set(reference["required"])
    assert len(tools.description(tool, dialect="claude_tasks").encode()) < 500


async def test_a_mirrors_number_cannot_spend_the_sessions_numbers() -> None:
    """One call naming a huge number would leave no number for any later task."""
    plans, _ = session()
    for huge in ("9" * 64, "1" + "0" * 9):
        result = await plans.mirror(
            "TaskCreate", {"subject": "A", "description": "", "taskId": huge}
        )
        assert not result.ok
        assert "- taskId: " in result.content
        assert "at most 9 digits" in result.content
    high = await plans.mirror("TaskCreate", {"subject": "A", "description": "", "taskId": "9" * 9})
    assert high.ok
    after = await plans.call("TaskCreate", {"subject": "B", "description": ""})
    assert after.content == "Task #1000000000 created successfully: B"


async def test_task_list_with_no_arguments_at_all_reads() -> None:
    """APIs stream a call without arguments as empty text (Anthropic's input_json_delta "")."""
    plans, send = session()
    await plans.call("TaskCreate", {"subject": "A", "description": ""})
    sent = len(send.sent)
    nothing: object
    for nothing in ("", b"", " ", None, {}):
        result = await plans.call("TaskList", nothing)
        assert (result.ok, result.content) == (True, "#1 [pending] A"), nothing
    assert not (await plans.call("TaskGet", "")).ok  # it needs its taskId
    assert len(send.sent) == sent


async def test_a_read_after_a_failed_send_sends_nothing() -> None:
    plans, send = session()
    send.fail_with = ConnectionResetError("gone")
    assert (await plans.call("TaskCreate", {"subject": "A", "description": ""})).failure
    send.fail_with = None
    await plans.call("TaskList", {})
    await plans.call("TaskGet", {"taskId": "1"})
    assert send.sent == []


async def test_a_models_call_cannot_choose_a_task_number() -> None:
    """Numbers are ours to issue and never reused: a model naming one (the field mirrors
    use) is refused, a deleted task's number included."""
    plans, _ = session()
    await plans.call("TaskCreate", {"subject": "a", "description": ""})
    await plans.call("TaskUpdate", {"taskId": "1", "status": "deleted"})
    before = plans.snapshot()
    result = await plans.call("TaskCreate", {"subject": "b", "description": "", "taskId": "1"})
    assert not result.ok
    assert '- taskId: sent "1"; not a known field. Accepted fields: ' in result.content
    assert plans.snapshot() == before
    fresh = await plans.call("TaskCreate", {"subject": "b", "description": ""})
    assert fresh.content == "Task #2 created successfully: b"


async def test_an_unknown_number_with_only_unnumbered_items_says_so() -> None:
    plans, _ = session(dialects=["claude_todos", "claude_tasks"])
    todo = {"content": "a", "status": "pending", "activeForm": "x"}
    await plans.call("TodoWrite", {"todos": [todo]})
    result = await plans.call("TaskUpdate", {"taskId": "1", "status": "completed"})
    assert not result.ok
    assert "no tasks yet" not in result.content
    assert "1 item written by another tool has no task number yet" in result.content


async def test_a_new_subject_drops_the_wording_of_the_old_one() -> None:
    """activeForm is shown for the task in progress: it must word the task's current text."""
    plans, send = session()
    await plans.call(
        "TaskCreate", {"subject": "Fix parser", "description": "", "activeForm": "Fixing parser"}
    )
    await plans.call("TaskUpdate", {"taskId": "1", "status": "in_progress"})
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Fixing parser"
    await plans.call("TaskUpdate", {"taskId": "1", "subject": "Rewrite the lexer"})
    assert send.updates[-1]["plan"]["entries"][0]["content"] == "Rewrite the lexer"
    await plans.call("TaskUpdate", {"taskId": "1", "status": "Blocked"})
    [entry] = plans.plans["main"].entries  # type: ignore[union-attr]
    assert (entry.status, entry.meta["llm_plans"]["status"]) == ("pending", "blocked")  # type: ignore[index]
