"""Claude Code's own plan tools mirrored into a session: `plan_hooks(session)`, public as
`llm_plans.integrations.claude_agent_sdk.plan_hooks`."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

try:
    from claude_agent_sdk import HookContext, HookMatcher
    from claude_agent_sdk.types import HookEvent, HookInput, HookJSONOutput
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[claude-agent-sdk]"'
    ) from missing

from .._errors import ConfigurationError
from .._limits import Limits
from .._session import PlanSession
from ._claude_scope import PLAN_MODE_ID, Scope, Task
from ._claude_sessions import Sessions

__all__ = ["PLAN_MODE_ID", "plan_hooks"]

_logger = logging.getLogger("llm_plans")
_TASKS = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
_MIRRORED = ("TodoWrite", *_TASKS, "ExitPlanMode")
_STATUSES = ("pending", "in_progress", "completed")
# Tool use ids already mirrored, kept to apply a hook delivered twice once.
_SEEN_KEPT = 1024

Hook = Callable[[HookInput, str | None, HookContext], Awaitable[HookJSONOutput]]


def plan_hooks(
    session: PlanSession, *, keep_subagent_plans: bool = False
) -> dict[HookEvent, list[HookMatcher]]:
    """Hooks for `ClaudeAgentOptions(hooks=...)` that mirror Claude Code's own plan tools
    (`TaskCreate`, `TaskUpdate`, `TaskList`, `TaskGet`, `TodoWrite`, `ExitPlanMode`) into
    `session`.

    The model keeps the tools it was trained on; Claude Code runs them, and the hooks tell the
    session what happened, through `session.call` with the same dialect tools, so every rule,
    limit and notification form of the session applies.

    - The session must accept `claude_tasks` and/or `claude_todos` (the tools it accepts are the
      ones mirrored) and `llm_plans`: an approved plan and a subagent's list are plans of their
      own, written and removed with our tools.
    - Hooks never block or edit a call: each returns `{}`. A call is mirrored at `PostToolUse`,
      once Claude Code has run it, and only then; a call that fails (`PostToolUseFailure`) or is
      denied never reaches the client, so there is nothing to take back.
    - Task ids are Claude Code's: a `TaskCreate` is mirrored with the id its `tool_response`
      gives. A `TaskList` result resyncs the list with what Claude Code says exists (tasks it no
      longer lists are deleted, changed subjects, statuses and owners follow, unknown tasks are
      added to the main list); a `TaskGet` result does the same for its one task. An update of a
      task the mirror does not hold is not an error: it is left for the next resync, with one log
      line. A mirrored call the session rejects (a limit) is logged; Claude Code's call stands.
    - `ExitPlanMode`, once approved, becomes (or replaces) the markdown plan `"plan-mode"`; a
      declined one runs no tool and leaves nothing.
    - Calls made inside a subagent (their hook input carries its `agent_id`) go to plans of its
      own: its list `"agent-<id>"` and its approved plan `"agent-<id>-plan"`, never the main
      ones. They are removed when the subagent stops (`SubagentStop`), as Claude Code drops a
      subagent's todos, unless `keep_subagent_plans=True`. A subagent's list that becomes empty
      is removed (only the session's own list may be an empty plan). A subagent's `TaskList` only
      resyncs the tasks its list holds: Claude Code's task list is shared, the other tasks are
      not its own.
    - Claude Code sessions are kept apart by their `session_id` (each has a task list of its
      own, numbered from 1): the first seen writes the plans above; another one (a `query()`
      without `resume`, a concurrent query) writes its own, `"claude-<key>"` for its list,
      `"claude-<key>-plan"` and `"claude-<key>-agent-<id>"` (`<key>`: the first 8 hex digits
      of its session id). Its list stays when its query ends (a `resume` continues it) and
      is removed once it empties, or, when a new session comes with the session's plans full
      (`Limits.max_plans`), if it is the least recently active. At most `max_plans` other
      sessions are kept apart: one forgotten starts a new list if it comes back. A hook input
      without a `session_id` is not mirrored.
    - In SDK sessions Claude Code offers its `Task*` tools (not `TodoWrite`), and only when
      they are allowed: `allowed_tools=list(BUILTIN_PLAN_TOOLS)`.

    Example:
        session = PlanSession(send, session_id="s", dialects=["llm_plans", "claude_tasks"])
        options = ClaudeAgentOptions(hooks=plan_hooks(session))
    """
    tools = [name for name in _MIRRORED[:-1] if session.plan_tool(name) == name]
    if not tools or session.plan_tool("create_plan") != "create_plan":
        raise ConfigurationError(
            "plan_hooks mirrors Claude Code's TaskCreate/TaskUpdate/TaskList/TaskGet and "
            "TodoWrite through the session's claude_tasks and claude_todos tools, and writes "
            "approved plans and subagents' lists with create_plan: create the session with "
            'PlanSession(..., dialects=["llm_plans", "claude_tasks", "claude_todos"]) '
            f"(it takes {', '.join(session.tool_names)})"
        )
    mirror = _Mirror(session, keep_subagent_plans)
    matcher = "|".join([*tools, "ExitPlanMode"])
    return {
        "PostToolUse": [HookMatcher(matcher=matcher, hooks=[_hook(mirror.tool_used)])],
        "PostToolUseFailure": [HookMatcher(matcher=matcher, hooks=[_hook(mirror.tool_failed)])],
        "SubagentStop": [HookMatcher(hooks=[_hook(mirror.subagent_stopped)])],
    }


def _hook(handle: Callable[[Mapping[str, Any]], Awaitable[None]]) -> Hook:
    async def hook(
        data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        given: Any = data
        if not isinstance(given, Mapping):
            return {}
        try:
            await handle(given)
        except Exception:
            # A mirror never stops Claude Code: the next TaskList resyncs what was missed.
            _logger.exception("plan_hooks: mirroring %s failed", given.get("hook_event_name"))
        return {}

    return hook


class _Mirror:
    """What Claude Code's plan tools did, told to one session."""

    def __init__(self, session: PlanSession, keep_subagent_plans: bool) -> None:
        self.session = session
        self.keep_subagent_plans = keep_subagent_plans
        # Each mirrored call reads the session's lists, then writes: one at a time, so that
        # parallel subagents' hooks do not interleave inside a resync.
        self._lock = asyncio.Lock()
        self._seen: dict[str, None] = {}
        # Another Claude session's plans take room among the session's plans: no more of
        # them are kept apart than a session holds plans.
        self._sessions = Sessions(session.limits.max_plans)
        self._refusal = ""  # the last call the session refused, for the log

    # ---- hook events --------------------------------------------------------------------

    async def tool_used(self, data: Mapping[str, Any]) -> None:
        name = data.get("tool_name")
        use_id = data.get("tool_use_id")
        if name != "ExitPlanMode" and (
            name not in _MIRRORED or self.session.plan_tool(name) != name
        ):
            return  # a tool the session does not mirror (its dialect is not on)
        if isinstance(use_id, str):
            if use_id in self._seen:
                return  # delivered again: mirrored once already
            self._seen[use_id] = None
            while len(self._seen) > _SEEN_KEPT:
                del self._seen[next(iter(self._seen))]
        given = data.get("tool_input")
        response = data.get("tool_response")
        args: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        answer: Mapping[str, Any] = response if isinstance(response, Mapping) else {}
        async with self._lock:
            scope = await self._scope(data)
            if scope is None:
                return
            if name == "TodoWrite":
                await self._todo_write(scope, args)
            elif name == "TaskCreate":
                await self._task_create(scope, args, answer)
            elif name == "TaskUpdate":
                await self._task_update(scope, args, answer)
            elif name == "TaskList":
                await self._resync(scope, answer.get("tasks"), complete=True)
            elif name == "TaskGet":
                await self._task_get(scope, args, answer)
            else:
                await self._plan_approved(scope, args, answer)

    async def tool_failed(self, data: Mapping[str, Any]) -> None:
        # Nothing was shown before the tool ran (calls are mirrored once they have run), so
        # a failed or interrupted call has nothing to take back.
        _logger.debug(
            "plan_hooks: %s failed in Claude Code; nothing mirrored: %s",
            data.get("tool_name"),
            data.get("error"),
        )

    async def subagent_stopped(self, data: Mapping[str, Any]) -> None:
        agent_id = data.get("agent_id")
        if self.keep_subagent_plans or not isinstance(agent_id, str) or not agent_id:
            return
        found = self._sessions.find(data.get("session_id"))
        if found is None:
            return  # no session seen has plans of this subagent
        scope = Scope(self.session, agent_id, *found)
        async with self._lock:
            for plan_id in (scope.list_id, scope.plan_id):
                if plan_id in self.session.plans:
                    await self._call(scope, "remove_plan", {"id": plan_id}, ours=True)

    async def _scope(self, data: Mapping[str, Any]) -> Scope | None:
        """Where the calls of the Claude session and agent `data` comes from go, once the
        plans of sessions that give up their place to a new one are removed."""
        entered = self._sessions.enter(data.get("session_id"))
        if entered is None:
            # Which session's tasks its numbers are is unknown: never guessed.
            _logger.info("plan_hooks: a hook input without a session_id; nothing mirrored")
            return None
        for key in entered.forgotten:
            await self._drop_session(key, "more Claude sessions came than a session keeps apart")
        if entered.new and entered.key is not None:
            # A new session's list needs a place: the least recently active sessions' plans
            # give theirs up while the session's plans are full.
            for key in self._sessions.least_recent():
                if len(self.session.plans) < self.session.limits.max_plans:
                    break
                if key != entered.key:
                    await self._drop_session(key, "another Claude session came, plans full")
        return Scope(self.session, data.get("agent_id"), entered.key)

    async def _drop_session(self, key: str, why: str) -> None:
        """Remove the plans of the other Claude session named `key`."""
        own = Scope(self.session, None, key)
        gone = [
            i for i in self.session.plans if i == own.list_id or i.startswith(own.list_id + "-")
        ]
        if gone:
            _logger.info(
                "plan_hooks: %s; the least recently active one's plans (%s) are removed",
                why,
                ", ".join(gone),
            )
        for plan_id in gone:
            await self._call(own, "remove_plan", {"id": plan_id}, ours=True)

    # ---- the tools ----------------------------------------------------------------------

    async def _todo_write(self, scope: Scope, args: Mapping[str, Any]) -> None:
        todos = args.get("todos")
        if scope.removable and isinstance(todos, list) and not todos:
            await self._drop_list(scope)
            return
        await self._call(scope, "TodoWrite", {"todos": todos})

    async def _task_create(
        self, scope: Scope, args: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> None:
        task = answer.get("task")
        task = task if isinstance(task, Mapping) else {}
        task_id = task.get("id")
        if not isinstance(task_id, str):
            _logger.info("plan_hooks: TaskCreate gave no task id; left for the next TaskList")
            return
        if task_id in scope.tasks():
            return
        # As saved: Claude Code may have corrected the call, or a PreToolUse hook changed it.
        subject = _text(task.get("subject")) or _text(args.get("subject"))
        description = _text(task.get("description")) or _text(args.get("description"))
        create: dict[str, Any] = {
            "subject": subject,
            "description": description if description is not None else subject,
        }
        for key in ("activeForm", "metadata"):
            if args.get(key) is not None:
                create[key] = args[key]
        create["taskId"] = task_id
        await self._call(scope, "TaskCreate", create)

    async def _task_update(
        self, scope: Scope, args: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> None:
        if answer.get("success") is not True:
            return  # Claude Code changed nothing (no such task, a hook refused it)
        task_id = args.get("taskId", answer.get("taskId"))
        tasks = scope.tasks()
        if task_id not in tasks:
            _logger.info(
                "plan_hooks: TaskUpdate of task %r, which %s does not hold; left for the next "
                "TaskList",
                task_id,
                scope.list_id,
            )
            return
        if args.get("status") == "deleted" and scope.removable and len(tasks) == 1:
            await self._drop_list(scope)
            return
        update = {
            key: args[key]
            for key in (
                "taskId",
                "subject",
                "description",
                "activeForm",
                "status",
                "owner",
                "metadata",
            )
            if args.get(key) is not None
        }
        for key in ("addBlocks", "addBlockedBy"):
            # Tasks of other lists (the task list is shared) are not this list's to name.
            ids = args.get(key)
            if isinstance(ids, list) and [i for i in ids if i in tasks]:
                update[key] = [i for i in ids if i in tasks]
        if len(update) > 1:  # more than the id: something this list keeps changed
            await self._call(scope, "TaskUpdate", update)

    async def _task_get(
        self, scope: Scope, args: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> None:
        if "task" not in answer:
            return
        task = answer["task"]
        if task is None:  # "Task not found": it no longer exists
            task_id = args.get("taskId")
            if task_id in scope.tasks():
                await self._delete(scope, str(task_id), scope.tasks())
            return
        await self._resync(scope, [task], complete=False)

    async def _plan_approved(
        self, scope: Scope, args: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> None:
        if answer.get("awaitingLeaderApproval") is True:
            return  # sent to a team lead, not approved yet
        # The plan as approved (the user may have edited it), else the one the model sent.
        plan = _text(answer.get("plan")) or _text(args.get("plan"))
        if plan is None or not plan.strip():
            _logger.info("plan_hooks: ExitPlanMode approved without a plan text; nothing shown")
            return
        plan_id = scope.plan_id
        width = self.session.limits.max_markdown_chars
        if len(plan) > width:  # shown cut rather than not at all
            _logger.info("plan_hooks: the approved plan is longer than a plan keeps; shown cut")
            plan = plan[: width - 1] + "\u2026"
        if plan_id in self.session.plans:
            await self._call(
                scope,
                "update_plan",
                {"id": plan_id, "type": "markdown", "content": plan},
                ours=True,
            )
        else:
            await self._call(
                scope,
                "create_plan",
                {"type": "markdown", "id": plan_id, "content": plan},
                ours=True,
            )

    # ---- resync -------------------------------------------------------------------------

    async def _resync(self, scope: Scope, listed: Any, *, complete: bool) -> None:
        """Make the list hold what Claude Code says exists: `complete` when `listed` is every
        task (TaskList), not just some (TaskGet)."""
        if not isinstance(listed, list):
            return
        tasks = {
            t["id"]: t
            for t in listed
            if isinstance(t, Mapping)
            and isinstance(t.get("id"), str)
            and isinstance(t.get("subject"), str)
        }
        held = scope.tasks()
        changed = refused = 0
        if complete:
            for task_id in [i for i in held if i not in tasks]:
                if await self._delete(scope, task_id, held, quiet=True):
                    changed += 1
                else:
                    refused += 1
                held = scope.tasks()
        others = scope.elsewhere() if scope.agent is None else None
        for task_id, task in tasks.items():
            status = task.get("status") if task.get("status") in _STATUSES else None
            owner = _text(task.get("owner")) or None
            if task_id in held:
                mine = held[task_id]
                update: dict[str, Any] = {}
                if task["subject"].strip() and task["subject"] != mine.content:
                    update["subject"] = task["subject"]
                if status is not None and status != mine.status:
                    update["status"] = status
                if owner is not None and owner != mine.owner:
                    update["owner"] = owner
                if not update:
                    continue
                if await self._call(scope, "TaskUpdate", {"taskId": task_id, **update}, quiet=True):
                    changed += 1
                else:
                    refused += 1
            elif others is not None and task_id not in others and task["subject"].strip():
                # A task the main list never saw created (hooks added later, a restart).
                # TaskGet gives a description, TaskList none: none is made up.
                create = {"subject": task["subject"], "description": _text(task.get("description"))}
                if not await self._call(
                    scope, "TaskCreate", {**create, "taskId": task_id}, quiet=True
                ):
                    refused += 1  # a limit (200 tasks, a long subject): one line says so below
                    continue
                changed += 1
                update = {"status": status} if status not in (None, "pending") else {}
                if owner is not None:
                    update["owner"] = owner
                if update:
                    await self._call(scope, "TaskUpdate", {"taskId": task_id, **update}, quiet=True)
        if refused:
            _logger.warning(
                "plan_hooks: %s could not follow %d of Claude Code's tasks: %s",
                scope.list_id,
                refused,
                self._refusal,
            )
        if changed:
            _logger.info(
                "plan_hooks: %s resynced with Claude Code's task list (%d task%s changed)",
                scope.list_id,
                changed,
                "" if changed == 1 else "s",
            )

    async def _delete(
        self, scope: Scope, task_id: str, held: Mapping[str, Task], *, quiet: bool = False
    ) -> bool:
        if scope.removable and len(held) == 1:
            await self._drop_list(scope)
            return True
        deleted = {"taskId": task_id, "status": "deleted"}
        return await self._call(scope, "TaskUpdate", deleted, quiet=quiet)

    # ---- writing ------------------------------------------------------------------------

    async def _drop_list(self, scope: Scope) -> None:
        # Only the session's own list may be an empty plan (a snapshot restores it as such):
        # a subagent's or another Claude session's list that empties is removed.
        if scope.list_id in self.session.plans:
            await self._call(scope, "remove_plan", {"id": scope.list_id}, ours=True)

    async def _call(
        self,
        scope: Scope,
        name: str,
        arguments: dict[str, Any],
        *,
        ours: bool = False,
        quiet: bool = False,
    ) -> bool:
        """Run one call through the session; a refusal is logged (by the caller when
        `quiet`: a resync says once how many it could not follow)."""
        list_id = None if ours else scope.own_list
        if not ours:
            arguments, cut = _fitted(arguments, self.session.limits)
            if cut:
                _logger.info(
                    "plan_hooks: Claude Code's %s was more than %s keeps (%s): shown cut",
                    name,
                    scope.list_id,
                    ", ".join(cut),
                )
        result = await self.session.mirror(name, arguments, list_id=list_id)
        if not result.ok:
            # The rejection's problems, without its first and last lines (meant for a model).
            lines = result.content.splitlines()
            self._refusal = f"{name}: " + " ".join(lines[1:-1] or lines)
            if not quiet:
                _logger.warning(
                    "plan_hooks: %s did not take Claude Code's %s",
                    scope.list_id,
                    self._refusal,
                )
        return result.ok


_TEXTS = ("subject", "description", "activeForm", "owner", "content")


def _fitted(arguments: dict[str, Any], limits: Limits) -> tuple[dict[str, Any], list[str]]:
    """Claude Code's arguments cut to what a plan keeps, and what was cut: a mirror shows
    what Claude Code did (the task, its status) even when its texts are longer than a step
    may be, where a model's own call would be refused to be written again."""
    cut: list[str] = []
    width = limits.max_entry_chars

    def fit(item: dict[str, Any], where: str) -> dict[str, Any]:
        out = dict(item)
        for key in _TEXTS:
            text = out.get(key)
            if isinstance(text, str) and len(text) > width:
                out[key] = text[: width - 1] + "\u2026"
                cut.append(where + key)
        metadata = out.get("metadata")
        if isinstance(metadata, Mapping):
            try:
                size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")))
            except (TypeError, ValueError):
                size = width + 1
            if size > width:
                del out["metadata"]
                cut.append(where + "metadata")
        return out

    fitted = fit(arguments, "")
    todos = fitted.get("todos")
    if isinstance(todos, list):
        if len(todos) > limits.max_entries:
            cut.append(f"todos[{limits.max_entries}:]")
        fitted["todos"] = [
            fit(todo, f"todos[{n}].") if isinstance(todo, dict) else todo
            for n, todo in enumerate(todos[: limits.max_entries])
        ]
    return fitted, cut


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
