"""The plan tools for the OpenAI Agents SDK: `Agent(..., tools=plan_tools(session))`.

Install with `pip install "llm-plans[openai-agents]"`.

- Strict `FunctionTool`s named `create_plan`, `update_plan` and `remove_plan`, whose
  schemas are llm_plans' strict schemas. The model's raw JSON reaches the session, so repairs
  apply; a rejected call returns llm_plans' rejection text as the tool output (function call
  outputs carry no error flag in this SDK) and never raises into the run.
- `dialect=`: whose plan tools the model is given. By default ours, or, for a session that
  does not take ours, the tools of the one dialect it takes; `plan_tools(session,
  dialect="codex")` gives Codex's `update_plan`. The session must take that dialect
  (`PlanSession(dialects=...)`), else `ConfigurationError`.
- Live previews: feed the run's stream events to a `PlanPreviews` on the same session. Each
  call is applied once: the tool finishes the streamed call when its stream was seen (waiting
  briefly for a consumer that lags behind the run), and otherwise applies the call itself,
  telling the previews to leave that call alone. Once a session's previews have seen a
  stream, its tools expect one: keep `PlanPreviews` to streamed runs (`Runner.run_streamed`)
  consumed to the end, or a call may wait up to 2 seconds for it.
- One `PlanPreviews` per run: its streams are that run's, keyed by item and call id, so
  concurrent runs on one session never mix. A tool run with other arguments than were
  streamed applies those, taking back the streamed previews. Previews of a call no tool ran
  are taken back when its output comes without the tool (a rejected approval), when the
  run's next response starts, or on `await previews.aclose()` (or leaving
  `async with PlanPreviews(session) as previews:`) once the run's events end or the run is
  cancelled.

Example:
    agent = Agent(name="coder", instructions=..., tools=plan_tools(session))
    result = Runner.run_streamed(agent, "fix the parser")
    async with PlanPreviews(session) as previews:
        async for event in result.stream_events():
            await previews.on_event(event)
"""

from __future__ import annotations

from typing import Any

try:
    from agents import FunctionTool
    from agents.tool_context import ToolContext
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[openai-agents]"'
    ) from missing

from .. import tools
from .._session import PlanSession
from ._calls import Calls, shared_calls
from ._dialect import dialect_for

__all__ = ["PlanPreviews", "plan_tools"]

_FRAMEWORK = "openai-agents"


def plan_tools(session: PlanSession, *, dialect: str | None = None) -> list[FunctionTool]:
    """The plan tools of `dialect` (ours by default: `create_plan`, `update_plan` and
    `remove_plan`) as strict `FunctionTool`s running on `session`.

    Args:
        session: The session the tools' calls run on.
        dialect: The dialect whose tools to give (`"llm_plans"`, `"claude_tasks"`, ...), one
            the session takes. None: ours when the session takes ours, else its only dialect
            (ConfigurationError when it takes several and not ours).
    """
    dialect, names = dialect_for(session, dialect)
    calls = shared_calls(session, _FRAMEWORK, lagging=True)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        result = await calls.apply(context.tool_call_id, context.tool_name, arguments)
        return result.content

    return [
        FunctionTool(
            name=name,
            description=tools.description(name, dialect=dialect),
            params_json_schema=tools.schema(name, all_required=True, dialect=dialect),
            on_invoke_tool=invoke,
            strict_json_schema=True,
        )
        for name in names
    ]


class PlanPreviews:
    """Streams plan steps to the client from `Runner.run_streamed(...).stream_events()`.

    One per run: its streamed calls are that run's alone.

    Args:
        session: The session the plan calls are previewed on, the one the plan tools run
            on.
    """

    def __init__(self, session: PlanSession) -> None:
        self._calls: Calls = shared_calls(session, _FRAMEWORK, lagging=True)
        self._calls.previewing = True
        self._run = self._calls.run()

    async def on_event(self, event: Any) -> None:
        """Take one stream event as the run yields it.

        Args:
            event: The event; only raw response events and tool outputs are read, the
                others ignored.
        """
        kind = getattr(event, "type", None)
        if kind == "run_item_stream_event":
            if getattr(event, "name", None) == "tool_output":  # answered: no tool runs it now
                raw = getattr(event.item, "raw_item", None)
                call_id = (raw or {}).get("call_id") if isinstance(raw, dict | None) else None
                call_id = call_id or getattr(raw, "call_id", None)
                if isinstance(call_id, str):
                    await self._run.end_call(call_id)
            return
        if kind != "raw_response_event":
            return
        data = event.data
        kind = getattr(data, "type", None)
        self._calls.stream_seen()
        if kind == "response.created":
            # A new response: the calls of the run's earlier ones have run by now.
            await self._run.end()
        elif kind == "response.output_item.added":
            item = data.item
            if getattr(item, "type", None) == "function_call":
                await self._run.start(item.id, item.call_id, item.name)
                await self._run.feed(item.id, item.arguments or "")
        elif kind == "response.function_call_arguments.delta":
            await self._run.feed(data.item_id, data.delta)
        elif kind == "response.function_call_arguments.done":
            self._run.done(data.item_id)
        elif kind == "response.output_item.done":
            self._run.done(data.item.id)

    async def aclose(self) -> None:
        """The run is over: the previews of every call no tool ran are taken back."""
        await self._run.end()

    async def __aenter__(self) -> PlanPreviews:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
