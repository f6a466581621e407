"""What the proxy changes: the client's `initialize` (asking the agent for plans in their own
notifications), and the agent's plan signals, which become plans in the form the client
negotiated. Everything else is relayed byte for byte.

One `SessionPlans` per ACP session holds a `PlanSession` with the client's capabilities, so
the plans meet every limit and rule a session's plan meets and reach the client as a
session's would: `plan_update` / `plan_removed` (v1 `plan` or v2), the spec documents' draft,
or one legacy `plan` list of every plan. A signal the proxy cannot read is relayed as it came,
with one log line on stderr.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._errors import ConfigurationError
from .._session import PlanSession
from .._wire import forms
from .._wire.forms import WireForm
from .agents import UNKNOWN, Profile, recognise
from .relay import Emit

_logger = logging.getLogger("llm_plans.proxy")

DIALECTS = ("llm_plans", "opencode", "vibe")
"""The tools a session mirrors the agent's plans with: ours for plans by id (a proposal, a
plan the agent names), opencode's `todowrite` for a list (its todos are ACP's entries, with
priorities), Vibe's `todo`."""
LIST_TOOL = "todowrite"
PROPOSAL_ID = "plan-mode"
"""The id of a plan-mode proposal: the one claude-agent-acp gives the plan once approved, so
its own `plan_update` replaces the proposal instead of standing beside it."""
SUBAGENT_TOOLS = ("Agent", "Task")
STABLE = (WireForm.SCHEMA, WireForm.V2)
"""The forms that take the agent's own `plan_update` / `plan_removed` as it sends them."""


def _json(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep: as it came
        return None


def _line(message: Mapping[str, Any], *, strict: bool = False) -> bytes:
    """`message` as one NDJSON line; `strict`: ValueError for what JSON cannot hold (an
    infinity a peer's 1e400 became), where a peer's message is written back."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=not strict)
        return (text + "\n").encode()
    except UnicodeEncodeError:  # a lone surrogate the peer sent escaped: keep it escaped
        return (json.dumps(message, separators=(",", ":"), allow_nan=not strict) + "\n").encode()


def _key(request_id: object) -> tuple[str, object] | None:
    """A request id as its answer will carry it: 1 and "1" differ, 1 and 1.0 do not (a
    JavaScript agent answers 1.0 as 1); None for an id no answer can be matched by."""
    if isinstance(request_id, str):
        return ("text", request_id)
    if isinstance(request_id, (int, float)) and not isinstance(request_id, bool):
        return ("number", request_id)
    return None


class Upgrade:
    """The proxy's view of one connection: what the client negotiated, which agent answered,
    and the plans of each session.

    Args:
        command: The agent's command line, which names the agent when `initialize` does not.
    """

    def __init__(self, command: Sequence[str]) -> None:
        self._command = tuple(command)
        self._initializing: set[tuple[str, object]] = set()
        self.capabilities: dict[str, Any] = {}
        self.asked_plan = False  # `plan: {}` added to the client's capabilities
        self.protocol_version: int | None = None
        self.profile: Profile | None = None  # None until the agent answered initialize
        self.form = WireForm.LEGACY
        self._sessions: dict[str, SessionPlans] = {}
        self.session_ids: set[str] = set()  # every session id on the connection, children too
        self._logged: set[str] = set()

    def log_once(self, key: str, message: str) -> None:
        if key not in self._logged:
            self._logged.add(key)
            _logger.warning("llm-plans proxy: %s", message)

    # ---- client to agent -------------------------------------------------------------------

    def from_client(self, line: bytes) -> bytes:
        if b'"initialize"' not in line:
            return line
        message = _json(line)
        if not (
            isinstance(message, dict)
            and message.get("method") == "initialize"
            and "id" in message
            and isinstance(message.get("params"), dict)
        ):
            return line
        params: dict[str, Any] = message["params"]
        capabilities = params.get("clientCapabilities", {})
        key = _key(message["id"])
        if not isinstance(capabilities, dict) or key is None:
            return line  # the agent answers what it makes of it
        self._initializing.add(key)
        self.capabilities = capabilities
        if "plan" in capabilities:
            return line
        # Plans in notifications of their own (claude-agent-acp's approved plan-mode plan,
        # codex-acp's proposed plans), which the proxy converts for this client.
        asked = {**params, "clientCapabilities": {**capabilities, "plan": {}}}
        try:
            rewritten = _line({**message, "params": asked}, strict=True)
        except ValueError:  # a number JSON cannot write back (1e400): sent as it came
            return line
        self.asked_plan = True
        return rewritten

    # ---- agent to client -------------------------------------------------------------------

    async def from_agent(self, line: bytes, emit: Emit) -> None:
        message: Any = None
        if self._initializing and b'"id"' in line:
            message = _json(line)
            self._initialized(message)
        if self.profile is None and self.asked_plan and b'"session/update"' in line:
            # No answer to initialize the proxy could read, yet it asked for plan operations
            # on the client's behalf: what that unlocked must still be converted.
            self._settle(None, None)
        # Only tool cards and plans can be plan signals: their sessionUpdate is "tool_call",
        # "tool_call_update", "plan", "plan_update" or "plan_removed". Any other line (a
        # message chunk, most of a turn) goes on without being parsed.
        if (
            self.profile is not None
            and b'"session/update"' in line
            and (b'"plan' in line or b'"tool_call' in line)
        ):
            message = _json(line) if message is None else message
            params = message.get("params") if isinstance(message, dict) else None
            if (
                isinstance(params, dict)
                and message.get("method") == "session/update"
                and "id" not in message
                and isinstance(params.get("sessionId"), str)
                and isinstance(params.get("update"), dict)
            ):
                await self._session(params["sessionId"]).update(line, params["update"], emit)
                return
        emit(line)

    def _initialized(self, message: Any) -> None:
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return
        key = _key(message["id"])
        if key is None or key not in self._initializing:
            return
        self._initializing.discard(key)
        result = message.get("result")
        if not isinstance(result, dict):
            return  # initialize failed: the client hears the agent's error as sent
        version = result.get("protocolVersion")
        self._settle(result.get("agentInfo"), version if type(version) is int else None)

    def _settle(self, agent_info: object, version: int | None) -> None:
        """Which agent this is and which form the client gets; an unreadable version is v1."""
        self.protocol_version = version if version is not None and version >= 1 else 1
        try:
            self.form = forms.form_for(self.capabilities, self.protocol_version)
        except ConfigurationError:
            self.form = WireForm.LEGACY
        self.profile = recognise(agent_info, self._command)
        if self.profile is UNKNOWN:
            name = agent_info.get("name") if isinstance(agent_info, dict) else None
            self.log_once(
                "unknown",
                f"{name or self._command[0]!r} is not an agent the proxy knows; its plans "
                "pass as it sends them",
            )

    def _session(self, session_id: str) -> SessionPlans:
        plans = self._sessions.get(session_id)
        if plans is None:
            plans = self._sessions[session_id] = SessionPlans(self, session_id)
            self.session_ids.add(session_id)
        return plans


class SessionPlans:
    """The plans of one session, made from its agent's signals, and what the client was sent."""

    def __init__(self, upgrade: Upgrade, session_id: str) -> None:
        self._upgrade = upgrade
        self._profile = upgrade.profile or UNKNOWN
        self._emit: Emit | None = None
        self._muted = False
        self.session = PlanSession(
            self._send,
            session_id=session_id,
            client_capabilities=upgrade.capabilities,
            protocol_version=upgrade.protocol_version,
            discipline=False,
            dialects=DIALECTS,
        )
        self._tools: dict[str, str] = {}  # tool call id: the tool it calls
        self._inputs: dict[str, Any] = {}  # tool call id: the rawInput last mirrored
        self._taken: set[str] = set()  # tool calls whose rawInput became the plan
        self._titles: dict[str, str | None] = {}  # a subagent's tool call id: its title
        self._children: dict[str, str] = {}  # a subagent's tool call id: its session id
        self._proposals: set[str] = set()
        self._owned = False  # the proxy sent this session's legacy list itself

    async def _send(self, params: dict[str, Any]) -> None:
        if self._muted or self._emit is None:
            return
        self._emit(_line({"jsonrpc": "2.0", "method": "session/update", "params": params}))
        if params["update"].get("sessionUpdate") == "plan":
            self._owned = True

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[None]:
        """The session's state follows the agent's list while the agent's own notification
        goes to the client as it was sent."""
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    async def update(self, line: bytes, update: dict[str, Any], emit: Emit) -> None:
        self._emit = emit
        kind = update.get("sessionUpdate")
        if kind in ("tool_call", "tool_call_update"):
            emit(line)  # tool cards stay: a permission request may name them
            await self._tool_call(update)
        elif kind == "plan":
            await self._list(line, update)
        elif kind in ("plan_update", "plan_removed"):
            await self._plan(line, update)
        else:
            emit(line)

    # ---- tool calls --------------------------------------------------------------------------

    async def _tool_call(self, update: dict[str, Any]) -> None:
        call_id = update.get("toolCallId")
        if not isinstance(call_id, str):
            return
        named = self._profile.tool_name(update)
        if named is not None:
            self._tools.setdefault(call_id, named)
        name = self._tools.get(call_id)
        raw = update.get("rawInput")
        if name is not None and isinstance(raw, dict) and raw and raw != self._inputs.get(call_id):
            self._inputs[call_id] = raw
            if name in self._profile.tools:
                why = await self._apply(self._profile.tools[name], raw)
                if why is None:
                    self._taken.add(call_id)
                else:
                    self._unread(f"{name}:{call_id}", f"its {name} call {call_id}", why)
            elif name in self._profile.proposals and isinstance(raw.get("plan"), str):
                if await self._markdown(PROPOSAL_ID, raw["plan"], f"its {name} call {call_id}"):
                    self._proposals.add(call_id)
            elif self._profile.subagents and name in SUBAGENT_TOOLS:
                self._titles[call_id] = _text(raw.get("description"))
        status = update.get("status")
        if status in ("completed", "failed"):
            await self._ended(call_id, status)

    async def _ended(self, call_id: str, status: str) -> None:
        child = self.session.subagents.get(self._children.get(call_id, ""))
        if child is not None:
            await child.close(keep_plans=self.session.takes_subagents)
        if status == "failed" and call_id in self._proposals and PROPOSAL_ID in self.session.plans:
            self._proposals.discard(call_id)
            await self._apply("remove_plan", {"id": PROPOSAL_ID})

    async def _markdown(self, plan_id: str, content: str, source: str) -> bool:
        if plan_id in self.session.plans:
            args = {"id": plan_id, "type": "markdown", "content": content}
            why = await self._apply("update_plan", args)
        else:
            args = {"type": "markdown", "id": plan_id, "content": content}
            why = await self._apply("create_plan", args)
        if why is not None:
            self._unread(f"markdown:{plan_id}", source, why)
        return why is None

    async def _apply(
        self,
        name: str,
        args: dict[str, Any],
        *,
        list_id: str | None = None,
        session: PlanSession | None = None,
    ) -> str | None:
        """Mirror one call of the agent's into `session` (this one by default): None when it
        applied, else why not (a plan id no plan can have is the call's problem too)."""
        try:
            result = await (session or self.session).mirror(name, args, list_id=list_id)
        except ConfigurationError as exc:
            return str(exc)
        return None if result.ok else result.content

    def _unread(self, key: str, source: str, why: str) -> None:
        self._upgrade.log_once(
            key,
            f"{self._profile.name}: {source} did not read as a plan, passed on as sent "
            f"({why.splitlines()[0] if why else 'no reason given'})",
        )

    # ---- the agent's own plans ---------------------------------------------------------------

    async def _list(self, line: bytes, update: dict[str, Any]) -> None:
        emit = self._emit
        assert emit is not None
        todos = _todos(update.get("entries"))
        if not self._profile.lists or todos is None:
            emit(line)
            return
        meta = update.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if self._taken and (meta.get("effect_entry_id") in self._taken or self._restates(todos)):
            return  # Vibe restating a todo call the proxy took, without its cancelled steps
        parent = _parent_tool_use(meta) if self._profile.subagents else None
        if parent is not None:
            try:
                child = await self._child(parent)
            except ConfigurationError as exc:  # an id no session can have, too many open
                self._unread(f"child:{parent}", f"a subagent's plan ({parent})", str(exc))
                emit(line)
                return
            why = await self._apply(LIST_TOOL, {"todos": todos}, session=child)
            if why is not None:
                self._unread(f"child:{parent}", f"a subagent's plan ({parent})", why)
                emit(line)
            return
        if self._upgrade.form is WireForm.LEGACY and not self._owned:
            with self._quietly():
                await self._apply(LIST_TOOL, {"todos": todos})
            emit(line)  # already in the client's form, and the only plan it has
            return
        why = await self._apply(LIST_TOOL, {"todos": todos})
        if why is not None:
            self._unread("list", "its plan list", why)
            emit(line)

    def _restates(self, todos: list[dict[str, Any]]) -> bool:
        """True when `todos` are the list's steps, its cancelled ones left out, as the legacy
        list of an agent whose tool call the proxy took says them."""
        plan = self.session.plans.get(self.session.list_id or "")
        if plan is None or plan.type != "items":
            return False
        shown = [step.content for step in plan.entries if step.status != "cancelled"]
        return shown == [todo.get("content") for todo in todos]

    async def _child(self, tool_use_id: str) -> PlanSession:
        return await self.session.subagent(
            self._claim(tool_use_id), title=self._titles.get(tool_use_id)
        )

    def _child_id(self, tool_use_id: str) -> str:
        """The child session of the subagent that tool call `tool_use_id` started: named by
        the call's id, unless another session on the connection has that id already."""
        known = self._children.get(tool_use_id)
        if known is not None:
            return known
        child_id = tool_use_id
        if child_id in self._upgrade.session_ids:
            child_id = f"{self.session.session_id}/{tool_use_id}"
        return child_id

    def _claim(self, tool_use_id: str) -> str:
        child_id = self._child_id(tool_use_id)
        if child_id in self._upgrade.session_ids and tool_use_id not in self._children:
            raise ConfigurationError(f"{child_id!r} already names a session of this connection")
        self._children[tool_use_id] = child_id
        self._upgrade.session_ids.add(child_id)
        return child_id

    async def _plan(self, line: bytes, update: dict[str, Any]) -> None:
        """The agent's own `plan_update` / `plan_removed` in ACP's stable form: as sent to a
        client that takes it, converted for one that does not (the proxy asked for it)."""
        emit = self._emit
        assert emit is not None
        body = update.get("plan") if update.get("sessionUpdate") == "plan_update" else update
        plan_id = body.get("planId") if isinstance(body, dict) else None
        if self._upgrade.form in STABLE or not isinstance(plan_id, str):
            emit(line)
            return
        assert isinstance(body, dict)
        if update["sessionUpdate"] == "plan_removed":
            if plan_id in self.session.plans:
                await self._apply("remove_plan", {"id": plan_id})
            return
        todos = _todos(body.get("entries")) if body.get("type") == "items" else None
        content = body.get("content") if body.get("type") == "markdown" else None
        if todos is not None:
            why = await self._apply(LIST_TOOL, {"todos": todos}, list_id=plan_id)
            ok = why is None
            if why is not None:
                self._unread(f"plan:{plan_id}", f"its plan {plan_id!r}", why)
        elif isinstance(content, str):
            ok = await self._markdown(plan_id, content, f"its plan {plan_id!r}")
        else:
            ok = False
            self._unread(f"plan:{plan_id}", f"its plan {plan_id!r}", "an unknown plan type")
        if not ok and not self._upgrade.asked_plan:
            emit(line)  # the client asked for plans in this form itself


def _text(value: object) -> str | None:
    """`value` when it is text a client can read (no lone surrogate), else None."""
    if not isinstance(value, str):
        return None
    try:
        value.encode()
    except UnicodeEncodeError:
        return None
    return value


def _todos(entries: object) -> list[dict[str, Any]] | None:
    """A list's entries as `todowrite` todos (content, status, priority), or None when it
    is not a list of objects."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return None
    keys = ("content", "status", "priority")
    return [{k: e[k] for k in keys if k in e} for e in entries]


def _parent_tool_use(meta: Mapping[str, Any]) -> str | None:
    claude = meta.get("claudeCode")
    parent = claude.get("parentToolUseId") if isinstance(claude, Mapping) else None
    return parent if isinstance(parent, str) and parent else None
