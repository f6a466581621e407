"""`plan_hooks(session)`: Claude Code's own plan tools mirrored into a session.

The hooks get the input dicts Claude Code sends them (the fields and `tool_response` shapes of
the bundled Claude Code's hook inputs and tools' outputs), from `ClaudeCode`, a model of
Claude Code's shared task list written from those shapes: it numbers tasks as Claude Code does
and is the oracle a resync is checked against.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AllowedOutcome, RequestPermissionResponse
from anthropic_server import ScriptedAPI, Step, serving, text_stream
from client_view import ClientView, as_shown, check_compliant
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from integration_pipe import PipeClient, run_example
from plan_kinds import items_plan
from wire_payloads import message_stream

from llm_plans import ConfigurationError, Limits, MarkdownPlan, PlanSession
from llm_plans.integrations.claude_agent_sdk import plan_hooks
from llm_plans.integrations.claude_agent_sdk._sessions import Sessions
from llm_plans.testing import RecordingSend

DIALECTS = ["llm_plans", "claude_tasks", "claude_todos"]
SUBAGENT = "a4f1c9e2b7d03568"
CLAUDE_SESSION = "5b1e8a0c-3f6d-4e2a-9c7b-1d2e3f4a5b6c"
SECOND = "9c0d1e2f-7a6b-4c5d-8e9f-0a1b2c3d4e5f"  # other Claude Code sessions
THIRD = "e3f4a5b6-1c2d-4e3f-9a8b-7c6d5e4f3a2b"
_ids = itertools.count(1)


def new_session(send: RecordingSend, **kwargs: Any) -> PlanSession:
    return PlanSession(
        send,
        session_id="sess_1",
        client_capabilities={"plan": {}},
        dialects=kwargs.pop("dialects", DIALECTS),
        **kwargs,
    )


def base(event: str, agent: str | None = None, claude: str = CLAUDE_SESSION) -> dict[str, Any]:
    data: dict[str, Any] = {
        "session_id": claude,
        "transcript_path": "/home/dev/.claude/projects/-work/5b1e8a0c.jsonl",
        "cwd": "/work",
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if agent is not None:
        data.update(agent_id=agent, agent_type="general-purpose")
    return data


def post(
    tool: str, given: Any, response: Any, agent: str | None = None, claude: str = CLAUDE_SESSION
) -> dict[str, Any]:
    use_id = f"toolu_01{next(_ids):020d}"
    return {
        **base("PostToolUse", agent, claude),
        "tool_name": tool,
        "tool_input": given,
        "tool_response": response,
        "tool_use_id": use_id,
        "duration_ms": 3,
    }


def failure(tool: str, given: Any, error: str, agent: str | None = None) -> dict[str, Any]:
    return {
        **base("PostToolUseFailure", agent),
        "tool_name": tool,
        "tool_input": given,
        "tool_use_id": f"toolu_01{next(_ids):020d}",
        "error": error,
        "is_interrupt": False,
        "duration_ms": 1,
    }


def stopped(agent: str, claude: str = CLAUDE_SESSION) -> dict[str, Any]:
    return {
        **base("SubagentStop", claude=claude),
        "stop_hook_active": False,
        "agent_id": agent,
        "agent_transcript_path": f"/home/dev/.claude/projects/-work/agent-{agent}.jsonl",
        "agent_type": "general-purpose",
    }


async def fire(hooks: dict[Any, Any], data: dict[str, Any]) -> list[Any]:
    """Run the hooks Claude Code would run for `data`: those of its event whose matcher
    matches its tool (a `|` list of names, as Claude Code matches them)."""
    outputs = []
    for matcher in hooks.get(data["hook_event_name"], []):
        if matcher.matcher is not None and not re.fullmatch(matcher.matcher, data["tool_name"]):
            continue
        for hook in matcher.hooks:
            outputs.append(await hook(data, data.get("tool_use_id"), {"signal": None}))
    return outputs


@dataclass
class Task:
    subject: str
    description: str
    status: str = "pending"
    owner: str | None = None


@dataclass
class ClaudeCode:
    """Claude Code's task list, shared by the main agent and its subagents, and the tool
    outputs (`tool_response`) its Task tools give, as the bundled Claude Code builds them.
    Each Claude Code session (`claude`, its `session_id`) has a list of its own."""

    tasks: dict[str, Task] = field(default_factory=dict)
    last: int = 0
    claude: str = CLAUDE_SESSION

    def create(self, subject: str, description: str | None = None, **kw: Any) -> dict[str, Any]:
        self.last += 1
        task_id = str(self.last)
        saved = description if description is not None else subject
        self.tasks[task_id] = Task(subject, saved)
        given = {"subject": subject, **({"description": description} if description else {})}
        response = {"task": {"id": task_id, "subject": subject, "description": saved}}
        return post("TaskCreate", given, response, kw.get("agent"), self.claude)

    def update(self, task_id: str, agent: str | None = None, **changes: Any) -> dict[str, Any]:
        given = {"taskId": task_id, **changes}
        task = self.tasks.get(task_id)
        if task is None:
            response = {
                "success": False,
                "taskId": task_id,
                "updatedFields": [],
                "error": "Task not found",
            }
            return post("TaskUpdate", given, response, agent, self.claude)
        if changes.get("status") == "deleted":
            del self.tasks[task_id]
            response = {
                "success": True,
                "taskId": task_id,
                "updatedFields": ["deleted"],
                "statusChange": {"from": task.status, "to": "deleted"},
            }
            return post("TaskUpdate", given, response, agent, self.claude)
        fields = []
        before = task.status
        for key in ("subject", "description", "owner", "status"):
            if key in changes and changes[key] != getattr(task, key):
                setattr(task, key, changes[key])
                fields.append(key)
        response = {"success": True, "taskId": task_id, "updatedFields": fields}
        if "status" in fields:
            response["statusChange"] = {"from": before, "to": task.status}
        return post("TaskUpdate", given, response, agent, self.claude)

    def listing(self) -> list[dict[str, Any]]:
        return [
            {
                "id": i,
                "subject": t.subject,
                "status": t.status,
                **({"owner": t.owner} if t.owner else {}),
                "blockedBy": [],
            }
            for i, t in self.tasks.items()
        ]

    def list(self, agent: str | None = None) -> dict[str, Any]:
        return post("TaskList", {}, {"tasks": self.listing()}, agent, self.claude)

    def get(self, task_id: str, agent: str | None = None) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        found = None
        if task is not None:
            found = {
                "id": task_id,
                "subject": task.subject,
                "description": task.description,
                "status": task.status,
                "blocks": [],
                "blockedBy": [],
            }
        return post("TaskGet", {"taskId": task_id}, {"task": found}, agent, self.claude)


def todo_write(todos: list[dict[str, str]], agent: str | None = None) -> dict[str, Any]:
    return post("TodoWrite", {"todos": todos}, {"oldTodos": [], "newTodos": todos}, agent)


def exit_plan_mode(plan: str, approved: str | None = None) -> dict[str, Any]:
    response = {"plan": approved if approved is not None else plan, "isAgent": False}
    return post("ExitPlanMode", {"plan": plan}, response)


def tasks_of(session: PlanSession, plan_id: str) -> dict[str, tuple[str, str]]:
    """Task id -> (subject, status), as the plan holds them."""
    plan = session.plans.get(plan_id)
    if plan is None:
        return {}
    out = {}
    for entry in plan.entries:  # type: ignore[union-attr]
        task_id = (entry.meta or {})["llm_plans"]["taskId"]
        out[task_id] = (entry.content, entry.status)
    return out


def shown_to_client(session: PlanSession, send: RecordingSend) -> None:
    for params in send.sent:
        check_compliant(session.form, params)
    shown = ClientView(session.form).apply_all(send.updates).shown()
    assert shown == as_shown(session.plans, session.form)


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return new_session(send)


# ---- configuration ------------------------------------------------------------------------


def test_the_session_must_take_claude_codes_tools_and_ours(send: RecordingSend) -> None:
    for dialects in (["llm_plans"], ["claude_tasks"], ["claude_todos", "claude_tasks"]):
        with pytest.raises(ConfigurationError, match="dialects="):
            plan_hooks(new_session(send, dialects=dialects))
    hooks = plan_hooks(new_session(send, dialects=["llm_plans", "claude_tasks"]))
    # Only the tools the session mirrors are matched, and plan mode.
    [matcher] = hooks["PostToolUse"]
    assert matcher.matcher == "TaskCreate|TaskUpdate|TaskList|TaskGet|ExitPlanMode"
    assert "PreToolUse" not in hooks  # nothing is shown before a call ran


def test_a_session_with_only_todo_write_mirrors_only_it(send: RecordingSend) -> None:
    hooks = plan_hooks(new_session(send, dialects=["llm_plans", "claude_todos"]))
    assert hooks["PostToolUse"][0].matcher == "TodoWrite|ExitPlanMode"


async def test_a_call_can_write_another_list_than_the_sessions(session: PlanSession) -> None:
    # What the hooks write a subagent's list with: the dialect's own call, another list.
    todos = {"todos": [{"content": "A", "status": "pending", "activeForm": "Doing A"}]}
    assert (await session.call("TodoWrite", todos, list_id="agent-x")).ok
    assert list(session.plans) == ["agent-x"]
    assert session.list_id == "main"
    # Ours ignore it; a list id that is no plan id is the caller's mistake.
    await session.call("create_plan", {"type": "items", "entries": [{"content": "B"}]}, list_id="y")
    assert list(session.plans) == ["agent-x", "plan-1"]
    empty = {"type": "items", "id": "y", "entries": []}
    assert not (await session.call("create_plan", empty, list_id="y")).ok
    for bad in ("", " x", "a\nb", "x" * 65):
        with pytest.raises(ConfigurationError, match="list_id"):
            await session.call("TodoWrite", todos, list_id=bad)
    assert PlanSession(RecordingSend(), session_id="s").list_id is None


# ---- the task tools -------------------------------------------------------------------------


async def test_tasks_mirror_with_claude_codes_own_ids(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode(last=6)  # Claude Code's numbering, not the session's: 7, 8, 9
    for data in (
        code.create("Reproduce the bug", "Run the failing test"),
        code.create("Fix the parser"),
        code.create("Add a regression test"),
        code.update("7", status="in_progress", owner="main"),
        code.update("7", status="completed"),
        code.update("8", status="in_progress", subject="Fix the tokenizer"),
        code.update("9", status="deleted"),
    ):
        assert await fire(hooks, data) == [{}]  # never blocks or edits a call
    assert tasks_of(session, "main") == {i: (t.subject, t.status) for i, t in code.tasks.items()}
    [first, second] = items_plan(session.plans["main"]).entries
    assert first.meta == {
        "llm_plans": {"taskId": "7", "description": "Run the failing test", "owner": "main"}
    }
    assert second.meta is not None
    assert second.meta["llm_plans"]["description"] == "Fix the parser"  # as Claude Code saved it
    shown_to_client(session, send)


async def test_a_mirrored_call_is_the_dialect_call_with_claude_codes_id(
    session: PlanSession, send: RecordingSend
) -> None:
    # What the hooks do is what the same calls through the session do: every rule applies.
    code = ClaudeCode()
    hooks = plan_hooks(session)
    await fire(hooks, code.create("Write docs", "In the README"))
    await fire(hooks, code.update("1", status="in_progress"))
    plain_send = RecordingSend()
    plain = new_session(plain_send)
    await plain.call("TaskCreate", {"subject": "Write docs", "description": "In the README"})
    await plain.call("TaskUpdate", {"taskId": "1", "status": "in_progress"})
    assert session.plans == plain.plans
    assert send.sent == plain_send.sent


async def test_a_call_delivered_twice_is_mirrored_once(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    data = ClaudeCode().create("Once")
    await fire(hooks, data)
    await fire(hooks, dict(data))
    assert list(tasks_of(session, "main")) == ["1"]


async def test_an_update_claude_code_refused_changes_nothing(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("Fix"))
    sent = len(send.sent)
    # Not found in Claude Code's list; and a TaskCompleted hook that blocked the update.
    await fire(hooks, code.update("5", status="completed"))
    blocked = post(
        "TaskUpdate",
        {"taskId": "1", "status": "completed"},
        {"success": False, "taskId": "1", "updatedFields": [], "error": "tests fail"},
    )
    await fire(hooks, blocked)
    assert len(send.sent) == sent
    assert tasks_of(session, "main") == {"1": ("Fix", "pending")}


async def test_an_unknown_task_id_is_ignored_with_one_log_line(
    session: PlanSession, send: RecordingSend, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    code.create("Made before the hooks were attached")  # never mirrored
    await fire(hooks, code.create("Fix"))
    before, sent = session.snapshot(), len(send.sent)
    with caplog.at_level(logging.DEBUG, logger="llm_plans"):
        assert await fire(hooks, code.update("1", status="in_progress")) == [{}]
    assert [r.levelname for r in caplog.records] == ["INFO"]
    assert "'1'" in caplog.records[0].getMessage()
    assert session.snapshot() == before
    assert len(send.sent) == sent
    # The next TaskList resyncs it in.
    await fire(hooks, code.list())
    assert tasks_of(session, "main") == {
        "2": ("Fix", "pending"),
        "1": ("Made before the hooks were attached", "in_progress"),
    }


async def test_task_list_resyncs_the_mirror(session: PlanSession, send: RecordingSend) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    for subject in ("One", "Two", "Three"):
        await fire(hooks, code.create(subject))
    # Changes the mirror never saw (another process, hooks detached for a while).
    code.tasks["1"].status, code.tasks["1"].subject = "completed", "One, done"
    code.tasks["3"].owner = "researcher"
    del code.tasks["2"]
    code.create("Four", "Found by a teammate")
    code.tasks["4"].status = "in_progress"
    await fire(hooks, code.list())
    assert tasks_of(session, "main") == {
        "1": ("One, done", "completed"),
        "3": ("Three", "pending"),
        "4": ("Four", "in_progress"),
    }
    meta = items_plan(session.plans["main"]).entries[1].meta
    assert meta is not None
    owner = meta["llm_plans"]["owner"]
    assert owner == "researcher"
    shown_to_client(session, send)
    # A list that matches the mirror sends nothing.
    sent = len(send.sent)
    await fire(hooks, code.list())
    assert len(send.sent) == sent


async def test_a_task_list_past_the_limits_keeps_what_fits_and_says_so_once(
    session: PlanSession, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    over = session.limits.max_entries + 30
    for n in range(over):
        code.create(f"Task {n}")
    code.create("x" * (session.limits.max_entry_chars + 1))
    with caplog.at_level(logging.WARNING, logger="llm_plans"):
        assert await fire(hooks, code.list()) == [{}]
    kept = session.limits.max_entries
    assert list(tasks_of(session, "main")) == [str(n) for n in range(1, kept + 1)]
    [line] = [r.getMessage() for r in caplog.records]
    assert f"{over + 1 - kept} of Claude Code's tasks" in line
    assert "the most allowed" in line  # the session's reason, for the last one refused
    new_session(RecordingSend()).restore(session.snapshot())


async def test_task_list_with_no_tasks_empties_the_main_list(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("One"))
    code.tasks.clear()
    await fire(hooks, code.list())
    assert tasks_of(session, "main") == {}
    assert "main" in session.plans  # the session's own list stays, empty


async def test_task_get_resyncs_its_task(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("One"))
    await fire(hooks, code.create("Two"))
    code.tasks["1"].status = "in_progress"
    await fire(hooks, code.get("1"))
    del code.tasks["2"]
    await fire(hooks, code.get("2"))  # "Task not found": it is gone
    code.create("Three", "Unseen until now")
    await fire(hooks, code.get("3"))
    assert tasks_of(session, "main") == {"1": ("One", "in_progress"), "3": ("Three", "pending")}
    meta = items_plan(session.plans["main"]).entries[1].meta
    assert meta is not None
    description = meta["llm_plans"]["description"]
    assert description == "Unseen until now"


async def test_a_failed_call_shows_nothing(session: PlanSession, send: RecordingSend) -> None:
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("Fix"))
    before, sent = session.snapshot(), len(send.sent)
    for data in (
        failure("TaskCreate", {"subject": ""}, "InputValidationError: subject is blank"),
        failure("TodoWrite", {"todos": []}, "Interrupted", agent=SUBAGENT),
        failure("ExitPlanMode", {"plan": "# Plan"}, "The user doesn't want to proceed"),
    ):
        assert await fire(hooks, data) == [{}]
    assert session.snapshot() == before
    assert len(send.sent) == sent


@pytest.mark.parametrize(
    "response", [None, "Task #1 created successfully: Fix", [], {"task": None}, {"task": {}}]
)
async def test_a_create_without_claude_codes_id_is_left_for_a_resync(
    session: PlanSession, send: RecordingSend, response: Any
) -> None:
    hooks = plan_hooks(session)
    assert await fire(hooks, post("TaskCreate", {"subject": "Fix"}, response)) == [{}]
    assert send.sent == []
    assert session.plans == {}


def _nested(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(), _nested, max_leaves=8)


@given(
    tool=st.sampled_from(["TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"]),
    given_=st.one_of(
        st.none(),
        st.text(),
        st.dictionaries(
            st.text(),
            JSON,
        ),
    ),
    response=JSON,
    agent=st.sampled_from([None, SUBAGENT, "", "x" * 300, "a\nb"]),
    claude=st.one_of(st.sampled_from([CLAUDE_SESSION, SECOND, "", "s" * 100_000]), JSON),
)
async def test_hostile_hook_input_never_raises_and_keeps_the_session_sound(
    tool: str, given_: Any, response: Any, agent: str | None, claude: Any
) -> None:
    send = RecordingSend()
    session = new_session(send)
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("Fix"))
    data = post(tool, given_, response)
    if agent is not None:
        data["agent_id"] = agent
    data["session_id"] = claude
    assert await fire(hooks, data) == [{}]
    new_session(RecordingSend()).restore(session.snapshot())
    shown_to_client(session, send)


async def test_a_hook_given_no_dict_answers_and_changes_nothing(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    for matchers in hooks.values():
        for matcher in matchers:
            for hook in matcher.hooks:
                data: object
                for data in (None, [], "PostToolUse", {"hook_event_name": "PostToolUse"}):
                    assert await hook(data, None, {"signal": None}) == {}  # type: ignore[arg-type]
    assert session.plans == {}


# ---- TodoWrite ------------------------------------------------------------------------------


async def test_todo_write_replaces_the_list(session: PlanSession, send: RecordingSend) -> None:
    hooks = plan_hooks(session)
    todos = [
        {"content": "Reproduce", "status": "completed", "activeForm": "Reproducing"},
        {"content": "Fix", "status": "in_progress", "activeForm": "Fixing"},
    ]
    await fire(hooks, todo_write(todos))
    plain = new_session(RecordingSend())
    await plain.call("TodoWrite", {"todos": todos})
    assert session.plans == plain.plans
    shown_to_client(session, send)


# ---- plan mode ------------------------------------------------------------------------------


async def test_an_approved_plan_becomes_the_plan_mode_plan(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    await fire(hooks, exit_plan_mode("# Plan\n\n1. Fix the parser"))
    assert session.plans["plan-mode"] == MarkdownPlan(
        id="plan-mode", content="# Plan\n\n1. Fix the parser"
    )
    # A second approval replaces it, with the plan as the user approved it (edited).
    await fire(hooks, exit_plan_mode("# Plan v2", approved="# Plan v2\n\n(and test it)"))
    assert session.plans["plan-mode"].content == "# Plan v2\n\n(and test it)"
    assert list(session.plans) == ["plan-mode"]
    shown_to_client(session, send)


async def test_a_declined_or_pending_plan_leaves_nothing(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    # Declined: Claude Code runs no tool, so no PostToolUse; a failure at most.
    await fire(hooks, failure("ExitPlanMode", {"plan": "# P"}, "User rejected tool use"))
    # Sent to a team lead for approval: not approved yet.
    pending = post(
        "ExitPlanMode",
        {"plan": "# P"},
        {"plan": "# P", "isAgent": True, "awaitingLeaderApproval": True, "requestId": "r1"},
    )
    await fire(hooks, pending)
    await fire(hooks, exit_plan_mode("   "))  # nothing to show
    assert session.plans == {}
    assert send.sent == []


# ---- subagents ------------------------------------------------------------------------------


async def test_a_subagents_calls_go_to_plans_of_its_own(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("Main task"))
    await fire(hooks, code.create("Explore the parser", agent=SUBAGENT))
    await fire(hooks, code.update("2", agent=SUBAGENT, status="in_progress"))
    sub_todos = [{"content": "Read", "status": "in_progress", "activeForm": "Reading"}]
    await fire(hooks, todo_write(sub_todos, agent="b2"))
    mine = f"agent-{SUBAGENT}"
    assert tasks_of(session, "main") == {"1": ("Main task", "pending")}
    assert tasks_of(session, mine) == {"2": ("Explore the parser", "in_progress")}
    assert [e.content for e in session.plans["agent-b2"].entries] == ["Read"]  # type: ignore[union-attr]
    # A subagent's TaskList sees the shared list, but resyncs only its own tasks.
    await fire(hooks, code.list(agent=SUBAGENT))
    assert list(tasks_of(session, mine)) == ["2"]
    # And the main one's does not take the subagent's tasks.
    await fire(hooks, code.list())
    assert list(tasks_of(session, "main")) == ["1"]
    # The subagent updates a task that is not its own: not the main list's change to make.
    await fire(hooks, code.update("1", agent=SUBAGENT, status="completed"))
    assert tasks_of(session, "main") == {"1": ("Main task", "pending")}
    shown_to_client(session, send)
    # Stopped: its plans go; the tasks it left in Claude Code's list reach the main list at
    # the next TaskList.
    await fire(hooks, stopped(SUBAGENT))
    assert mine not in session.plans
    assert "agent-b2" in session.plans
    await fire(hooks, code.list())
    assert tasks_of(session, "main") == {
        "1": ("Main task", "completed"),
        "2": ("Explore the parser", "in_progress"),
    }
    shown_to_client(session, send)


async def test_subagent_plans_can_stay_after_it_stops(session: PlanSession) -> None:
    hooks = plan_hooks(session, keep_subagent_plans=True)
    await fire(hooks, ClaudeCode().create("Explore", agent=SUBAGENT))
    await fire(hooks, stopped(SUBAGENT))
    assert f"agent-{SUBAGENT}" in session.plans


async def test_a_subagents_emptied_list_is_removed_not_kept_empty(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("Explore", agent=SUBAGENT))
    await fire(hooks, code.update("1", agent=SUBAGENT, status="deleted"))
    assert session.plans == {}
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": f"agent-{SUBAGENT}"}
    await fire(hooks, todo_write([{"content": "A", "status": "pending"}], agent=SUBAGENT))
    await fire(hooks, todo_write([], agent=SUBAGENT))
    assert session.plans == {}


async def test_a_long_or_odd_agent_id_gets_a_plan_id_that_restores(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    for agent in ("x" * 500, "agent with spaces\n"):
        await fire(hooks, todo_write([{"content": "A", "status": "pending"}], agent=agent))
    assert len(session.plans) == 2
    assert all(len(i) <= session.limits.max_id_length for i in session.plans)
    new_session(RecordingSend()).restore(session.snapshot())


async def test_parallel_subagents_hooks_interleave_without_mixing(session: PlanSession) -> None:
    # Parallel subagents' hooks arrive interleaved over one control channel.
    hooks = plan_hooks(session)
    code = ClaudeCode()
    agents = ["a1", "a2", "a3"]
    creates = [code.create(f"{agent} step {n}", agent=agent) for n in range(4) for agent in agents]
    await asyncio.gather(*(fire(hooks, data) for data in creates))
    listings = [code.list(agent) for agent in agents] + [code.list()]
    updates = [code.update(str(n), status="completed") for n in range(1, 13, 2)]
    await asyncio.gather(*(fire(hooks, data) for data in [*listings, *updates]))
    for agent in agents:
        mine = tasks_of(session, f"agent-{agent}")
        assert sorted(subject for subject, _ in mine.values()) == [
            f"{agent} step {n}" for n in range(4)
        ]
    assert tasks_of(session, "main") == {}
    new_session(RecordingSend()).restore(session.snapshot())


# ---- subagents as child sessions ------------------------------------------------------------

# Clients that take subagent sessions: v1's opt-in, in the plan-operation and legacy forms, or v2.
TAKING: dict[str, dict[str, Any]] = {
    "schema": {"client_capabilities": {"plan": {}, "subagents": {}}},
    "legacy": {"client_capabilities": {"subagents": {}}},
    "v2": {"protocol_version": 2},
}
CHILD = f"sess_1/agent-{SUBAGENT}"


def taking(send: RecordingSend, form: str = "schema", **kwargs: Any) -> PlanSession:
    return PlanSession(send, session_id="sess_1", dialects=DIALECTS, **TAKING[form], **kwargs)


def shown_in_each_session(session: PlanSession, send: RecordingSend) -> None:
    """Every session (the parent, each child) shows its own plans, from its own updates
    only; nothing of a child before its announcement."""
    for params in send.sent:
        check_compliant(session.form, params)
    announced = {
        p["update"]["sessionId"]: n
        for n, p in reversed(list(enumerate(send.sent)))
        if p["update"]["sessionUpdate"] == "subagent_update"
    }
    for n, params in enumerate(send.sent):
        if params["sessionId"] != session.session_id:
            assert announced[params["sessionId"]] < n
    for sid, each in [(session.session_id, session), *session.subagents.items()]:
        view = ClientView(session.form).apply_all(
            p["update"] for p in send.sent if p["sessionId"] == sid
        )
        if session.form.value == "legacy":
            # The one list: each items plan's steps (a markdown plan adds its lines).
            lists = [getattr(plan, "entries", []) for plan in each.plans.values()]
            steps = [e.content for entries in lists for e in entries]
            shown = [e["content"] for e in view.entries]
            assert [c for c in shown if c in steps] == steps
        else:
            assert view.shown() == as_shown(each.plans, session.form)


@pytest.mark.parametrize("form", list(TAKING))
async def test_a_subagents_plans_go_to_a_child_session(form: str) -> None:
    send = RecordingSend()
    session = taking(send, form)
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("Main task"))
    await fire(hooks, code.create("Explore the parser", agent=SUBAGENT))
    # Announced on the parent, with its agent type, before the child's first plan.
    assert send.sent[-2:] == [
        {
            "sessionId": "sess_1",
            "update": {
                "sessionUpdate": "subagent_update",
                "sessionId": CHILD,
                "title": "general-purpose",
                "state": {"state": "running"},
            },
        },
        send.sent[-1],
    ]
    assert send.sent[-1]["sessionId"] == CHILD
    [child] = session.subagents.values()
    assert child.session_id == CHILD
    # The subagent's list is the child's own list; the parent's plans never hold it.
    assert tasks_of(child, "main") == {"2": ("Explore the parser", "pending")}
    assert tasks_of(session, "main") == {"1": ("Main task", "pending")}
    assert list(session.plans) == ["main"]
    await fire(hooks, code.update("2", agent=SUBAGENT, status="in_progress"))
    # Its TaskList resyncs only its own tasks; the main one's does not take the child's.
    await fire(hooks, code.list(agent=SUBAGENT))
    await fire(hooks, code.list())
    assert tasks_of(child, "main") == {"2": ("Explore the parser", "in_progress")}
    assert list(tasks_of(session, "main")) == ["1"]
    # Its approved plan is the child's own.
    approved = exit_plan_mode("# Sub plan") | {"agent_id": SUBAGENT, "agent_type": "Plan"}
    await fire(hooks, approved)
    assert list(child.plans) == ["main", "plan-mode"]
    assert list(session.plans) == ["main"]
    shown_in_each_session(session, send)
    # Stopped: its plans leave the client's view, then it is idle; its task reaches the main
    # list at the next TaskList, as Claude Code's list still holds it.
    sent = len(send.sent)
    await fire(hooks, stopped(SUBAGENT))
    assert child.plans == {}
    assert {p["sessionId"] for p in send.sent[sent:-1]} == {CHILD}
    assert send.sent[-1] == {
        "sessionId": "sess_1",
        "update": {
            "sessionUpdate": "subagent_update",
            "sessionId": CHILD,
            "state": {"state": "idle"},
        },
    }
    await fire(hooks, code.list())
    assert list(tasks_of(session, "main")) == ["1", "2"]
    shown_in_each_session(session, send)


async def test_a_stopped_subagents_child_can_keep_its_plans() -> None:
    send = RecordingSend()
    session = taking(send)
    hooks = plan_hooks(session, keep_subagent_plans=True)
    code = ClaudeCode()
    await fire(hooks, code.create("Explore", agent=SUBAGENT))
    await fire(hooks, stopped(SUBAGENT))
    child = session.subagents[CHILD]
    assert tasks_of(child, "main") == {"1": ("Explore", "pending")}
    assert send.updates[-1] == {
        "sessionUpdate": "subagent_update",
        "sessionId": CHILD,
        "state": {"state": "idle"},
    }
    # Its kept task stays the child's: the main TaskList does not take it.
    await fire(hooks, code.list())
    assert tasks_of(session, "main") == {}
    # A stop of a subagent that mirrored nothing announces nothing.
    sent = len(send.sent)
    await fire(hooks, stopped("never-seen"))
    assert len(send.sent) == sent
    # Resumed by Claude Code: running again, the same child.
    await fire(hooks, code.update("1", agent=SUBAGENT, status="completed"))
    assert session.subagents[CHILD] is child
    assert send.updates[-2]["state"] == {"state": "running"}
    shown_in_each_session(session, send)


async def test_a_subagents_title_falls_back_to_its_id_and_stays_readable() -> None:
    send = RecordingSend()
    session = taking(send)
    hooks = plan_hooks(session)
    data = todo_write([{"content": "A", "status": "pending", "activeForm": "A"}], agent="b2")
    del data["agent_type"]
    await fire(hooks, data)
    huge = todo_write([{"content": "B", "status": "pending", "activeForm": "B"}], agent="b3")
    await fire(hooks, huge | {"agent_type": "x\n" * 500})
    titles = [u["title"] for u in send.updates if u["sessionUpdate"] == "subagent_update"]
    assert titles[0] == "Subagent b2"
    assert len(titles[1]) == 100
    assert "\n" not in titles[1]
    # Later calls without an agent type keep the title it was announced with.
    again = todo_write([{"content": "C", "status": "pending", "activeForm": "C"}], agent="b3")
    del again["agent_type"]
    announced = len([u for u in send.updates if u["sessionUpdate"] == "subagent_update"])
    await fire(hooks, again)
    assert announced == len([u for u in send.updates if u["sessionUpdate"] == "subagent_update"])
    shown_in_each_session(session, send)


async def test_two_claude_sessions_subagents_of_the_same_id_are_different_children() -> None:
    send = RecordingSend()
    session = taking(send)
    hooks = plan_hooks(session)
    first, second = ClaudeCode(), ClaudeCode(claude=SECOND)
    await fire(hooks, first.create("First's", agent=SUBAGENT))
    await fire(hooks, second.create("Second's main"))
    await fire(hooks, second.create("Second's", agent=SUBAGENT))
    theirs = f"sess_1/{SECOND_LIST}-agent-{SUBAGENT}"
    assert list(session.subagents) == [CHILD, theirs]
    assert tasks_of(session.subagents[CHILD], "main") == {"1": ("First's", "pending")}
    assert tasks_of(session.subagents[theirs], "main") == {"2": ("Second's", "pending")}
    # The second session's TaskList leaves its subagent's task to the subagent's child.
    await fire(hooks, second.list())
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's main", "pending")}
    assert set(session.plans) == {SECOND_LIST}
    # Each stop closes its own session's child only.
    await fire(hooks, stopped(SUBAGENT, claude=SECOND))
    assert session.subagents[theirs].plans == {}
    assert session.subagents[CHILD].plans != {}
    shown_in_each_session(session, send)


async def test_a_claude_session_that_gives_up_its_place_closes_its_subagents() -> None:
    send = RecordingSend()
    session = taking(send, limits=Limits(max_plans=2))
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("First's"))
    second, third = ClaudeCode(claude=SECOND), ClaudeCode(claude=THIRD)
    await fire(hooks, second.create("Second's"))
    await fire(hooks, second.create("Second's sub", agent=SUBAGENT))
    theirs = f"sess_1/{SECOND_LIST}-agent-{SUBAGENT}"
    child = session.subagents[theirs]
    assert child.plans != {}
    await fire(hooks, third.create("Third's"))  # the plans are full: the second one goes
    assert child.plans == {}
    idle = {"sessionUpdate": "subagent_update", "sessionId": theirs, "state": {"state": "idle"}}
    assert idle in send.updates
    shown_in_each_session(session, send)


async def test_without_subagent_sessions_a_subagents_plan_ids_stay() -> None:
    # A client that does not take subagent sessions: the plan ids of before, no announcement.
    send = RecordingSend()
    session = new_session(send)
    assert not session.takes_subagents
    hooks = plan_hooks(session)
    code = ClaudeCode()
    await fire(hooks, code.create("Explore", agent=SUBAGENT))
    await fire(hooks, exit_plan_mode("# Sub") | {"agent_id": SUBAGENT})
    assert list(session.plans) == [f"agent-{SUBAGENT}", f"agent-{SUBAGENT}-plan"]
    assert session.subagents == {}
    assert {p["sessionId"] for p in send.sent} == {"sess_1"}
    assert all(u["sessionUpdate"] != "subagent_update" for u in send.updates)


# ---- Claude Code sessions -------------------------------------------------------------------

# Another Claude session's plans: named by the first 8 hex digits of its session id.
SECOND_LIST = "claude-9c0d1e2f"


async def test_a_second_claude_session_numbers_its_own_tasks(
    session: PlanSession, send: RecordingSend
) -> None:
    # A `query()` without `resume` on the same PlanSession: Claude Code numbers from 1 again.
    hooks = plan_hooks(session)
    first, second = ClaudeCode(), ClaudeCode(claude=SECOND)
    await fire(hooks, first.create("First's task"))
    await fire(hooks, second.create("Second's task"))
    assert tasks_of(session, "main") == {"1": ("First's task", "pending")}
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's task", "pending")}
    # Task 1 of each session is its own.
    await fire(hooks, second.update("1", status="completed"))
    assert tasks_of(session, "main") == {"1": ("First's task", "pending")}
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's task", "completed")}
    await fire(hooks, first.update("1", status="in_progress", subject="Renamed"))
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's task", "completed")}
    # A session's TaskList resyncs its list only, and never takes the other's tasks.
    await fire(hooks, first.create("First's second"))
    await fire(hooks, second.list())
    await fire(hooks, first.list())
    assert tasks_of(session, "main") == {
        "1": ("Renamed", "in_progress"),
        "2": ("First's second", "pending"),
    }
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's task", "completed")}
    await fire(hooks, second.get("2"))  # no task 2 in the second session: nothing goes
    assert "2" in tasks_of(session, "main")
    await fire(hooks, exit_plan_mode("# Second's plan", approved=None) | {"session_id": SECOND})
    assert f"{SECOND_LIST}-plan" in session.plans
    assert "plan-mode" not in session.plans
    shown_to_client(session, send)
    new_session(RecordingSend()).restore(session.snapshot())


async def test_a_second_sessions_list_goes_when_it_empties(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    first, second = ClaudeCode(), ClaudeCode(claude=SECOND)
    await fire(hooks, first.create("First's task"))
    await fire(hooks, first.update("1", status="deleted"))
    await fire(hooks, second.create("Second's task"))
    await fire(hooks, second.update("1", status="deleted"))
    # The session's own list may be empty; another session's list is removed once empty.
    assert list(session.plans) == ["main"]
    await fire(hooks, second.create("Again"))
    await fire(hooks, second.list() | {"tool_response": {"tasks": []}})
    assert list(session.plans) == ["main"]
    # And it stays while it has tasks, after its query ended: a `resume` continues it.
    await fire(hooks, second.create("Kept"))
    await fire(hooks, base("Stop", claude=SECOND) | {"stop_hook_active": False})
    assert tasks_of(session, SECOND_LIST) == {"3": ("Kept", "pending")}


async def test_concurrent_queries_each_see_their_own_tasks(session: PlanSession) -> None:
    # Two queries at once: their hooks interleave over the same PlanSession.
    hooks = plan_hooks(session)
    codes = [ClaudeCode(), ClaudeCode(claude=SECOND), ClaudeCode(claude=THIRD)]
    creates = [code.create(f"{n} step {i}") for i in range(4) for n, code in enumerate(codes)]
    await asyncio.gather(*(fire(hooks, data) for data in creates))
    updates = [code.update(str(i), status="completed") for i in (1, 3) for code in codes[1:]]
    deletes = [codes[0].update("2", status="deleted")]
    listings = [code.list() for code in codes]
    await asyncio.gather(*(fire(hooks, data) for data in [*updates, *deletes, *listings]))
    lists = ["main", SECOND_LIST, "claude-e3f4a5b6"]
    for code, plan_id in zip(codes, lists, strict=True):
        assert tasks_of(session, plan_id) == {
            i: (t.subject, t.status) for i, t in code.tasks.items()
        }
    assert set(session.plans) == set(lists)
    new_session(RecordingSend()).restore(session.snapshot())


async def test_each_sessions_subagents_have_plans_of_their_own(
    session: PlanSession, send: RecordingSend
) -> None:
    hooks = plan_hooks(session)
    first, second = ClaudeCode(), ClaudeCode(claude=SECOND)
    # The same agent id in both sessions (ids are only unique within one).
    await fire(hooks, first.create("First's", agent=SUBAGENT))
    await fire(hooks, second.create("Second's main"))
    await fire(hooks, second.create("Second's", agent=SUBAGENT))
    await fire(hooks, second.update("1", status="in_progress"))
    mine, theirs = f"agent-{SUBAGENT}", f"{SECOND_LIST}-agent-{SUBAGENT}"
    assert tasks_of(session, mine) == {"1": ("First's", "pending")}
    assert tasks_of(session, theirs) == {"2": ("Second's", "pending")}
    assert tasks_of(session, SECOND_LIST) == {"1": ("Second's main", "in_progress")}
    # The second session's TaskList leaves its subagent's task to the subagent's list.
    await fire(hooks, second.list())
    assert list(tasks_of(session, SECOND_LIST)) == ["1"]
    assert "main" not in session.plans  # the first session's main agent made no list
    # Its subagent's approved plan, then its stop: only the second session's plans go.
    approved = exit_plan_mode("# Sub plan") | {"session_id": SECOND, "agent_id": SUBAGENT}
    await fire(hooks, approved)
    assert f"{theirs}-plan" in session.plans
    shown_to_client(session, send)
    await fire(hooks, stopped(SUBAGENT, claude=SECOND))
    assert theirs not in session.plans
    assert f"{theirs}-plan" not in session.plans
    assert mine in session.plans
    await fire(hooks, stopped(SUBAGENT))
    assert set(session.plans) == {SECOND_LIST}
    # A stop from a session never seen removes nothing.
    await fire(hooks, stopped(SUBAGENT, claude=THIRD))
    assert set(session.plans) == {SECOND_LIST}
    shown_to_client(session, send)


async def test_a_new_session_takes_the_place_of_the_least_recently_active(
    send: RecordingSend, caplog: pytest.LogCaptureFixture
) -> None:
    session = new_session(send, limits=Limits(max_plans=4))
    hooks = plan_hooks(session)
    first = ClaudeCode()
    await fire(hooks, first.create("First's"))
    others = [ClaudeCode(claude=f"session-{n}") for n in range(200)]
    await fire(hooks, others[0].create("Theirs", agent=SUBAGENT))
    await fire(hooks, others[0].create("Theirs"))
    await fire(hooks, others[1].create("Theirs"))
    assert len(session.plans) == 4
    await fire(hooks, others[0].list())  # the most recently active now
    caplog.set_level(logging.INFO, logger="llm_plans")
    await fire(hooks, others[2].create("Theirs"))
    # The plans were full: the least recently active session (1) gave up its place.
    assert "least recently active" in caplog.text
    lists = [p for p in session.plans if p != "main" and "-agent-" not in p]
    assert [tasks_of(session, p) for p in lists] == [
        {"2": ("Theirs", "pending")},
        {"1": ("Theirs", "pending")},
    ]
    assert len(session.plans) == 4
    # However many sessions come, the first one's list stays and the plans stay bounded.
    for code in others[3:]:
        await fire(hooks, code.create("Theirs"))
        assert len(session.plans) <= 4
    assert tasks_of(session, "main") == {"1": ("First's", "pending")}
    # One that comes back starts again: its next TaskList resyncs its whole list in.
    await fire(hooks, others[0].list())
    assert tasks_of(session, "main") == {"1": ("First's", "pending")}
    assert {"1": ("Theirs", "pending"), "2": ("Theirs", "pending")} in [
        tasks_of(session, p) for p in session.plans
    ]
    shown_to_client(session, send)


def test_the_sessions_kept_apart_are_bounded() -> None:
    sessions = Sessions(kept=3)
    assert sessions.enter("first") == (None, True, [])
    entered = [sessions.enter(f"other-{n}") for n in range(1000)]
    assert all(e is not None and e.new for e in entered)
    assert len(sessions.others) == 3
    assert sessions.enter("first") == (None, False, [])
    assert sessions.find("other-999") is not None
    assert sessions.find("other-0") is None  # forgotten: it would start again


@pytest.mark.parametrize("claude", [None, 7, "", ["x"], {"id": "x"}])
async def test_a_hook_without_a_session_id_mirrors_nothing(
    session: PlanSession, claude: Any, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("First's"))
    caplog.set_level(logging.INFO, logger="llm_plans")
    for data in (ClaudeCode().create("Whose?"), ClaudeCode().update("1", status="completed")):
        data["session_id"] = claude
        if claude is None:
            del data["session_id"]
        assert await fire(hooks, data) == [{}]
    assert tasks_of(session, "main") == {"1": ("First's", "pending")}
    assert list(session.plans) == ["main"]
    assert "without a session_id" in caplog.text
    assert await fire(hooks, stopped(SUBAGENT) | {"session_id": claude}) == [{}]


async def test_odd_or_huge_session_ids_stay_apart(session: PlanSession) -> None:
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("First's"))
    huge = "s" * 1_000_000
    odd = [
        huge,
        huge + "t",  # the same start
        "9c0d1e2f-0000-4000-8000-000000000000",  # the same first digits as SECOND
        SECOND,
        "a\nb\x00\ud800",
        "claude-9c0d1e2f",
    ]
    for n, claude in enumerate(odd):
        code = ClaudeCode(claude=claude)
        await fire(hooks, code.create(f"Task of {n}", agent=SUBAGENT))
        await fire(hooks, code.create(f"Task of {n}"))
    lists = [p for p in session.plans if p != "main" and "-agent-" not in p]
    assert len(lists) == len(odd)
    assert sorted(subject for p in lists for subject, _ in tasks_of(session, p).values()) == [
        f"Task of {n}" for n in range(len(odd))
    ]
    subagents = [p for p in session.plans if "-agent-" in p]
    assert sorted(tasks_of(session, p)["1"][0] for p in subagents) == sorted(
        f"Task of {n}" for n in range(len(odd))
    )
    assert all(len(i) <= session.limits.max_id_length for i in session.plans)
    new_session(RecordingSend()).restore(session.snapshot())


@pytest.mark.parametrize("agent", ["x" * 24, "x" * 25, "a4f1c9e2b7d03568a4f1c9e2"])
async def test_another_sessions_subagent_ids_fit_a_plan_id(
    session: PlanSession, agent: str
) -> None:
    hooks = plan_hooks(session)
    await fire(hooks, ClaudeCode().create("First's"))
    approved = exit_plan_mode("# Sub plan") | {"session_id": SECOND, "agent_id": agent}
    await fire(hooks, approved)
    [plan_id] = [p for p in session.plans if p != "main"]
    assert plan_id.startswith(f"{SECOND_LIST}-agent-")
    assert plan_id.endswith("-plan")
    assert (agent in plan_id) == (len(agent) <= 24)
    assert len(plan_id) <= session.limits.max_id_length


# ---- every sequence -------------------------------------------------------------------------

SUBAGENTS = ["a1", "a2"]
AGENTS: list[str | None] = [None, *SUBAGENTS]


class MirrorMachine(RuleBasedStateMachine):
    """Claude Code's task list and a session mirroring it through the hooks, for any
    sequence of calls by the main agent and two subagents."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.send = RecordingSend()
        self.session = self.new(self.send, on_commit=self.restores)
        self.hooks = plan_hooks(self.session)
        self.code = ClaudeCode()
        self.created: dict[str | None, set[str]] = {a: set() for a in AGENTS}

    def new(self, send: RecordingSend, **kwargs: Any) -> PlanSession:
        return new_session(send, **kwargs)

    def held(self, agent: str) -> dict[str, tuple[str, str]]:
        """What a subagent's list holds."""
        return tasks_of(self.session, f"agent-{agent}")

    def teardown(self) -> None:
        self.loop.close()

    @staticmethod
    def restores(session: PlanSession) -> None:
        # Every state a commit saves restores (an empty list is only the session's own).
        PlanSession(RecordingSend(), session_id="sess_1", dialects=DIALECTS).restore(
            session.snapshot()
        )

    def run(self, data: dict[str, Any]) -> None:
        assert self.loop.run_until_complete(fire(self.hooks, data)) == [{}]

    @rule(agent=st.sampled_from(AGENTS), subject=st.sampled_from(["Fix", "Test", "Docs"]))
    def create(self, agent: str | None, subject: str) -> None:
        data = self.code.create(subject, agent=agent)
        self.created[agent].add(data["tool_response"]["task"]["id"])
        self.run(data)

    @rule(
        agent=st.sampled_from(AGENTS),
        number=st.integers(1, 12),
        status=st.sampled_from(["pending", "in_progress", "completed", "deleted"]),
        subject=st.none() | st.sampled_from(["Renamed", "Fix"]),
    )
    def update(self, agent: str | None, number: int, status: str, subject: str | None) -> None:
        changes: dict[str, Any] = {"status": status}
        if subject is not None:
            changes["subject"] = subject
        self.run(self.code.update(str(number), agent, **changes))

    @rule(agent=st.sampled_from(AGENTS))
    def listing(self, agent: str | None) -> None:
        self.run(self.code.list(agent))
        if agent is None:
            held = {i for a in SUBAGENTS for i in self.held(a)}
            assert tasks_of(self.session, "main") == {
                i: (t.subject, t.status) for i, t in self.code.tasks.items() if i not in held
            }
        else:
            mine = self.held(agent)
            assert set(mine) <= set(self.code.tasks)
            for i, shown in mine.items():
                task = self.code.tasks[i]
                assert shown == (task.subject, task.status)

    @rule(agent=st.sampled_from(AGENTS), number=st.integers(1, 12))
    def get(self, agent: str | None, number: int) -> None:
        self.run(self.code.get(str(number), agent))

    @rule(agent=st.sampled_from(SUBAGENTS))
    def stop(self, agent: str) -> None:
        self.run(stopped(agent))
        assert self.held(agent) == {}
        self.created[agent] = set()

    @rule(plan=st.sampled_from(["# A", "# B\n\n1. step"]))
    def approve(self, plan: str) -> None:
        self.run(exit_plan_mode(plan))
        assert self.session.plans["plan-mode"].content == plan  # type: ignore[union-attr]

    @invariant()
    def subagents_hold_only_their_own_tasks(self) -> None:
        for agent in SUBAGENTS:
            assert set(self.held(agent)) <= self.created[agent]
        for plan_id, plan in self.session.plans.items():
            if plan_id != "main" and plan.type == "items":
                assert plan.entries

    @invariant()
    def the_client_shows_the_session(self) -> None:
        shown_to_client(self.session, self.send)


TestMirror = MirrorMachine.TestCase


class ChildMirrorMachine(MirrorMachine):
    """The same, with a client that takes subagent sessions: each subagent's list is the own
    list of its child session, and every session shows its own plans."""

    def new(self, send: RecordingSend, **kwargs: Any) -> PlanSession:
        return taking(send, **kwargs)

    def held(self, agent: str) -> dict[str, tuple[str, str]]:
        child = self.session.subagents.get(f"sess_1/agent-{agent}")
        return {} if child is None else tasks_of(child, "main")

    @invariant()
    def the_client_shows_the_session(self) -> None:
        shown_in_each_session(self.session, self.send)


TestChildMirror = ChildMirrorMachine.TestCase


# ---- the real Claude Code -------------------------------------------------------------------

SUBAGENT_MARK = "SUBAGENT:"
PLAN_V1 = "# Plan\n\n1. Rewrite the parser"
PLAN_V2 = "# Plan\n\n1. Reproduce the bug\n2. Fix the tokenizer"
_PLAN_FILE = re.compile(r"(/[^\"\s\\]*/\.claude/plans/[A-Za-z0-9_.-]+\.md)")


class ClaudeCodeScript(ScriptedAPI):
    """The main conversation's steps, by its tool results so far; a subagent's conversation
    (its prompt carries `SUBAGENT_MARK`) gets steps of its own. Plan mode's plan file path,
    which Claude Code tells the model in a reminder, is read from the requests."""

    def __init__(self) -> None:
        super().__init__("ExitPlanMode", [])
        self.plan_file: str | None = None
        self.main: list[dict[str, Any]] = []
        self.sub: list[dict[str, Any]] = []

    def script(self) -> list[Step]:
        def write(content: str) -> Step:
            given = {"file_path": self.plan_file, "content": content}
            return [(f"toolu_w{len(content)}", "Write", json.dumps(given))]

        def call(use_id: str, tool: str, given: dict[str, Any]) -> Step:
            return [(use_id, tool, json.dumps(given))]

        return [
            write(PLAN_V1),
            call("toolu_p1", "ExitPlanMode", {}),  # declined by the client
            write(PLAN_V2),
            call("toolu_p2", "ExitPlanMode", {}),  # approved
            call("toolu_c1", "TaskCreate", {"subject": "Reproduce", "description": "Run it"}),
            call("toolu_c2", "TaskCreate", {"subject": "Fix the tokenizer", "description": "x"}),
            call("toolu_u1", "TaskUpdate", {"taskId": "1", "status": "in_progress"}),
            call(
                "toolu_a1",
                "Agent",
                {
                    "description": "Explore",
                    "prompt": f"{SUBAGENT_MARK} explore the parser",
                    "subagent_type": "general-purpose",
                    "run_in_background": False,  # its run ends before the main one goes on
                },
            ),
            call("toolu_u2", "TaskUpdate", {"taskId": "1", "status": "completed"}),
            call("toolu_l1", "TaskList", {}),
            "Fixed.",
        ]

    def answer(self, body: dict[str, Any]) -> bytes:
        text = json.dumps(body)
        found = _PLAN_FILE.search(text)
        if found and self.plan_file is None:
            self.plan_file = found.group(1)
        messages = body.get("messages", [])
        done = sum(
            block.get("type") == "tool_result"
            for m in messages
            if isinstance(m.get("content"), list)
            for block in m["content"]
        )
        if messages and SUBAGENT_MARK in json.dumps(messages[0]):
            self.sub.append(body)
            sub_steps: list[Step] = [
                [("toolu_s1", "TaskCreate", json.dumps({"subject": "Read", "description": "r"}))],
                "Explored.",
            ]
            step = sub_steps[min(done, 1)]
        elif "TaskCreate" in [t.get("name") for t in body.get("tools", [])]:
            self.main.append(body)
            steps = self.script()
            step = steps[min(done, len(steps) - 1)]
        else:
            return text_stream("ok")  # Claude Code's own side requests
        return text_stream(step) if isinstance(step, str) else message_stream(step)


class ApprovingClient(PipeClient):
    """An ACP client that declines the first plan approval and allows everything else."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[Any] = []

    async def request_permission(self, **kwargs: Any) -> Any:
        tool_call = kwargs["tool_call"]
        self.asked.append(tool_call)
        plans = [t for t in self.asked if "plan" in (t.title or "").lower()]
        declined = plans and plans[0] is tool_call
        choice = "reject" if declined else "allow"
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )


@pytest.mark.parametrize("caps", [{"plan": {}}, {}, {"plan": {}, "subagents": {}}])
async def test_the_bundled_claude_code_with_tasks_a_subagent_and_a_plan(
    caps: dict[str, Any], tmp_path: Path
) -> None:
    api = ClaudeCodeScript()
    client = ApprovingClient()
    env = {
        "ANTHROPIC_BASE_URL": "",
        "ANTHROPIC_API_KEY": "test-key",
        "HOME": str(tmp_path),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "ENABLE_TOOL_SEARCH": "false",  # every tool offered up front, as the script calls them
        "CLAUDE_PERMISSION_MODE": "plan",
    }
    with serving(api) as base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
        _, stop = await run_example("claude_hooks_agent", caps, env=env, client=client)
    assert stop == "end_turn"
    assert api.plan_file is not None, "Claude Code did not name its plan file"
    # What Claude Code really offers in an SDK session: its task tools, not TodoWrite (to a
    # subagent run in the foreground too).
    offered = {t["name"] for t in api.main[0]["tools"]}
    assert {"TaskCreate", "TaskUpdate", "TaskList", "TaskGet"} <= offered
    assert "TodoWrite" not in offered
    assert "TaskCreate" in {t["name"] for t in api.sub[0]["tools"]}
    form = "schema" if caps else "legacy"
    plans = [u for u in client.updates if u["sessionUpdate"].startswith("plan")]
    for params in client.raw:
        if params["update"]["sessionUpdate"].startswith("plan"):
            check_compliant(form, params)
    if not caps:
        # The legacy list: the approved plan's lines, then the tasks, which say whose they are.
        assert [e["content"] for e in plans[-1]["entries"]] == [
            "Reproduce the bug",
            "Fix the tokenizer",
            "[main] Reproduce",
            "[main] Fix the tokenizer",
            "[main] Read",
        ]
        return
    if "subagents" in caps:
        _check_the_subagents_child_session(client)
        plans = [p["update"] for p in client.raw if p["sessionId"] == "sess_1"]
        plans = [u for u in plans if u["sessionUpdate"].startswith("plan")]
    else:
        _check_the_subagents_own_plans(plans)
    view = ClientView(form).apply_all(plans)
    assert view.plans["plan-mode"] == {
        "planId": "plan-mode",
        "type": "markdown",
        "content": PLAN_V2,
    }
    # The main TaskList resynced the list with Claude Code's: the task the stopped subagent
    # left in the shared list is the main list's now.
    main = view.plans["main"]["entries"]
    assert [(e["content"], e["status"]) for e in main] == [
        ("Reproduce", "completed"),
        ("Fix the tokenizer", "pending"),
        ("Read", "pending"),
    ]
    assert [e["_meta"]["llm_plans"]["taskId"] for e in main] == ["1", "2", "3"]
    assert set(view.plans) == {"plan-mode", "main"}
    # The declined plan never reached the client.
    assert PLAN_V1 not in json.dumps(client.updates)
    assert [t.raw_input["plan"] for t in client.asked] == [PLAN_V1, PLAN_V2]


def _check_the_subagents_child_session(client: PipeClient) -> None:
    """The subagent was a child session: announced on the parent before anything of it,
    titled with its agent type; its task (with Claude Code's shared numbering) was its own
    list's, never the parent's, and left the client's view when it stopped, idle."""
    [child] = {p["sessionId"] for p in client.raw} - {"sess_1"}
    assert child.startswith("sess_1/agent-")
    mine = [n for n, p in enumerate(client.raw) if p["sessionId"] == child]
    about = [
        (n, p["update"])
        for n, p in enumerate(client.raw)
        if p["update"]["sessionUpdate"] == "subagent_update"
    ]
    assert about[0] == (
        about[0][0],
        {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "title": "general-purpose",
            "state": {"state": "running"},
        },
    )
    assert about[0][0] < mine[0]
    assert about[-1][1] == {
        "sessionUpdate": "subagent_update",
        "sessionId": child,
        "state": {"state": "idle"},
    }
    assert mine[-1] < about[-1][0]
    updates = [client.raw[n]["update"] for n in mine]
    for n in mine:
        check_compliant("schema", client.raw[n])
    assert updates[0]["plan"]["planId"] == "main"
    assert [e["content"] for e in updates[0]["plan"]["entries"]] == ["Read"]
    assert updates[0]["plan"]["entries"][0]["_meta"]["llm_plans"]["taskId"] == "3"
    assert updates[-1] == {"sessionUpdate": "plan_removed", "planId": "main"}
    assert ClientView("schema").apply_all(updates).plans == {}
    # The parent's list never held the subagent's task while it ran.
    stopped_at = about[-1][0]
    before = [p["update"] for p in client.raw[:stopped_at] if p["sessionId"] == "sess_1"]
    assert all(
        e["content"] != "Read"
        for u in before
        if u["sessionUpdate"] == "plan_update"
        for e in u["plan"].get("entries", [])
    )


def _check_the_subagents_own_plans(plans: list[dict[str, Any]]) -> None:
    # The subagent's task went to a plan of its own (with Claude Code's shared numbering),
    # never the main list, and the plan went when the subagent stopped.
    [mine] = {u["planId"] for u in plans if u["sessionUpdate"] == "plan_removed"}
    assert mine.startswith("agent-")
    shown = [u for u in plans if u.get("plan", {}).get("planId") == mine]
    assert [e["content"] for e in shown[0]["plan"]["entries"]] == ["Read"]
    assert shown[0]["plan"]["entries"][0]["_meta"]["llm_plans"]["taskId"] == "3"
    removed = plans.index({"sessionUpdate": "plan_removed", "planId": mine})
    before = [u for u in plans[:removed] if u.get("plan", {}).get("planId") == "main"]
    assert all(e["content"] != "Read" for u in before for e in u["plan"]["entries"])


async def test_claude_codes_long_texts_are_shown_cut_not_dropped(
    session: PlanSession, send: RecordingSend, caplog: pytest.LogCaptureFixture
) -> None:
    """Claude Code keeps texts longer than a step may be: the mirror still shows the task,
    its status and the approved plan, with the texts cut, and says so in a log line."""
    hooks = plan_hooks(session)
    code = ClaudeCode()
    width = session.limits.max_entry_chars
    caplog.set_level(logging.INFO, logger="llm_plans")
    await fire(hooks, code.create("Refactor", "D" * (width + 500)))
    await fire(hooks, code.update("1", status="in_progress", description="x" * (width + 1)))
    await fire(hooks, code.update("1", metadata={"k": "v" * (width + 1)}))
    assert tasks_of(session, "main") == {"1": ("Refactor", "in_progress")}
    [entry] = session.plans["main"].entries  # type: ignore[union-attr]
    assert entry.meta is not None
    assert len(entry.meta["llm_plans"]["description"]) == width
    assert "metadata" not in entry.meta["llm_plans"]
    plan = "# The plan\n" + "word " * (session.limits.max_markdown_chars // 4)
    await fire(hooks, post("ExitPlanMode", {"plan": plan}, {"plan": plan, "isAgent": False}))
    shown = session.plans["plan-mode"]
    assert isinstance(shown, MarkdownPlan)
    assert len(shown.content) == session.limits.max_markdown_chars
    assert "shown cut" in caplog.text
    shown_to_client(session, send)


async def test_previews_leave_a_subagents_built_in_list_to_the_hooks(send: RecordingSend) -> None:
    """A subagent's TodoWrite streams under its parent's tool use: it writes a list of its
    own once run (the hooks mirror it), so previews never show it over the main list."""
    from claude_agent_sdk.types import StreamEvent

    from llm_plans.integrations.claude_agent_sdk import PlanPreviews

    session = new_session(send, stream_interval=0)
    todo = {"content": "main step", "status": "in_progress", "activeForm": "Working"}
    await session.call("TodoWrite", {"todos": [todo]})
    sent = len(send.sent)
    previews = PlanPreviews(session)
    text = json.dumps({"todos": [{"content": "sub", "status": "pending", "activeForm": "S"}] * 2})
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_sub", "name": "TodoWrite"},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": text[at : at + 10]},
            }
            for at in range(0, len(text), 10)
        ),
        {"type": "content_block_stop", "index": 0},
    ]
    for event in events:
        await previews.on_message(
            StreamEvent(uuid="u", session_id="s", event=event, parent_tool_use_id="toolu_task")
        )
    assert len(send.sent) == sent
    await previews.aclose()


CLAUDE_SESSIONS = [CLAUDE_SESSION, SECOND, THIRD]


class SessionsMachine(RuleBasedStateMachine):
    """Two or three Claude Code sessions, each with a task list of its own (numbered from 1),
    their calls interleaved on one session: each session's mirrored list is what its own task
    list holds."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.send = RecordingSend()
        self.session = new_session(self.send)
        self.hooks = plan_hooks(self.session)
        self.codes = {claude: ClaudeCode(claude=claude) for claude in CLAUDE_SESSIONS}
        self.lists: dict[str, str] = {}  # the first session seen keeps the session's list

    def teardown(self) -> None:
        self.loop.close()

    def run(self, *calls: dict[str, Any]) -> None:
        for data in calls:
            claude = data["session_id"]
            self.lists.setdefault(claude, "main" if not self.lists else f"claude-{claude[:8]}")

        # Calls of different sessions at once, as concurrent queries' hooks come.
        async def together() -> list[list[Any]]:
            return await asyncio.gather(*(fire(self.hooks, data) for data in calls))

        outputs = self.loop.run_until_complete(together())
        assert outputs == [[{}]] * len(calls)

    @rule(
        claude=st.sampled_from(CLAUDE_SESSIONS),
        subject=st.sampled_from(["Fix", "Test", "Docs"]),
    )
    def create(self, claude: str, subject: str) -> None:
        self.run(self.codes[claude].create(subject))

    @rule(
        claude=st.sampled_from(CLAUDE_SESSIONS),
        number=st.integers(1, 6),
        status=st.sampled_from(["pending", "in_progress", "completed", "deleted"]),
        subject=st.none() | st.sampled_from(["Renamed", "Fix"]),
    )
    def update(self, claude: str, number: int, status: str, subject: str | None) -> None:
        changes: dict[str, Any] = {"status": status}
        if subject is not None:
            changes["subject"] = subject
        self.run(self.codes[claude].update(str(number), **changes))

    @rule(claude=st.sampled_from(CLAUDE_SESSIONS))
    def listing(self, claude: str) -> None:
        self.run(self.codes[claude].list())

    @rule(claude=st.sampled_from(CLAUDE_SESSIONS), number=st.integers(1, 6))
    def get(self, claude: str, number: int) -> None:
        self.run(self.codes[claude].get(str(number)))

    @rule(
        pair=st.permutations(CLAUDE_SESSIONS).map(lambda order: order[:2]),
        number=st.integers(1, 6),
        status=st.sampled_from(["in_progress", "completed", "deleted"]),
    )
    def concurrently(self, pair: list[str], number: int, status: str) -> None:
        # Two sessions act on "their" task of the same number at once.
        first, second = (self.codes[claude] for claude in pair)
        self.run(first.create("Both"), second.update(str(number), status=status))

    @invariant()
    def each_session_sees_its_own_tasks(self) -> None:
        for claude, plan_id in self.lists.items():
            expected = {i: (t.subject, t.status) for i, t in self.codes[claude].tasks.items()}
            assert tasks_of(self.session, plan_id) == expected, claude
        assert set(self.session.plans) <= set(self.lists.values())

    @invariant()
    def the_client_shows_the_session(self) -> None:
        shown_to_client(self.session, self.send)


TestSessions = SessionsMachine.TestCase


class TwoQueriesScript(ScriptedAPI):
    """Each query creates a task named after its prompt, then completes its task 1."""

    def __init__(self) -> None:
        super().__init__("TaskCreate", [])

    def answer(self, body: dict[str, Any]) -> bytes:
        if "TaskCreate" not in [t.get("name") for t in body.get("tools", [])]:
            return text_stream("ok")
        prompt = json.dumps(body["messages"][0])
        who = "first" if "first query" in prompt else "second"
        self.steps = [
            [(f"toolu_{who}_c", "TaskCreate", json.dumps({"subject": f"{who} task"}))],
            [(f"toolu_{who}_u", "TaskUpdate", json.dumps({"taskId": "1", "status": "completed"}))],
            "Done.",
        ]
        return super().answer(body)


async def test_the_bundled_claude_code_with_two_concurrent_queries(tmp_path: Path) -> None:
    """Two `query()`s at once on one PlanSession: two Claude Code sessions, each numbering
    its tasks from 1; each list shows its own task, completed by its own update."""
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    from llm_plans.integrations.claude_agent_sdk import BUILTIN_PLAN_TOOLS

    send = RecordingSend()
    session = new_session(send)
    hooks = plan_hooks(session)
    api = TwoQueriesScript()
    with serving(api) as base_url:
        env = {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "HOME": str(tmp_path),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "ENABLE_TOOL_SEARCH": "false",
        }

        async def run(text: str) -> str:
            options = ClaudeAgentOptions(
                cwd=str(tmp_path),
                env=env,
                hooks=hooks,
                allowed_tools=list(BUILTIN_PLAN_TOOLS),
            )
            claude = ""
            async for message in query(prompt=text, options=options):
                if isinstance(message, ResultMessage):
                    claude = message.session_id
            return claude

        claudes = await asyncio.gather(run("the first query"), run("the second query"))
    assert len(set(claudes)) == 2
    lists = {plan_id: tasks_of(session, plan_id) for plan_id in session.plans}
    assert sorted(lists.values(), key=str) == [
        {"1": ("first task", "completed")},
        {"1": ("second task", "completed")},
    ]
    # The first session seen has the session's own list; the other one its own by its id.
    other = next(c for c in claudes if f"claude-{c[:8]}" in lists)
    assert set(lists) == {"main", f"claude-{other[:8]}"}
    shown_to_client(session, send)
