"""`PlanSession`: plan tool calls in, `session/update` notifications out, for one ACP session."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ._core import results
from ._core.apply import apply
from ._core.builder import Rules, check_id
from ._core.outcome import Applied, Read, Rejected
from ._core.plans import AnyPlan, Book, PlanModels, Stored
from ._core.results import ToolResult
from ._core.snapshot import SkippedPlan, dump, load
from ._core.snapshot import error as snapshot_error
from ._core.tool import DEFAULT_LIST_ID, DEFAULT_PREFIXES, Names
from ._errors import ConfigurationError, StreamError
from ._limits import Limits
from ._lock import SessionLock
from ._streaming.flights import DEFAULT_PREVIEW_BUDGET, Flight, Streams
from ._streaming.preview import grown, preview
from ._wire import forms
from ._wire.flatten import Flattener, ReadText, read_plan_file
from ._wire.forms import Json, WireForm
from ._wire.outbox import Gate, Outbox, Send, is_async, takes_one_argument
from ._wire.subagents import MAX_OPEN, Child, Subagents, check_child_id, check_text
from .dialects import _OURS, _lists_only, _tools_of
from .dialects.llm_plans import CREATE_PLAN
from .providers import parse

__all__ = ["PlanSession", "Send"]

# Editors redraw on every update; ten a second looks live without flooding the pipe.
DEFAULT_STREAM_INTERVAL = 0.1
_logger = logging.getLogger("llm_plans")


class PlanSession:
    """The plans of one ACP session, forwarded to its client in the form the client supports.

    State commits before sending: when `send` fails, the call still counts (the model's
    result says the client was not reached) and the next call re-sends what the client missed.

    Args:
        send: An async function taking one argument, the `session/update` params dict, and
            delivering it to the client (`acp_send(conn)` with the ACP SDK). Awaited for
            every notification; what it raises does not escape a plan call: it becomes the
            result's `failure`.
        session_id: The ACP session id every notification carries.
        client_capabilities: What the client advertised in `initialize` (a dict, the ACP
            SDK's model, or a `ClientCapabilitiesRecorder`), from which the wire form is
            chosen. None: a client that advertised nothing, which gets the legacy form.
        form: The wire form to send (a `WireForm` or its value, such as `"v2"`), overriding
            the one `client_capabilities` and `protocol_version` would choose.
        protocol_version: The `protocolVersion` the client negotiated; 2 or later sends v2.
            None: read from a `ClientCapabilitiesRecorder`, else taken as v1.
        limits: The bounds every call is checked against; None: `Limits()`.
        workspace: The project directory: a file plan's path must lie inside it, symlinks
            resolved. None: any absolute path is accepted.
        discipline: Whether results for items plans add notes when no step, or more than
            one, is in progress (advice for the model, never a rejection).
        read_text: How a file plan's text is read for the wire forms that send it (all
            but the spec documents' draft, which sends the URI): a function from the plan's
            URI to its text, or None when it cannot be read. The default reads local files;
            pass one that asks the client's file system when the file lives there. What it
            returns is held to the bounds a local file is, and what it raises reads as None.
        stream_interval: The least time between two previews of one streamed call, in
            seconds; 0.1 by default, which looks live without flooding the pipe.
        preview_budget: What a streamed call's previews may cost: all previews of one call
            together send at most that many times what the finished call sends, in bytes
            as compact JSON (the ACP SDK's transports), whenever that shows at least as much
            as they did (a plan written out, as creates and replacements are, always does;
            a `changes` call that shortens steps, or a legacy update after other plans went
            away, can end smaller). A long plan then shows in growing steps: a larger budget
            shows steps sooner (lower latency from a step's closing brace to the client), a
            smaller one costs less CPU and bandwidth. At least 1 (with 1 a call shows one
            preview at most); 8 by default. docs/benchmarks.md shows the latency each
            budget buys.
        on_commit: Called with the session after every change is committed and before the
            client hears of it, to persist `snapshot()`, say. What it raises is logged and
            returned as the result's `failure`; the change stands.
        tool_prefixes: The prefixes a tool name may carry and still name a plan tool, as MCP
            hosts add their server's (`mcp__plans__create_plan`); `""` admits the plain
            names. The default admits the plain names and Claude Code's `mcp__plans__`.
        dialects: The dialect, or dialects, whose tools the session takes: `"llm_plans"`
            (ours, the default: `create_plan`, `update_plan`, `remove_plan`),
            `"claude_todos"`, `"claude_tasks"`, `"codex"`, `"write_todos"`, `"cursor"`,
            `"opencode"`, `"vibe"`. Two that define one tool name cannot be combined
            (ConfigurationError).
        list_id: The id of the one items plan a list dialect's tools (`TodoWrite`, Codex's
            `update_plan`, ...) write, `"main"` by default; unused by ours.

    Example:
        session = PlanSession(send, session_id="sess_1", client_capabilities=caps)
        result = await session.call("create_plan", '{"type": "items", "entries": [...]}')
    """

    def __init__(
        self,
        send: Send,
        *,
        session_id: str,
        client_capabilities: Any = None,
        form: WireForm | str | None = None,
        protocol_version: int | None = None,
        limits: Limits | None = None,
        workspace: str | os.PathLike[str] | None = None,
        discipline: bool = True,
        read_text: ReadText = read_plan_file,
        stream_interval: float = DEFAULT_STREAM_INTERVAL,
        preview_budget: float = DEFAULT_PREVIEW_BUDGET,
        on_commit: Callable[[PlanSession], None] | None = None,
        tool_prefixes: Iterable[str] = DEFAULT_PREFIXES,
        dialects: str | Iterable[str] = (_OURS,),
        list_id: str = DEFAULT_LIST_ID,
    ) -> None:
        if not callable(send):
            raise ConfigurationError(
                "send must be an async callable taking the session/update params dict; "
                f"got {type(send).__name__}. With the ACP SDK, use llm_plans.acp_send(conn)."
            )
        if not is_async(send):
            raise ConfigurationError(
                f"send must be an async function (async def send(params): ...); {send!r} is "
                "not. A session awaits each send to learn whether the client was reached. For "
                "a function that returns an awaitable, wrap it: async def send(params): await "
                "f(params). With the ACP SDK, use llm_plans.acp_send(conn)."
            )
        if not takes_one_argument(send):
            raise ConfigurationError(
                f"send must take one argument, the session/update params dict; {send!r} "
                "cannot. With the ACP SDK, use llm_plans.acp_send(conn), not "
                "conn.session_update."
            )
        if type(preview_budget) not in (int, float) or not 1 <= preview_budget < math.inf:
            raise ConfigurationError(
                "preview_budget must be a finite number of at least 1 (times the size of a "
                f"streamed call's final notification); got {preview_budget!r}"
            )
        self.session_id = session_id
        # Read once here: a child session is made with the same (an iterator reads once).
        tool_prefixes = _read_once(tool_prefixes)
        dialects = _read_once(dialects)
        wire_form = (
            forms.form_for(client_capabilities, protocol_version)
            if form is None
            else forms.settled_form(forms.parse_form(form))
        )
        self._tools = _tools_of(dialects)
        limits = limits or Limits()
        lists = any(not tool.plans_by_id for tool in self._tools.values())
        _check_list_id(list_id, limits)
        self._rules = Rules(
            limits,
            Path(workspace) if workspace else None,
            list_id if lists else None,
            lists_only=_lists_only(self._tools),
        )
        flattener = Flattener(self._rules.limits, self._rules.workspace, read_text)
        self._outbox = Outbox(send, session_id, wire_form, flattener)
        # What a child session is made with: the same tools, limits and form as this one.
        self._settings: dict[str, Any] = {
            "form": wire_form,
            "limits": limits,
            "workspace": workspace,
            "discipline": discipline,
            "read_text": read_text,
            "stream_interval": stream_interval,
            "preview_budget": preview_budget,
            "tool_prefixes": tool_prefixes,
            "dialects": dialects,
            "list_id": list_id,
        }
        self._subagents = Subagents(
            send,
            session_id,
            wire_form,
            forms.takes_subagents(client_capabilities, wire_form),
            limits.max_entry_chars,
        )
        self._parent: tuple[PlanSession, Child] | None = None
        self._streams = Streams(preview_budget)
        self._names = Names(self._tools, tool_prefixes)
        self._discipline = discipline
        self._stream_interval = stream_interval
        self._on_commit = on_commit
        self._book = Book()
        self._lock = SessionLock()
        self._flushes: set[asyncio.Task[None]] = set()

    @property
    def form(self) -> WireForm:
        """The wire form this session sends."""
        return self._outbox.form

    @property
    def limits(self) -> Limits:
        """The limits every call on this session is checked against."""
        return self._rules.limits

    @property
    def plans(self) -> Mapping[str, AnyPlan]:
        """Plan id to current plan (typed models), in creation order; a read-only copy, the
        caller's to keep: later calls do not change it, nor it the session."""
        return PlanModels(self._book.plans)

    def plan_tool(self, name: str) -> str | None:
        """The plan tool (`create_plan`, `TodoWrite`, ...) a tool name as the model sent it
        calls, or None.

        Plain names, and those with one of the session's `tool_prefixes`, resolve, for the
        tools of every dialect the session accepts.

        Args:
            name: The tool name as the model sent it, prefix included.
        """
        tool = self._names.resolve(name)
        return None if tool is None else tool.name

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The plan tools this session accepts (of every dialect it was given), plain names."""
        return tuple(self._tools)

    # ---- plain calls ------------------------------------------------------------------------

    @property
    def list_id(self) -> str | None:
        """The plan a list dialect's calls (`TodoWrite`, `TaskCreate`, ...) write; None when
        the session takes only ours."""
        return self._rules.list_id

    async def call(self, name: str, arguments: Any, *, list_id: str | None = None) -> ToolResult:
        """Run one plan tool call.

        Args:
            name: The tool name as the model sent it (a prefix of `tool_prefixes` allowed).
            arguments: The call's arguments: JSON text, UTF-8 bytes or a decoded dict.
            list_id: The plan a list dialect's call writes, in place of the session's own
                list (a subagent's list, kept apart from the main one); ignored by our tools.
                None: the session's `list_id`.
        """
        return await self._call(name, arguments, list_id, mirror=False)

    async def mirror(self, name: str, arguments: Any, *, list_id: str | None = None) -> ToolResult:
        """Apply a plan tool call another agent already ran, as `call` does, taking the ids
        that agent issued: a `TaskCreate`'s `taskId` (Claude Code's own task number), which
        a model's `call` is refused. `plan_hooks` mirrors Claude Code's calls through this.

        Args:
            name: The tool name the other agent ran.
            arguments: Its arguments: JSON text, UTF-8 bytes or a decoded dict.
            list_id: The plan a list dialect's call writes, as for `call`.
        """
        return await self._call(name, arguments, list_id, mirror=True)

    async def _call(
        self, name: str, arguments: Any, list_id: str | None, *, mirror: bool
    ) -> ToolResult:
        tool = self._names.resolve(name)
        rules = replace(self._rules, mirror=True) if mirror else self._rules
        if list_id is not None:
            _check_list_id(list_id, rules.limits)
            if tool is not None and not tool.plans_by_id:  # ours keep theirs (no empty "y")
                rules = replace(rules, list_id=list_id)
        async with self._lock.held():
            if tool is None:
                # Ours too when the session does not take them: the last line names its tools.
                problem = results.Problem("", f"{name!r} is not a plan tool.")
                outcome: Applied | Rejected | Read = Rejected(
                    name if isinstance(name, str) else repr(name),
                    [problem],
                    known=False,
                    plan_tools=self.tool_names,
                )
            else:
                outcome = apply(
                    self._book, tool, arguments, rules, reserved_ids=self._streams.reserved_ids()
                )
            return await self._conclude(outcome, shown=())

    def handles(self, call: Any) -> bool:
        """True when `call` is a call to one of the plan tools.

        Args:
            call: A tool call as an SDK returns it (object or dict), of any API `handle`
                accepts.
        """
        parsed = parse(call)
        return parsed is not None and self.plan_tool(parsed.name) is not None

    async def handle(self, call: Any, *, truncated: bool = False) -> dict[str, Any] | None:
        """Run a tool call as an SDK returns it; its result in that provider's shape.

        Accepts the tool calls of OpenAI chat (and compatible servers), OpenAI Responses and
        Anthropic, as SDK objects or dicts. Returns None for a call to any other tool.

        Args:
            call: The tool call, as the SDK returned it.
            truncated: True for the last call of a response cut by the token limit
                (`finish_reason == "length"`, `stop_reason == "max_tokens"`): it is
                rejected as cut off, and nothing changes.
        """
        parsed = parse(call)
        tool = None if parsed is None else self._names.resolve(parsed.name)
        if parsed is None or tool is None:
            return None
        if truncated:
            problem = results.Problem("", tool.cut_off)
            result = ToolResult(False, Rejected(tool.name, [problem]).text, tool.name)
        else:
            result = await self.call(tool.name, parsed.arguments)
        return parsed.result(result.content, result.ok)

    # ---- streamed calls ---------------------------------------------------------------------

    async def feed(
        self, call_id: str, name: str, fragment: str | bytes | Mapping[str, Any]
    ) -> None:
        """Add a fragment of a plan tool call's arguments as it streams in.

        The client sees each entry (or line of markdown) once it is complete, at most once
        per `stream_interval` and within the session's `preview_budget`. Call
        `finish(call_id)` when the call's arguments are complete, or `abort(call_id)`.
        Previews that `feed_nowait` left due go out first, in order.

        Args:
            call_id: The call's id as the provider gave it; the first fragment for an id
                starts the call.
            name: The tool name as the model sent it (StreamError when it is no plan tool
                of the session).
            fragment: The next piece of the arguments' JSON text (str or UTF-8 bytes), or
                the arguments so far as a dict, for providers that stream parsed objects.
        """
        streams = self._streams  # (read once: this runs for every token)
        if streams.due:
            await self.flush()
        flight = streams.get(call_id)
        if flight is None or flight.name != name:
            flight = self._start(call_id, name)
        if not flight.text.add(fragment):
            return  # nothing this fragment holds can complete a step or a line
        loop = asyncio.get_running_loop()
        wait = flight.wait(loop.time(), self._stream_interval)
        if wait is None:
            return  # over the preview budget until the call's text grows
        if wait > 0:
            flight.pace.arm(loop, wait, functools.partial(self._start_flush, call_id, flight))
            return
        async with self._lock.held():
            if self._streams.get(call_id) is flight:
                await self._preview(flight)

    def feed_nowait(
        self, call_id: str, name: str, fragment: str | bytes | Mapping[str, Any]
    ) -> bool:
        """Add a fragment as `feed` does, without awaiting: for adapters that take many
        fragments per event.

        Starts no task and no timer. A preview this fragment makes due is noted, and goes
        out, in order with the others, at the next awaited `flush()`, `feed()` or
        `finish()`; a preview that is due only after `stream_interval` waits for the next
        fragment that finds the interval over. True when a preview is due now: await
        `session.flush()` to send it (its send failing is rolled back as any preview's).

        Args:
            call_id: The call's id, as for `feed`.
            name: The tool name as the model sent it, as for `feed`.
            fragment: The next piece of the arguments, as for `feed`.
        """
        flight = self._streams.get(call_id)
        if flight is None or flight.name != name:
            flight = self._start(call_id, name)
        pace = flight.pace
        if flight.text.add(fragment):
            pace.pending = True
        if not pace.pending or pace.due:
            return pace.due
        wait = flight.wait(asyncio.get_running_loop().time(), self._stream_interval)
        if wait is None or wait > 0:
            return False
        self._streams.mark_due(call_id, flight)
        return True

    async def flush(self) -> None:
        """Send the previews `feed_nowait` left due, in the order they became due."""
        async with self._lock.held():
            while (due := self._streams.next_due()) is not None:
                call_id, flight = due
                if self._streams.get(call_id) is flight:
                    await self._preview(flight)

    def _start(self, call_id: str, name: str) -> Flight:
        tool = self._names.resolve(name)
        if tool is None:
            raise StreamError(
                f"{name!r} is not a plan tool of this session; route it elsewhere (its plan "
                f"tools: {', '.join(self.tool_names)}; session.plan_tool(name) tells them apart)"
            )
        self._lock.check()
        return self._streams.start(call_id, tool, name, self.limits.max_arguments_bytes)

    def is_streaming(self, call_id: str) -> bool:
        """True while a streamed call with this id is fed and not yet finished or aborted.

        Args:
            call_id: The call's id, as given to `feed`.
        """
        return self._streams.get(call_id) is not None

    async def finish(
        self, call_id: str, *, truncated: bool = False, arguments: Any = None
    ) -> ToolResult:
        """Complete a streamed call: apply it, or roll back what its previews showed.

        Args:
            call_id: The call's id, as given to `feed` (StreamError when none is in flight).
            truncated: True when the token limit cut the call short: it is rejected as cut
                off, as `handle` does.
            arguments: The call's complete arguments as the provider reported them at the
                end (JSON text or a dict), replacing what was fed. None: what was fed.
        """
        if self._streams.due:
            await self.flush()
        async with self._lock.held():
            flight = self._streams.pop(call_id)
            if flight is None:
                raise StreamError(f"no streamed call {call_id!r}; feed it before finishing it")
            if truncated:
                problem = results.Problem("", flight.tool.cut_off)
                outcome: Applied | Rejected | Read = Rejected(flight.tool.name, [problem])
            else:
                final, size = (
                    (arguments, None) if arguments is not None else flight.text.arguments()
                )
                outcome = apply(
                    self._book,
                    flight.tool,
                    final,
                    self._rules,
                    reserved_ids=self._streams.reserved_ids(),
                    own_id=flight.shown.own_id,
                    size=size,
                )
            return await self._conclude(outcome, shown=flight.shown.ids)

    async def abort(self, call_id: str) -> bool:
        """Drop a streamed call in flight and roll back what its previews showed the client.

        As for a rejected call, nothing of it stays. False when no such call is in flight.

        Args:
            call_id: The call's id, as given to `feed`.
        """
        async with self._lock.held():
            return await self._abort(call_id)

    async def abort_all(self) -> list[str]:
        """Abort every streamed call in flight (a broken stream, a cancelled turn, a retry)."""
        async with self._lock.held():
            ids = self._streams.ids()
            for call_id in ids:
                await self._abort(call_id)
            return ids

    async def _abort(self, call_id: str) -> bool:
        flight = self._streams.pop(call_id)
        if flight is None:
            return False
        await self._show(flight.shown.ids)
        return True

    async def _preview(self, flight: Flight) -> None:
        flight.pace.taken()
        if not flight.text.scan():
            return
        plan = self._grown(flight) or self._worked_out(flight)
        if plan is None:
            return
        shown = flight.shown
        if shown.preview is not None and shown.preview.same(plan):
            return
        before, showing = shown.show(plan)
        moved = before is not None and before.id != plan.id
        # A preview that fails to arrive is re-sent by the call's final notification.
        await self._show(shown.ids if moved else (plan.id,), gate=flight)
        if flight.budget.held_back:  # too small a share of the budget: the client keeps
            shown.take_back(plan, before, showing)  # the last one

    def _grown(self, flight: Flight) -> Stored | None:
        # The usual preview: the last one with more steps, worked out from those alone. (Other
        # streams do not change it: the ids they hold matter to a generated id, and the last
        # preview's is kept as `own_id`.)
        built = flight.shown.built
        if built.plan is None:
            return None
        new = flight.text.grown(built.sent)
        if new is None:
            return None
        plan = grown(self._book, flight.tool, new, self._rules, built)
        if plan is not None:
            flight.previewed_now(asyncio.get_running_loop().time())
        return plan

    def _worked_out(self, flight: Flight) -> Stored | None:
        fields = flight.text.fields()
        if fields is not None and not self._shows_more(flight, fields):
            return None  # nothing the client would see changed: not worked out, not counted
        # Every attempt counts against the budget, shown or not: working out a preview costs
        # about the text so far, and a call whose previews the core keeps refusing must not
        # cost that on every step.
        flight.previewed_now(asyncio.get_running_loop().time())
        previews = flight.tool.previews
        if fields is None or not previews.shows(fields):
            return None
        reserved = self._streams.reserved_ids(but=flight)
        if flight.text.whole is not None:
            outcome = apply(
                self._book,
                flight.tool,
                fields,
                self._rules,
                reserved_ids=reserved,
                own_id=flight.shown.own_id,
            )
        else:  # the core validates and builds only what became final since the last preview
            outcome = preview(
                self._book,
                flight.tool,
                fields,
                self._rules,
                flight.shown.built,
                reserved_ids=reserved,
                own_id=flight.shown.own_id,
            )
        if not isinstance(outcome, Applied) or outcome.plan is None:
            return None
        if previews.keeps_generated_id and fields.get("id") is None:
            flight.shown.keep_id(outcome.plan.id)
        return outcome.plan

    def _shows_more(self, flight: Flight, fields: Mapping[str, Any]) -> bool:
        # A markdown plan's new lines, where the client is shown only its list items: a
        # preamble of prose must not spend the budget its checklist needs.
        content = fields.get("content")
        if "content" not in flight.tool.previews.text_keys or not isinstance(content, str):
            return True
        return self._outbox.shows_lines(flight.shown.new_lines(content))

    def _start_flush(self, call_id: str, flight: Flight) -> None:
        flight.pace.fired()
        task = asyncio.ensure_future(self._flush(call_id, flight))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self, call_id: str, flight: Flight) -> None:
        async with self._lock.held():
            if self._streams.get(call_id) is flight:
                await self._preview(flight)

    # ---- committing and telling the client --------------------------------------------------

    async def _conclude(
        self, outcome: Applied | Rejected | Read, shown: Iterable[str]
    ) -> ToolResult:
        if isinstance(outcome, Rejected):
            failure = await self._show(shown)  # take back what previews showed
            return ToolResult(False, outcome.text, outcome.tool, failure=failure)
        if isinstance(outcome, Read):
            # Sends nothing: a read shows no previews, and a client a failed send left behind
            # is brought up to date by the next change, not by a read.
            return ToolResult(True, outcome.text, outcome.tool)
        self._book = outcome.book
        on_commit = self._on_commit
        failure = None if on_commit is None else self._committed(on_commit)
        send_failure = await self._show((*shown, outcome.plan_id) if shown else (outcome.plan_id,))
        text = outcome.text(discipline=self._discipline)
        if send_failure is not None:
            text += "\n" + results.send_failure(send_failure)
        return ToolResult(
            True, text, outcome.tool, outcome.plan_id, failure=send_failure or failure
        )

    def _committed(self, on_commit: Callable[[PlanSession], None]) -> Exception | None:
        try:
            on_commit(self)  # e.g. persist snapshot(); runs before the client hears
        except Exception as exc:
            # The change stands (the client is told below); the caller learns it from the
            # result's `failure`, and the next commit saves the whole state again.
            _logger.warning("on_commit failed for session %s: %r", self.session_id, exc)
            return exc
        return None

    def _show(
        self, ids: Iterable[str], *, force: bool = False, gate: Gate | None = None
    ) -> Awaitable[BaseException | None]:
        # Not a coroutine of its own: the outbox's sending is awaited directly (a layer less
        # on every call and preview).
        return self._outbox.show(
            self._book.plans,
            ids,
            self._streams.previews(self._book.plans),
            force=force,
            gate=gate,
        )

    def legacy_update(self) -> Json:
        """The legacy `plan` update for the current plans: every entry, in creation order.
        The caller's to keep and change: the entries are copies of what the session holds."""
        return self._outbox.legacy_update(
            self._book.plans, self._streams.previews(self._book.plans)
        )

    async def replay(self) -> None:
        """Re-send every current plan, as after `session/load`, then announce each subagent
        again and re-send its plans; raises if a send fails."""
        async with self._lock.held():
            failure = await self._show(list(self._book.plans), force=True)
            if failure is not None:
                raise failure
        self._subagents.check()
        for record in list(self._subagents.children.values()):
            await self._subagents.sync(record, whole=True)
            await record.session.replay()

    # ---- subagents --------------------------------------------------------------------------

    @property
    def takes_subagents(self) -> bool:
        """Whether the client takes subagent sessions: it negotiated v2, or advertised
        `clientCapabilities.subagents: {}` in v1 (read from the raw capabilities, a dict or
        the recorder; the ACP SDK's `ClientCapabilities` model drops the key)."""
        return self._subagents.takes

    @property
    def subagents(self) -> Mapping[str, PlanSession]:
        """Child session id to the child's session, closed children included, in the order
        they were made; a read-only copy."""
        return MappingProxyType(
            {child_id: child.session for child_id, child in self._subagents.children.items()}
        )

    async def subagent(
        self, child_session_id: str, *, title: str | None = None, description: str | None = None
    ) -> PlanSession:
        """The session of a subagent's plans: the same tools, dialects, limits and form as
        this one, and plans of its own.

        Where the client takes subagent sessions (`takes_subagents`), the child is announced
        first: a `subagent_update` on this session, running, with `title` and `description`;
        every notification of the child then carries its own session id. When that
        announcement fails, the child is returned all the same, and announced again before
        its next notification. Elsewhere no announcement is sent: the child's plans reach
        the client in this session, apart from its own (plan ids `<child id>/<plan id>`, or
        after this session's steps in the legacy list), and never count toward its limits.

        Called again for a known id, it returns the same session; a new title or description
        is sent as a `subagent_update` of only what changed, and a closed child is announced
        as running again. At most 100 children are open at once (ConfigurationError).

        Args:
            child_session_id: The subagent's own session id, unique on the connection.
            title: A short name for the subagent the client shows. None: none, or, for a
                known child, the one it has.
            description: What the subagent works on, for the client to show. None: none, or,
                for a known child, the one it has.
        """
        self._lock.check()
        self._subagents.check()
        child_id = check_child_id(child_session_id, self.session_id)
        title, description = check_text("title", title), check_text("description", description)
        known = self._subagents.children.get(child_id)
        if known is None and child_id in self._subagents.ids:
            raise ConfigurationError(
                f"{child_id!r} already names a session of this connection (this session, or "
                "another's subagent); a subagent's session id must be unique on it"
            )
        if (known is None or not known.open) and self._subagents.open_count() >= MAX_OPEN:
            raise ConfigurationError(
                f"at most {MAX_OPEN} subagents are open at once; close() one before "
                f"starting {child_id!r}"
            )
        whole = known is not None and not known.open
        if known is None:
            known = Child(child_id, title, description)
            known.prefix = self._subagents.prefix_for(child_id, self._book.plans)
            known.session = self._child(known)
            self._subagents.children[child_id] = known
            self._subagents.ids.add(child_id)
            self._rules = replace(self._rules, reserved=self._subagents.reserved())
        else:
            known.open = True
            if title is not None:
                known.title = title
            if description is not None:
                known.description = description
        if self._on_commit is not None:
            self._committed(self._on_commit)  # a snapshot keeps the children as they are now
        if known.closing:
            session: PlanSession = known.session
            return session  # its close() announces it running again once it is done
        try:
            await self._subagents.sync(known, whole=whole)
        except Exception as exc:
            # The child's next notification announces it first: nothing of it reaches the
            # client before its announcement.
            _logger.warning("announcing subagent %s failed: %r", child_id, exc)
        child: PlanSession = known.session
        return child

    def _child(self, record: Child) -> PlanSession:
        on_commit = self._on_commit
        parent = self
        route = self._subagents.send_for(record)
        child = PlanSession(
            route,
            session_id=record.session_id,
            on_commit=None if on_commit is None else lambda _: on_commit(parent),
            **self._settings,
        )
        child._subagents.takes = self._subagents.takes
        child._subagents.ids = self._subagents.ids  # one set for the whole tree
        child._subagents.ids.add(child.session_id)
        child._parent = (self, record)
        own = self._subagents.own_send(self._outbox.legacy_held)
        if own is not None:
            self._outbox.reroute(own, self._subagents.dress_for(None))
        dress = self._subagents.dress_for(record)
        if dress is not None:
            child._outbox.reroute(route, dress)
        return child

    async def close(self, *, keep_plans: bool = False) -> None:
        """End a subagent's work: its plans leave the client's view (`plan_removed`, or
        its steps leave the legacy list) unless `keep_plans`, and where the client takes
        subagent sessions it is announced idle. It stays in its parent's `subagents`;
        `subagent()` for its id again announces it as running. Only for a session made by
        `subagent()` (ConfigurationError otherwise); raises what a failed send raised.

        Args:
            keep_plans: Leave the subagent's plans on the client, as its record of what was
                done.
        """
        if self._parent is None:
            raise ConfigurationError(
                "close() ends a subagent's session (one made by session.subagent()); this "
                "session has no parent"
            )
        parent, record = self._parent
        await self.abort_all()
        # Closed at once (a snapshot taken now says so, and a subagent() meanwhile opens it
        # again), but announced idle only after its plans were taken back.
        record.open, record.closing = False, True
        failure: BaseException | None = None
        try:
            async with self._lock.held():
                gone = [] if keep_plans else list(self._book.plans)
                if gone:
                    self._book = Book({}, self._book.next_number, self._book.last_task)
                if self._on_commit is not None:
                    self._committed(self._on_commit)
                failure = await self._show(gone)
        finally:
            record.closing = False
        await parent._subagents.sync(record, whole=record.open)
        if failure is not None:
            raise failure

    # ---- restarts ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The session's plan state as JSON-ready data, for `restore`: its plans, and its
        subagents' (under `subagents`, each with its session id, title, description and
        whether it is open)."""
        out = dump(self._book)
        if self._subagents.children:
            out["subagents"] = [
                {
                    "sessionId": record.session_id,
                    "title": record.title,
                    "description": record.description,
                    "open": record.open,
                    "snapshot": record.session.snapshot(),
                }
                for record in self._subagents.children.values()
            ]
        return out

    def restore(self, snapshot: Mapping[str, Any], *, partial: bool = False) -> list[SkippedPlan]:
        """Replace this session's plans with those of a `snapshot()`; sends nothing.

        Each plan is checked as strictly as a model's `create_plan` call (ids, limits, file
        locations in the workspace). By default a ConfigurationError names every plan that
        fails and nothing changes, and the result is []. With `partial=True` every plan that
        passes is restored and each one left out comes back as a `SkippedPlan` saying why
        (as for `session/load` after the project moved). Either way the id counter survives,
        and data that is not a snapshot at all raises.

        Refused, changing nothing, while a call holds the session or streamed calls are in
        flight (ConfigurationError), and from inside its `send` or `on_commit` (ReentrancyError).

        Args:
            snapshot: What `snapshot()` returned, as saved (JSON-ready data).
            partial: Restore every plan that passes and return the others as
                `SkippedPlan`s, rather than refuse the whole snapshot.
        """
        self._lock.check()
        if self._lock.busy():
            raise ConfigurationError(
                "restore() while a call holds the session would change the plans under it "
                "(and leave what it is sending out of reach); restore once the call has returned"
            )
        if self._streams.ids():
            raise ConfigurationError(
                "restore() while streamed calls are in flight would leave their previews on "
                "the client; await session.abort_all() first"
            )
        for child in self._descendants():
            child._lock.check()
            if child._lock.busy() or child._streams.ids():
                raise ConfigurationError(
                    f"restore() while subagent {child.session_id!r} is busy would change its "
                    "plans under it; restore once its calls have returned"
                )
        mine = {self.session_id, *(child.session_id for child in self._descendants())}
        taken = (self._subagents.ids - mine) | {self.session_id}
        family = _loaded(snapshot, self._rules, self.session_id, taken)
        skipped = family.skipped()
        if skipped and not partial:
            raise snapshot_error(skipped)
        self._adopt(family)
        return skipped

    def _descendants(self) -> list[PlanSession]:
        out: list[PlanSession] = []
        for record in self._subagents.children.values():
            out += [record.session, *record.session._descendants()]
        return out

    def _adopt(self, family: _Family) -> None:
        self._book = family.book
        self._outbox.forget()
        known = dict(self._subagents.children)
        for child_id, title, description, is_open, loaded in family.children:
            record = known.pop(child_id, None)
            if record is None:
                record = Child(child_id, title, description)
                record.prefix = self._subagents.prefix_for(child_id, self._book.plans)
                record.session = self._child(record)
                self._subagents.children[child_id] = record
            record.title, record.description, record.open = title, description, is_open
            record.session._adopt(loaded)
        # A child the snapshot does not have is kept, closed, with no plans: its plans and
        # its state are taken back from the client with the next replay().
        for record in known.values():
            record.open = False
            record.session._adopt(_Family(Book(), [], []))
        self._subagents.children = {
            **{c[0]: self._subagents.children[c[0]] for c in family.children},
            **known,
        }
        self._rules = replace(self._rules, reserved=self._subagents.reserved())
        self._subagents.forget()


@dataclass
class _Family:
    """A snapshot's plans and its subagents', loaded and checked, not yet adopted."""

    book: Book
    own_skipped: list[SkippedPlan]
    children: list[tuple[str, str | None, str | None, bool, _Family]]

    def skipped(self) -> list[SkippedPlan]:
        out = list(self.own_skipped)
        for *_, child in self.children:
            out += child.skipped()
        return out


def _loaded(snapshot: Mapping[str, Any], rules: Rules, session_id: str, taken: set[str]) -> _Family:
    """A snapshot's plans and those of its subagents, checked as `restore` checks them;
    `taken`: the session ids no child may have (the connection's others, growing as read)."""
    book, skipped = load(snapshot, rules, CREATE_PLAN)
    raw = snapshot.get("subagents", [])
    if not isinstance(raw, list) or len(raw) > _MAX_SNAPSHOT_CHILDREN:
        raise ConfigurationError(
            f"snapshot subagents must be a list of at most {_MAX_SNAPSHOT_CHILDREN}"
        )
    children = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        where = f"snapshot subagents[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("snapshot"), Mapping):
            raise ConfigurationError(f"{where} must be an object with a snapshot")
        try:
            child_id = check_child_id(entry.get("sessionId"), session_id)
            title = check_text("title", entry.get("title"))
            description = check_text("description", entry.get("description"))
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        is_open = entry.get("open", True)
        if type(is_open) is not bool or child_id in seen or child_id in taken:
            raise ConfigurationError(
                f"{where}: open must be true or false, and session ids unique on the connection"
            )
        seen.add(child_id)
        taken.add(child_id)
        family = _loaded(entry["snapshot"], rules, child_id, taken)
        family.own_skipped = [
            dataclasses.replace(s, session_id=child_id) for s in family.own_skipped
        ]
        children.append((child_id, title, description, is_open, family))
    if sum(is_open for *_, is_open, _ in children) > MAX_OPEN:
        raise ConfigurationError(f"snapshot has more than {MAX_OPEN} open subagents")
    return _Family(book, skipped, children)


# A snapshot is data from outside: a thousand closed children is as many as a session is
# ever asked to keep (each open one is bounded by MAX_OPEN).
_MAX_SNAPSHOT_CHILDREN = 1000


def _read_once(values: Any) -> Any:
    """`values` as a tuple when it is an iterator or other iterable (text and anything else
    as it is, for the checks that follow to refuse)."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        return values
    return tuple(values)


def _check_list_id(list_id: object, limits: Limits) -> None:
    if not isinstance(list_id, str) or check_id(list_id, limits):
        raise ConfigurationError(
            f"list_id must be a plan id (short text without control characters); got {list_id!r}"
        )
