"""The plan tools for the OpenAI Agents SDK: `Agent(..., tools=plan_tools(session))`.

Install with `pip install "llm-plans[openai-agents]"`.

- Strict `FunctionTool`s named `create_plan`, `update_plan` and `remove_plan`, whose
  schemas are llm_plans' strict schemas. The model's raw JSON reaches the session, so repairs
  apply; a rejected call returns llm_plans' rejection text as the tool output (function call
  outputs carry no error flag in this SDK) and never raises into the run.
- Live previews: feed the run's stream events to a `PlanPreviews` on the same session. Each
  call is applied once: the tool finishes the streamed call when its stream was seen (waiting
  briefly for a consumer that lags behind the run), and otherwise applies the call itself,
  telling the previews to leave that call alone. Once a session's previews have seen a
  stream, its tools expect one: keep `PlanPreviews` to streamed runs (`Runner.run_streamed`)
  consumed to the end, or a call may wait up to 2 seconds for it.

Example:
    agent = Agent(name="coder", instructions=..., tools=plan_tools(session))
    result = Runner.run_streamed(agent, "fix the parser")
    previews = PlanPreviews(session)
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
from ._calls import shared_calls

__all__ = ["PlanPreviews", "plan_tools"]

_FRAMEWORK = "openai-agents"


def plan_tools(session: PlanSession) -> list[FunctionTool]:
    """The three plan tools as strict `FunctionTool`s running on `session`."""
    calls = shared_calls(session, _FRAMEWORK)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        result = await calls.run(context.tool_call_id, context.tool_name, arguments)
        return result.content

    return [
        FunctionTool(
            name=name,
            description=tools.description(name),
            params_json_schema=tools.schema(name, all_required=True),
            on_invoke_tool=invoke,
            strict_json_schema=True,
        )
        for name in tools.NAMES
    ]


class PlanPreviews:
    """Streams plan steps to the client from `Runner.run_streamed(...).stream_events()`."""

    def __init__(self, session: PlanSession) -> None:
        self._calls = shared_calls(session, _FRAMEWORK)
        self._calls.previewing = True

    async def on_event(self, event: Any) -> None:
        """Take one stream event as the run yields it (others than raw responses are ignored)."""
        if getattr(event, "type", None) != "raw_response_event":
            return
        data = event.data
        kind = getattr(data, "type", None)
        if kind == "response.created":
            await self._calls.reset()
        elif kind == "response.output_item.added":
            item = data.item
            if getattr(item, "type", None) == "function_call":
                await self._calls.start(item.id, item.call_id, item.name)
                await self._calls.feed(item.id, item.arguments or "")
        elif kind == "response.function_call_arguments.delta":
            await self._calls.feed(data.item_id, data.delta)
        elif kind == "response.function_call_arguments.done":
            self._calls.done(data.item_id)
        elif kind == "response.output_item.done":
            self._calls.done(data.item.id)
