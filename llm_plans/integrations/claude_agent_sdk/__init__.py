"""The plan tools for the Claude Agent SDK, as an in-process MCP server: `plan_server(session)`.

Install with `pip install "llm-plans[claude-agent-sdk]"`.

    options = ClaudeAgentOptions(
        mcp_servers={"plans": plan_server(session)},
        allowed_tools=plan_tool_names(),  # run without asking: they only touch the plan view
        disallowed_tools=list(BUILTIN_PLAN_TOOLS),  # so the model plans with these instead
        include_partial_messages=True,  # for live previews, with PlanPreviews
    )

- Claude Code names an MCP server's tools `mcp__<key>__<tool>`; `plan_tool_names(key)` lists
  them (`PLAN_TOOL_NAMES` for the key "plans"). A session resolves those names when its
  `tool_prefixes` include `mcp__<key>__` (the default covers "plans"): `plan_server` checks.
- `dialect=`: whose plan tools the server offers. By default ours, or, for a session that
  does not take ours, the tools of the one dialect it takes: `plan_server(session,
  dialect="claude_todos")` serves `mcp__plans__TodoWrite`, whose calls the session validates
  and streams like ours. The session must take that dialect (`PlanSession(dialects=...)`),
  else `ConfigurationError`; pass the same `dialect=` to `plan_tool_names`.
- Claude Code's own planning tools compete with these: `BUILTIN_PLAN_TOOLS` (`TodoWrite`, and
  the task list tools `TaskCreate`, `TaskGet`, `TaskList`, `TaskUpdate`) belong in
  `disallowed_tools`. (`Task`, an old name of the subagent tool `Agent`, is not one of them.)
- Claude Code may defer MCP tools behind its tool search, so the model would not see them
  until it searched. Every plan tool is listed with `_meta` `anthropic/alwaysLoad: true`,
  which keeps it in the prompt; setting `ENABLE_TOOL_SEARCH=false` in
  `ClaudeAgentOptions(env=...)` turns tool search off altogether.
- The model's arguments reach the session as sent (this server does no schema validation of
  its own), so repairs apply; a rejected call is a result with `isError: true` whose text is
  llm_plans' rejection; successful calls have `isError: false`.
- Live previews: with `include_partial_messages=True`, pass every message the client yields
  to `PlanPreviews(session).on_message`. Claude Code tells the server which `tool_use` each
  call is (`_meta` `claudecode/toolUseId`), so the streamed call is finished, not applied
  twice; a tool that runs before the consumer reached its call waits for it, at most
  2 seconds, so read the messages to the end of each query.
- Streams are kept per Claude session (`session_id`), per subagent (`parent_tool_use_id`)
  and per tool use id: concurrent queries feeding one `PlanPreviews` never mix. A tool run
  with other arguments than were streamed (a `PreToolUse` hook's `updatedInput`) applies
  those, taking back the streamed previews. Previews of a call no tool ran are taken back
  when its result comes without the tool (a denied permission, a hook's deny), when the
  query's `ResultMessage` comes (an interrupt, an error), or on `await previews.aclose()`
  (or leaving `async with PlanPreviews(session) as previews:`), for a consumer that stops
  reading early.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    import mcp.types
    from claude_agent_sdk import McpSdkServerConfig, ResultMessage, ToolResultBlock, UserMessage
    from mcp.server import Server
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[claude-agent-sdk]"'
    ) from missing

from ... import tools
from ..._errors import ConfigurationError
from ..._session import PlanSession
from ...dialects import _OURS as OURS
from .._calls import Calls, Run, shared_calls
from .._dialect import dialect_for, names_of
from ._hooks import plan_hooks

__all__ = [
    "BUILTIN_PLAN_TOOLS",
    "PLAN_TOOL_NAMES",
    "PlanPreviews",
    "plan_hooks",
    "plan_server",
    "plan_tool_names",
]

_FRAMEWORK = "claude-agent-sdk"
_TOOL_USE_ID = "claudecode/toolUseId"

BUILTIN_PLAN_TOOLS: tuple[str, ...] = (
    "TodoWrite",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
)
"""Claude Code's built-in planning tools, for `ClaudeAgentOptions(disallowed_tools=...)`."""


def plan_tool_names(key: str = "plans", *, dialect: str = OURS) -> list[str]:
    """The names the model sees for the plan tools of `dialect` on a server registered under
    `key`, for `ClaudeAgentOptions(allowed_tools=...)`.

    Args:
        key: The key the server is registered under in `mcp_servers`.
        dialect: The dialect whose tools the server has; ours by default.
    """
    return [f"mcp__{key}__{name}" for name in names_of(dialect)]


PLAN_TOOL_NAMES: tuple[str, ...] = tuple(plan_tool_names())
"""`mcp__plans__create_plan`, `mcp__plans__update_plan`, `mcp__plans__remove_plan`."""


def plan_server(
    session: PlanSession, *, key: str = "plans", dialect: str | None = None
) -> McpSdkServerConfig:
    """An in-process MCP server with the plan tools of `dialect` (by default ours, or the
    session's one dialect when it does not take ours), for `mcp_servers={key: ...}`.

    Args:
        session: The session the tools run on. It must take the names Claude Code gives
            them (`tool_prefixes` including `"mcp__<key>__"`; the default has `mcp__plans__`).
        key: The key the server is to be registered under in `mcp_servers`.
        dialect: The dialect whose tools to give (`"llm_plans"`, `"claude_tasks"`, ...), one
            the session takes. None: ours when the session takes ours, else its only dialect
            (ConfigurationError when it takes several and not ours).

    Example:
        options = ClaudeAgentOptions(mcp_servers={"plans": plan_server(session)})
    """
    dialect, names = dialect_for(session, dialect)
    first = plan_tool_names(key, dialect=dialect)[0]
    if session.plan_tool(first) is None:
        raise ConfigurationError(
            f'the session does not recognise the tool names of a server under "{key}" '
            f"({first}, ...): create it with "
            f'PlanSession(..., tool_prefixes=("", "mcp__{key}__"))'
        )
    calls = shared_calls(session, _FRAMEWORK, lagging=True)
    listed = [
        mcp.types.Tool.model_validate(
            {
                "name": name,
                "description": tools.description(name, dialect=dialect),
                "inputSchema": tools.schema(name, dialect=dialect),
                "_meta": {"anthropic/alwaysLoad": True},
            }
        )
        for name in names
    ]

    async def call(name: str, arguments: Any, meta: Any) -> mcp.types.CallToolResult:
        result = await calls.apply(_tool_use_id(meta), name, arguments)
        return mcp.types.CallToolResult.model_validate(
            {"content": [{"type": "text", "text": result.content}], "isError": not result.ok}
        )

    return McpSdkServerConfig(type="sdk", name=key, instance=_server(key, listed, call))


class PlanPreviews:
    """Streams plan steps to the client from the SDK's partial messages (`StreamEvent`s).

    Args:
        session: The session the plan calls are previewed on, the one the plan tools run
            on.
    """

    def __init__(self, session: PlanSession) -> None:
        self._session = session
        self._calls: Calls = shared_calls(session, _FRAMEWORK, lagging=True)
        self._calls.previewing = True
        # (session id, the tool use a subagent runs under or None) -> the calls it streams
        self._runs: dict[tuple[str | None, str | None], Run] = {}

    async def on_message(self, message: Any) -> None:
        """Take one message as `query()` or `ClaudeSDKClient` yields it.

        Args:
            message: The message; those that carry no plan call's stream or result are
                ignored.
        """
        if isinstance(message, ResultMessage):  # the query is over: no tool runs any more
            for scope in [s for s in self._runs if s[0] == message.session_id]:
                await self._runs.pop(scope).end()
            return
        if isinstance(message, UserMessage):
            if isinstance(message.content, list):
                for answer in message.content:
                    if isinstance(answer, ToolResultBlock):  # answered: no tool runs it now
                        for each in list(self._runs.values()):
                            await each.end_call(answer.tool_use_id)
            return
        event = getattr(message, "event", None)
        if not isinstance(event, Mapping):
            return
        # Subagents stream too: their blocks are told apart by the tool use they run under.
        scope = (getattr(message, "session_id", None), getattr(message, "parent_tool_use_id", None))
        self._calls.stream_seen()
        kind = event.get("type")
        if kind == "message_start":
            # A new response of this scope: the calls of its earlier ones have run by now.
            earlier = self._runs.pop(scope, None)
            if earlier is not None:
                await earlier.end()
            return
        run = self._runs.get(scope)
        if run is None:
            run = self._runs[scope] = self._calls.run()
        index = event.get("index")
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            name = str(block.get("name"))
            if block.get("type") == "tool_use" and not _elsewhere(self._session, name, scope[1]):
                await run.start(index, str(block.get("id")), name)
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "input_json_delta":
                await run.feed(index, delta.get("partial_json", ""))
        elif kind == "content_block_stop":
            run.done(index)

    async def aclose(self) -> None:
        """Stop previewing: the previews of every call no tool ran yet are taken back."""
        runs, self._runs = self._runs, {}
        for run in runs.values():
            await run.end()

    async def __aenter__(self) -> PlanPreviews:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _elsewhere(session: PlanSession, name: str, parent: str | None) -> bool:
    # A subagent's built-in list tools (TodoWrite, Task*: the bare names, not those an MCP
    # server serves) write a list of its own, which plan_hooks mirrors when they have run;
    # previewed here they would show over the main list.
    tool = session.plan_tool(name)
    return parent is not None and tool == name and tool not in tools.NAMES


def _tool_use_id(meta: Any) -> str | None:
    if meta is None:
        return None
    if not isinstance(meta, Mapping):  # mcp 1.x: a model that keeps unknown keys as extras
        meta = meta.model_dump(by_alias=True)
    value = meta.get(_TOOL_USE_ID)
    return value if isinstance(value, str) else None


# mcp 2 takes handlers in the constructor, mcp 1 by decorators; only one is installed, so a
# type checker sees the other's calls as errors: the server class is erased to Any here.
_Server: Any = Server


def _server(name: str, listed: list[mcp.types.Tool], call: Any) -> Any:
    if hasattr(mcp.types, "jsonrpc_message_adapter"):  # mcp 2, as the Claude Agent SDK tells

        async def on_list_tools(ctx: Any, params: Any) -> mcp.types.ListToolsResult:
            return mcp.types.ListToolsResult(tools=listed)

        async def on_call_tool(ctx: Any, params: Any) -> mcp.types.CallToolResult:
            result: mcp.types.CallToolResult = await call(
                params.name, params.arguments or {}, params.meta
            )
            return result

        return _Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool)

    server = _Server(name)

    async def list_tools() -> list[mcp.types.Tool]:
        return listed

    async def call_tool(tool: str, arguments: dict[str, Any]) -> mcp.types.CallToolResult:
        context = server.request_context
        result: mcp.types.CallToolResult = await call(tool, arguments, context.meta)
        return result

    server.list_tools()(list_tools)
    # The session validates (after repairing): mcp's own schema check would refuse first.
    server.call_tool(validate_input=False)(call_tool)
    return server
