"""What Claude Code's plan tools did, told to one session: the hook events `plan_hooks`
hands on, each written through the session's own dialect tools."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from ..._session import PlanSession
from ._fit import fitted, text_of
from ._scope import Scope, Task, title_of
from ._sessions import Sessions

_logger = logging.getLogger("llm_plans")
TASKS = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
MIRRORED = ("TodoWrite", *TASKS, "ExitPlanMode")
_STATUSES = ("pending", "in_progress", "completed")
# Tool use ids already mirrored, kept to apply a hook delivered twice once.
_SEEN_KEPT = 1024


class Mirror:
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
            name not in MIRRORED or self.session.plan_tool(name) != name
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
        if not isinstance(agent_id, str) or not agent_id:
            return
        found = self._sessions.find(data.get("session_id"))
        if found is None:
            return  # no session seen has plans of this subagent
        scope = Scope(self.session, agent_id, *found)
        if self.session.takes_subagents:
            child = self.session.subagents.get(scope.child_id)
            if child is not None:
                async with self._lock:
                    await child.close(keep_plans=self.keep_subagent_plans)
            return
        if self.keep_subagent_plans:
            return
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
        scope = Scope(self.session, data.get("agent_id"), entered.key)
        if scope.agent is not None and self.session.takes_subagents:
            # Announced (by the session) before the first of its plans reaches the client;
            # again as running if it stopped and Claude Code resumed it.
            known = scope.child_id in self.session.subagents
            title = title_of(data.get("agent_type"), scope.agent, known=known)
            scope.into(await self.session.subagent(scope.child_id, title=title))
        return scope

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
        for child in own.children().values():
            await child.close()  # its subagents' sessions: the session's plans went too

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
        subject = text_of(task.get("subject")) or text_of(args.get("subject"))
        description = text_of(task.get("description")) or text_of(args.get("description"))
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
                scope.label,
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
        plan = text_of(answer.get("plan")) or text_of(args.get("plan"))
        if plan is None or not plan.strip():
            _logger.info("plan_hooks: ExitPlanMode approved without a plan text; nothing shown")
            return
        plan_id = scope.plan_id
        width = scope.target.limits.max_markdown_chars
        if len(plan) > width:  # shown cut rather than not at all
            _logger.info("plan_hooks: the approved plan is longer than a plan keeps; shown cut")
            plan = plan[: width - 1] + "\u2026"
        if plan_id in scope.target.plans:
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
            owner = text_of(task.get("owner")) or None
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
                described = text_of(task.get("description"))
                create = {"subject": task["subject"], "description": described}
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
                scope.label,
                refused,
                self._refusal,
            )
        if changed:
            _logger.info(
                "plan_hooks: %s resynced with Claude Code's task list (%d task%s changed)",
                scope.label,
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
        if scope.list_id in scope.target.plans:
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
            arguments, cut = fitted(arguments, scope.target.limits)
            if cut:
                _logger.info(
                    "plan_hooks: Claude Code's %s was more than %s keeps (%s): shown cut",
                    name,
                    scope.label,
                    ", ".join(cut),
                )
        result = await scope.target.mirror(name, arguments, list_id=list_id)
        if not result.ok:
            # The rejection's problems, without its first and last lines (meant for a model).
            lines = result.content.splitlines()
            self._refusal = f"{name}: " + " ".join(lines[1:-1] or lines)
            if not quiet:
                _logger.warning(
                    "plan_hooks: %s did not take Claude Code's %s",
                    scope.label,
                    self._refusal,
                )
        return result.ok
