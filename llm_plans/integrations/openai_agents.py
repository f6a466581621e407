"""The plan tools for the OpenAI Agents SDK: `Agent(..., tools=plan_tools(session))`.

Install with `pip install "llm-plans[openai-agents]"`.

- Strict `FunctionTool`s named `create_plan`, `update_plan` and `remove_plan`, whose
  schemas are llm_plans' strict schemas. The model's raw JSON reaches the session, so repairs
  apply; a rejected call returns llm_plans' rejection text as the tool output (function call
  outputs carry no error flag in this SDK) and never raises into the run.
- Live previews: feed the run's stream events to a `PlanPreviews` on the same session. Each
  call is applied once: the tool finishes the streamed call when its stream was seen (waiting
  briefly for a consumer that lags behind the run), and otherwise applies the call itself,
  telling the previews to leave that call alone.

Example:
    agent = Agent(name="coder", instructions=..., tools=plan_tools(session))
    result = Runner.run_streamed(agent, "fix the parser")
    previews = PlanPreviews(session)
    async for event in result.stream_events():
        await previews.on_event(event)
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from .. import tools
from .._feedback import ToolResult
from .._session import PlanSession
from ._calls import CallFeeder, run_call

__all__ = ["PlanPreviews", "plan_tools"]

# How long a tool waits for a stream consumer that is behind the run to reach the end of the
# call's arguments. Consumers handle events in microseconds; past this, one is not consuming.
CONSUMER_WAIT = 2.0


def plan_tools(session: PlanSession) -> list[FunctionTool]:
    """The three plan tools as strict `FunctionTool`s running on `session`."""
    coordinator = _coordinator(session)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        result = await coordinator.run(context.tool_call_id, context.tool_name, arguments)
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
        self._coordinator = _coordinator(session)
        self._coordinator.previewing = True

    async def on_event(self, event: Any) -> None:
        """Take one stream event as the run yields it (others than raw responses are ignored)."""
        if getattr(event, "type", None) == "raw_response_event":
            await self._coordinator.on_raw(event.data)


class _Coordinator:
    """What the tools and the previews of one session share: which calls the stream showed."""

    def __init__(self, session: PlanSession) -> None:
        self.session = session
        self._feeder = CallFeeder(session)
        self._item_calls: dict[str, str] = {}  # stream item id -> call id
        self._done: dict[str, asyncio.Event] = {}  # call id -> its arguments are complete
        self._settled: set[str] = set()  # call ids the tools applied before the stream showed them
        self.previewing = False

    async def on_raw(self, data: Any) -> None:
        kind = getattr(data, "type", None)
        if kind == "response.created":
            await self._feeder.reset()  # calls of an earlier response that never ran
            self._item_calls.clear()
            self._done = {c: e for c, e in self._done.items() if self.session.is_streaming(c)}
        elif kind == "response.output_item.added":
            item = data.item
            if getattr(item, "type", None) != "function_call":
                return
            if item.call_id in self._settled:
                self._settled.discard(item.call_id)  # already applied: no previews for it
                return
            self._item_calls[item.id] = item.call_id
            self._done[item.call_id] = asyncio.Event()
            await self._feeder.start(item.id, item.call_id, item.name)
            await self._feeder.feed(item.id, item.arguments or "")
        elif kind == "response.function_call_arguments.delta":
            await self._feeder.feed(data.item_id, data.delta)
        elif kind in ("response.function_call_arguments.done", "response.output_item.done"):
            item_id = data.item_id if kind.endswith("arguments.done") else data.item.id
            call_id = self._item_calls.get(item_id)
            if call_id is not None and call_id in self._done:
                self._done[call_id].set()

    async def run(self, call_id: str, name: str, arguments: str) -> ToolResult:
        done = self._done.get(call_id)
        if done is not None and self.session.is_streaming(call_id):
            try:
                await asyncio.wait_for(done.wait(), CONSUMER_WAIT)
            except asyncio.TimeoutError:
                await self.session.abort(call_id)  # the consumer stopped: apply what the run has
        elif done is None and self.previewing:
            self._settled.add(call_id)
        self._done.pop(call_id, None)
        return await run_call(self.session, call_id, name, arguments)


_COORDINATORS: weakref.WeakKeyDictionary[PlanSession, _Coordinator] = weakref.WeakKeyDictionary()


def _coordinator(session: PlanSession) -> _Coordinator:
    coordinator = _COORDINATORS.get(session)
    if coordinator is None:
        coordinator = _COORDINATORS[session] = _Coordinator(session)
    return coordinator
