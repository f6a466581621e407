"""The plan tools for LangChain and LangGraph: `plan_tools(session)`.

Install with `pip install "llm-plans[langchain]"`.

- Async `BaseTool`s named `create_plan`, `update_plan` and `remove_plan` whose schemas are
  llm_plans' (strict-valid: `model.bind_tools(plan_tools(session), strict=True)` works). They
  run in LangGraph's `ToolNode` and prebuilt agents; the model's arguments reach the session
  as the chat model decoded them, so repairs apply.
- A rejected call returns llm_plans' rejection text as a `ToolMessage` with
  `status="error"` and never raises into the graph; successful calls have `status="success"`.
- Live previews: pass `PlanPreviews(session)` as a callback
  (`config={"callbacks": [previews]}`) to a run whose chat model streams (`streaming=True`,
  or the graph run with `astream(..., stream_mode="messages")`). Plan steps reach the client
  while the model writes them; the tool then finishes the streamed call instead of applying
  it again, and a call the model left malformed (LangChain's `invalid_tool_calls`, which no
  tool runs) is rolled back.

The tools are async only: run the graph with `ainvoke` / `astream`.
"""

from __future__ import annotations

import contextvars
from typing import Any
from uuid import UUID

try:
    from langchain_core.callbacks import AsyncCallbackHandler
    from langchain_core.messages import AIMessage, AIMessageChunk, ToolCall
    from langchain_core.outputs import ChatGenerationChunk, LLMResult
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool, ToolException
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[langchain]"'
    ) from missing
from pydantic import ConfigDict

from .. import tools
from .._session import PlanSession
from ._calls import CallFeeder, run_call

__all__ = ["PlanPreviews", "PlanTool", "plan_tools"]

# The id of the tool call being run: LangChain passes it to `ainvoke` but not to `_arun`.
_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("call_id", default=None)


class PlanTool(BaseTool):
    """One plan tool on a `PlanSession`; see `plan_tools`."""

    session: PlanSession
    handle_tool_error: bool = True  # a rejection is a ToolMessage with status "error"

    model_config = ConfigDict(arbitrary_types_allowed=True)

    async def ainvoke(
        self,
        input: str | dict[str, Any] | ToolCall,
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        call_id = input.get("id") if isinstance(input, dict) and "args" in input else None
        token = _CALL_ID.set(call_id)
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def _arun(self, **arguments: Any) -> str:
        result = await run_call(self.session, _CALL_ID.get(), self.name, arguments)
        if not result.ok:
            raise ToolException(result.content)
        return result.content

    def _run(self, **arguments: Any) -> str:
        raise NotImplementedError("the plan tools are async: run the graph with ainvoke/astream")


def plan_tools(session: PlanSession) -> list[BaseTool]:
    """`create_plan`, `update_plan` and `remove_plan` as LangChain tools on `session`."""
    return [
        PlanTool(
            name=name,
            description=tools.description(name),
            args_schema=tools.schema(name, all_required=True),
            session=session,
        )
        for name in tools.NAMES
    ]


class PlanPreviews(AsyncCallbackHandler):
    """A callback that streams plan steps to the client while a chat model writes them."""

    def __init__(self, session: PlanSession) -> None:
        self._feeder = CallFeeder(session)
        self._calls: dict[UUID, dict[int, str]] = {}  # model run -> stream index -> call id

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: Any = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        if not isinstance(chunk, ChatGenerationChunk):
            return
        message = chunk.message
        if not isinstance(message, AIMessageChunk):
            return
        calls = self._calls.setdefault(run_id, {})
        for piece in message.tool_call_chunks:
            index = piece.get("index") or 0
            key = (run_id, index)
            if piece.get("id") and piece.get("name"):
                calls[index] = str(piece["id"])
                await self._feeder.start(key, str(piece["id"]), str(piece["name"]))
            await self._feeder.feed(key, piece.get("args") or "")

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        calls = self._calls.pop(run_id, {})
        valid: set[str] = set()
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                if isinstance(message, AIMessage):
                    valid.update(str(call["id"]) for call in message.tool_calls)
        for index, call_id in calls.items():
            if call_id not in valid:  # malformed: no tool will run it
                await self._feeder.drop((run_id, index))

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        for index in self._calls.pop(run_id, {}):
            await self._feeder.drop((run_id, index))
