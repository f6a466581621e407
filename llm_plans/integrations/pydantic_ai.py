"""The plan tools as a pydantic-ai toolset: `Agent(model, toolsets=[PlanToolset(session)])`.

Install with `pip install "llm-plans[pydantic-ai]"`.

- The model's raw arguments reach the session untouched (no pydantic-ai schema validation
  first), so llm_plans repairs what models get wrong, doubly encoded arguments included.
- A rejected call comes back to the model as llm_plans' rejection text through
  `ToolFailed`: a tool result with outcome `'failed'` (the provider's error channel, e.g.
  Anthropic's `is_error`). `ToolFailed` does not consume pydantic-ai's retry budget, so invalid
  plan calls never end the run however many there are; bound a run with
  `UsageLimits(tool_calls_limit=...)` if you need to.
- Plan tools are `sequential`: calls in one response apply in the order the model made them.
- `dialect=`: whose plan tools the model is given. By default ours (`create_plan`,
  `update_plan`, `remove_plan`), or, for a session that does not take ours, the tools of the
  one dialect it takes; `PlanToolset(session, dialect="claude_todos")` gives `TodoWrite`. The
  session must take that dialect (`PlanSession(dialects=...)`), else `ConfigurationError`.
- Schemas are llm_plans' strict-valid ones (every field required, nulls allowed), each type
  list (`["string", "null"]`) spelled as an `anyOf` of one-type branches: the same arguments
  valid, and pydantic-ai's `TestModel` can make them up offline. `strict` is left to
  pydantic-ai (`None`): OpenAI models then send the tools strict, and Anthropic models
  non-strict (pydantic-ai's default for them). On APIs without an error field for tool
  results (OpenAI), pydantic-ai sends a failed call's text as `{"error": text}`.
- Live previews: add `capabilities=[toolset.previews()]` to the `Agent` (or pass
  `event_stream_handler=toolset.event_stream_handler` to `agent.run`, or call
  `await toolset.on_event(event)` from your own handler). The run then streams, steps reach the
  client while the model writes them, and running the tool finishes the streamed call instead
  of applying it again. Streams are kept per run (`RunContext.run_id`) and per tool call id,
  so concurrent runs sharing one toolset never mix. A tool run with other arguments than
  were streamed applies those, taking back the streamed previews; a call streamed by a run
  that never ran its tool (the run ended, failed or was cancelled first) is aborted, rolled
  back on the client, when that run ends. A run whose model cannot stream (a `FunctionModel`
  without a `stream_function`) is not made to: it runs unstreamed, without previews.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from typing import Any, Literal

try:
    from pydantic_ai import RunContext, ToolDefinition
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.messages import PartDeltaEvent, PartStartEvent, ToolCallPart, ToolCallPartDelta
    from pydantic_ai.models import Model
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[pydantic-ai]"'
    ) from missing

from .. import tools
from .._session import PlanSession
from ._any_of import without_type_lists
from ._calls import Calls, Run
from ._dialect import dialect_for

__all__ = ["PlanToolset"]

_RAW = "arguments"


class _Raw:
    """An args validator that validates nothing: the session does, after repairing."""

    def validate_json(
        self,
        input: str | bytes | bytearray,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        return {_RAW: input if isinstance(input, str) else bytes(input).decode()}

    def validate_python(
        self,
        input: Any,
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        return {_RAW: input}


class PlanToolset(AbstractToolset[Any]):
    """The plan tools of one dialect (ours by default: `create_plan`, `update_plan` and
    `remove_plan`) for a pydantic-ai agent, on one session.

    Args:
        session: The session the tools' calls run on.
        strict: The tools' `strict` flag (structured outputs where the model supports
            them). None: pydantic-ai's default for the model.
        id: The toolset's id, unique among the agent's toolsets; durable execution
            (Temporal) needs one. None: none.
        dialect: The dialect whose tools to give (`"llm_plans"`, `"claude_tasks"`, ...), one
            the session takes. None: ours when the session takes ours, else its only dialect
            (ConfigurationError when it takes several and not ours).

    Example:
        plans = PlanToolset(session)
        agent = Agent(model, toolsets=[plans], capabilities=[plans.previews()])
    """

    def __init__(
        self,
        session: PlanSession,
        *,
        strict: bool | None = None,
        id: str | None = None,
        dialect: str | None = None,
    ):
        self.session = session
        self.dialect, self._names = dialect_for(session, dialect)
        """The dialect whose tools the model is given."""
        self._strict = strict
        self._id = id
        self._calls = Calls(session)
        self._runs: dict[str | None, _RunStream] = {}  # run id -> its streamed plan calls

    @property
    def id(self) -> str | None:
        return self._id

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        """The toolset one agent run uses: this one, tied to the run's streamed previews.

        Args:
            ctx: The run's context, as pydantic-ai passes it; its `run_id` names the run.
        """
        # The run's own toolset: entered for the run alone, and left when it ends however it
        # ends, which is when its streamed calls that never ran are taken back.
        if not self._runs.keys() - {None}:
            await self._end_unowned()  # fed without a run context, by a run that is over
        self._stream(ctx.run_id).users += 1
        return _RunToolset(self, ctx.run_id)

    def _stream(self, run_id: str | None) -> _RunStream:
        stream = self._runs.get(run_id)
        if stream is None:
            stream = self._runs[run_id] = _RunStream(self._calls.run())
        return stream

    async def _end(self, run_id: str | None) -> None:
        stream = self._runs.get(run_id)
        if stream is not None:
            stream.users -= 1
            if stream.users <= 0:
                del self._runs[run_id]
                await stream.run.end()
        if not self._runs.keys() - {None}:
            await self._end_unowned()

    async def _end_unowned(self) -> None:
        # Events fed without a run context belong to no known run: they end when no run is on.
        unowned = self._runs.get(None)
        if unowned is not None and unowned.users <= 0:
            del self._runs[None]
            await unowned.run.end()

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The dialect's plan tools, by name, with llm_plans' descriptions and schemas.

        Args:
            ctx: The run's context, as pydantic-ai passes it (unused: the tools are the same
                for every run).
        """
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    description=tools.description(name, dialect=self.dialect),
                    parameters_json_schema=without_type_lists(
                        tools.schema(name, all_required=True, dialect=self.dialect)
                    ),
                    strict=self._strict,
                    sequential=True,
                ),
                max_retries=0,  # never used: invalid calls are results, not retries
                args_validator=_Raw(),
            )
            for name in self._names
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run one plan call on the session; a rejected call raises `ToolFailed` with the
        rejection as its text.

        Args:
            name: The tool's name, as the model called it.
            tool_args: The model's arguments, as the toolset's pass-through validator kept
                them (the session decodes, repairs and judges them).
            ctx: The run's context; its `tool_call_id` and `run_id` name the call and its
                run's streamed previews.
            tool: The tool as `get_tools` gave it (unused).
        """
        runs = (self._runs.get(ctx.run_id), self._runs.get(None))
        result = await self._calls.apply(
            ctx.tool_call_id, name, tool_args[_RAW], runs=[r.run for r in runs if r is not None]
        )
        if not result.ok:
            raise ToolFailed(result.content)
        return result.content

    def previews(self) -> AbstractCapability[Any]:
        """A capability for `Agent(capabilities=[...])` that streams plan steps to the client."""
        return _Previews(self)

    async def event_stream_handler(self, ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
        """An `event_stream_handler` for `Agent(...)` or `agent.run(...)`: live plan previews.

        Args:
            ctx: The run's context, as pydantic-ai passes it.
            events: The run's stream events, as pydantic-ai passes them.
        """
        async for event in events:
            await self.on_event(event, ctx)

    async def on_event(self, event: Any, ctx: RunContext[Any] | None = None) -> None:
        """Take one event of the agent's stream; plan calls' arguments are fed as they grow.

        Args:
            event: The event; those about no tool call part are ignored.
            ctx: The run's context (an event stream handler gets it): streams are kept per
                run. None: events count as one run's, whose calls end with the last run.
        """
        stream = self._stream(ctx.run_id if ctx is not None else None)
        run, parts = stream.run, stream.parts
        if isinstance(event, PartStartEvent):
            await run.drop(event.index)
            parts.pop(event.index, None)
            if isinstance(event.part, ToolCallPart):
                part = event.part
                parts[event.index] = _Part(part.tool_name, part.tool_call_id)
                await run.start(event.index, part.tool_call_id, part.tool_name)
                await _grow(run, parts, event.index, part.args)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, ToolCallPartDelta):
            delta = event.delta
            known = parts.get(event.index)
            if known is None:
                return
            if delta.tool_name_delta or delta.tool_call_id not in (None, known.call_id):
                # The name or id is only now complete: start over with what is known so far.
                known.name += delta.tool_name_delta or ""
                known.call_id = delta.tool_call_id or known.call_id
                await run.start(event.index, known.call_id, known.name)
                await run.feed(event.index, "".join(known.fragments))
            await _grow(run, parts, event.index, delta.args_delta)


async def _grow(run: Run, parts: dict[int, _Part], index: int, args: Any) -> None:
    if isinstance(args, str):
        parts[index].fragments.append(args)
        await run.feed(index, args)
    elif args:
        await run.drop(index)  # decoded arguments: the tool run applies them


@dataclass
class _RunStream:
    """One run's streamed plan calls, and its tool call parts as streamed so far."""

    run: Run
    parts: dict[int, _Part] = field(default_factory=dict)  # stream index -> the part
    users: int = 0  # entries into the run (for_run calls) not yet left


@dataclass
class _RunToolset(WrapperToolset[Any]):
    """A `PlanToolset` as one run uses it: leaving it ends the run's streams."""

    run_id: str | None = None

    @property
    def id(self) -> str | None:
        return self.wrapped.id

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        try:
            return await self.wrapped.__aexit__(*args)
        finally:
            owner = self.wrapped
            assert isinstance(owner, PlanToolset)
            await owner._end(self.run_id)


@dataclass
class _Part:
    """A tool call part as streamed so far."""

    name: str
    call_id: str
    fragments: list[str] = field(default_factory=list)


@dataclass
class _Previews(AbstractCapability[Any]):
    """Feeds the run's event stream to a `PlanToolset` before anything else sees each event."""

    toolset: PlanToolset

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        # Observing the event stream makes pydantic-ai stream the run; a model that cannot
        # (a `FunctionModel` without a stream function) then fails. Its run goes unstreamed
        # and without previews instead: the tool runs still apply every call.
        return self if _streams(ctx.model) else _NoPreviews()

    async def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[Any]
    ) -> AsyncIterable[Any]:
        # In line rather than in a task: every fragment is fed before the tools run.
        async for event in stream:
            await self.toolset.on_event(event, ctx)
            yield event


class _NoPreviews(AbstractCapability[Any]):
    """`_Previews` for a run whose model cannot stream: no hook, so the run does not stream."""


def _streams(model: Any) -> bool:
    """Whether a pydantic-ai model can answer a streamed request."""
    while isinstance(model, WrapperModel):  # instrumentation and the like stream as they wrap
        model = model.wrapped
    if isinstance(model, FunctionModel):
        return model.stream_function is not None
    if isinstance(model, FallbackModel):  # a streamed run may fall back to any of them
        return all(_streams(fallback) for fallback in model.models)
    return type(model).request_stream is not Model.request_stream
