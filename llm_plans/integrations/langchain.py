"""The plan tools for LangChain and LangGraph: `plan_tools(session)`.

Install with `pip install "llm-plans[langchain]"`.

- Async `BaseTool`s named `create_plan`, `update_plan` and `remove_plan` whose schemas are
  llm_plans' (strict-valid: `model.bind_tools(plan_tools(session), strict=True)` works). They
  run in LangGraph's `ToolNode` and prebuilt agents; the model's arguments reach the session
  as the chat model decoded them, so repairs apply, and as data: a key named `self`,
  `run_manager` or `config` is a field the session judges, never a Python keyword.
- A rejected call returns llm_plans' rejection text as a `ToolMessage` with
  `status="error"` and never raises into the graph; successful calls have `status="success"`.
- Live previews: pass `PlanPreviews(session)` as a callback
  (`config={"callbacks": [previews]}`) to a run whose chat model streams (`streaming=True`,
  or the graph run with `astream(..., stream_mode="messages")`). Plan steps reach the client
  while the model writes them; the tool then finishes the streamed call instead of applying
  it again, and a call the model left malformed (LangChain's `invalid_tool_calls`, which no
  tool runs) is rolled back.
- Streams are kept per model run (the callback's `run_id`) and per tool call id, so
  concurrent graph runs sharing one `PlanPreviews` and one set of tools never mix. A tool run
  with other arguments than were streamed (a human's review edit through `update_state`)
  applies those, taking back the streamed previews. When the outermost run the callback
  sees ends (the graph's `ainvoke` / `astream` returns, raises, or stops at an interrupt for
  review), the previews of its calls that no tool ran are taken back; a call approved later
  applies when its tool runs, with the arguments it runs with.

`dialect=`: whose plan tools the model is given. By default ours, or, for a session that does
not take ours, the tools of the one dialect it takes; `plan_tools(session, dialect="codex")`
gives Codex's `update_plan`. The session must take that dialect (`PlanSession(dialects=...)`),
else `ConfigurationError`. Previews work for every dialect alike.

The tools are async only: run the graph with `ainvoke` / `astream`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

try:
    from langchain_core.callbacks import AsyncCallbackHandler, AsyncCallbackManagerForToolRun
    from langchain_core.messages import AIMessage, AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk, LLMResult
    from langchain_core.tools import BaseTool, ToolException
except ImportError as missing:  # the framework is an optional extra
    raise ImportError(
        f'{missing}; install it with: pip install "llm-plans[langchain]"'
    ) from missing
from pydantic import ConfigDict

from .. import tools
from .._session import PlanSession
from ._calls import Calls, Run, shared_calls
from ._dialect import dialect_for

__all__ = ["PlanPreviews", "PlanTool", "plan_tools"]

_FRAMEWORK = "langchain"


class PlanTool(BaseTool):
    """One plan tool on a `PlanSession`; see `plan_tools`, which makes them. Takes
    `BaseTool`'s fields, and those below.

    Args:
        name: The tool's name as the model calls it (`create_plan`, or a dialect's, such as
            `update_plan` or `TaskCreate`); `plan_tools` sets it.
        description: What the model is told the tool does; `plan_tools` sets the dialect's
            description (`tools.description`).
        args_schema: The JSON schema of the tool's arguments; `plan_tools` sets the dialect's
            strict-valid schema (`tools.schema(..., all_required=True)`).
        return_direct: LangChain's: True ends the agent's loop with the tool's result. Left
            False, so the model reads the result.
        verbose: LangChain's: whether to log the tool's progress. Left at its default.
        callbacks: LangChain's: callbacks for this tool's runs. Left at its default; pass
            `PlanPreviews` in the run's config instead.
        tags: LangChain's: tags given to the tool's runs' callbacks. Left at its default.
        metadata: LangChain's: metadata given to the tool's runs' callbacks. Left at its
            default.
        handle_tool_error: How a `ToolException` is handled. True here: a rejected call is
            the model's `ToolMessage` with status `"error"`, the rejection its text.
        handle_validation_error: LangChain's: how an input that fails `args_schema` is
            handled. Unused: the arguments reach the session unvalidated, which judges them.
        response_format: LangChain's: whether the tool returns content or content and an
            artifact. Left `"content"`: the result is the session's text.
        extras: LangChain's: provider-specific tool options. Left at its default.
        session: The session the tool's calls run on.
    """

    session: PlanSession
    """The session the tool's calls run on."""
    handle_tool_error: bool = True
    """True: a rejected call is the model's `ToolMessage` with status `"error"`, the
    rejection its text, rather than an exception out of the graph."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        # The model's arguments are one value, handed over positionally: spread as keywords
        # (BaseTool's way), a key named `self` raised out of the graph run, `run_manager` was
        # overwritten by LangChain's own, and any key could meet a parameter. The call's id is
        # LangChain's (from a ToolCall), never read out of arguments that look like one. JSON
        # text input goes to the session as well, which decodes and repairs it.
        return (tool_input, tool_call_id), {}

    async def _arun(
        self,
        arguments: Any,
        call_id: str | None,
        /,
        *,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        calls = shared_calls(self.session, _FRAMEWORK)
        # The graph run this tool runs in, as `PlanPreviews` saw it start: its streams only.
        run = calls.runs_of.pop(run_manager.run_id, None) if run_manager is not None else None
        runs = None if run is None else [run]
        result = await calls.apply(call_id, self.name, arguments, runs=runs)
        if not result.ok:
            raise ToolException(result.content)
        return result.content

    def _run(self, *args: Any, **kwargs: Any) -> str:
        raise NotImplementedError("the plan tools are async: run the graph with ainvoke/astream")


def plan_tools(session: PlanSession, *, dialect: str | None = None) -> list[BaseTool]:
    """The plan tools of `dialect` (ours by default: `create_plan`, `update_plan` and
    `remove_plan`) as LangChain tools on `session`.

    Args:
        session: The session the tools' calls run on.
        dialect: The dialect whose tools to give (`"llm_plans"`, `"claude_tasks"`, ...), one
            the session takes. None: ours when the session takes ours, else its only dialect
            (ConfigurationError when it takes several and not ours).
    """
    dialect, names = dialect_for(session, dialect)
    return [
        PlanTool(
            name=name,
            description=tools.description(name, dialect=dialect),
            args_schema=tools.schema(name, all_required=True, dialect=dialect),
            session=session,
        )
        for name in names
    ]


class PlanPreviews(AsyncCallbackHandler):
    """A callback that streams plan steps to the client while a chat model writes them.

    Args:
        session: The session the plan calls are previewed on, the one the plan tools run
            on.
    """

    def __init__(self, session: PlanSession) -> None:
        self._calls: Calls = shared_calls(session, _FRAMEWORK)
        self._parents: dict[UUID, UUID | None] = {}  # runs under way -> their parent runs
        self._runs: dict[UUID, Run] = {}  # outermost run -> the plan calls streamed under it
        self._models: dict[UUID, dict[int, str]] = {}  # model run -> stream index -> call id

    def _run(self, run_id: UUID) -> Run:
        root = run_id
        while self._parents.get(root) is not None:
            root = self._parents[root] or root
        run = self._runs.get(root)
        if run is None:
            run = self._runs[root] = self._calls.run()
        return run

    async def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a chain run and its parent, to find the outermost run its plan calls stream under.

        Args:
            serialized: The chain, as LangChain serialized it (unused).
            inputs: The chain's inputs (unused).
            run_id: The id of the chain run.
            parent_run_id: The id of the run it runs in; None for an outermost run.
        """
        self._parents[run_id] = parent_run_id

    async def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a chat model run and its parent, to group its streamed plan calls with its run.

        Args:
            serialized: The chat model, as LangChain serialized it (unused).
            messages: The model's input messages (unused).
            run_id: The id of the model run.
            parent_run_id: The id of the run it runs in; None when it runs alone.
        """
        self._parents[run_id] = parent_run_id

    async def on_llm_start(
        self,
        serialized: Any,
        prompts: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a (non-chat) model run and its parent, as `on_chat_model_start` does.

        Args:
            serialized: The model, as LangChain serialized it (unused).
            prompts: The model's prompts (unused).
            run_id: The id of the model run.
            parent_run_id: The id of the run it runs in; None when it runs alone.
        """
        self._parents[run_id] = parent_run_id

    async def on_tool_start(
        self,
        serialized: Any,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Tell a plan tool about to run which graph run's streamed calls are its own.

        Args:
            serialized: The tool, as LangChain serialized it (unused).
            input_str: The tool's input as text (unused).
            run_id: The id of the tool run (`PlanTool` looks its streams up by it).
            parent_run_id: The id of the run the tool runs in.
        """
        # The tool finds the streams of its own graph run by this (PlanTool._arun).
        if parent_run_id is not None and parent_run_id in self._parents:
            self._calls.runs_of[run_id] = self._run(parent_run_id)

    async def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the tool run's link to its graph run's streams.

        Args:
            output: The tool's result (unused).
            run_id: The id of the tool run.
        """
        self._calls.runs_of.pop(run_id, None)

    async def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Forget the tool run's link to its graph run's streams.

        Args:
            error: What the tool raised (unused).
            run_id: The id of the tool run.
        """
        self._calls.runs_of.pop(run_id, None)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """When an outermost run ends, take back the previews of its calls that no tool ran.

        Args:
            outputs: The chain's outputs (unused).
            run_id: The id of the chain run.
        """
        await self._ended(run_id)

    async def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """When an outermost run fails, take back the previews of its calls that no tool ran.

        Args:
            error: What the chain raised (unused).
            run_id: The id of the chain run.
        """
        await self._ended(run_id)

    async def _ended(self, run_id: UUID) -> None:
        self._parents.pop(run_id, None)
        run = self._runs.pop(run_id, None)
        if run is not None:  # an outermost run: what no tool ran by now, none will
            await run.end()

    async def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: Any = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        """Feed the plan tool call pieces of a streamed chunk to their previews.

        Args:
            token: The new token text (unused: the tool call pieces are read from `chunk`).
            chunk: The streamed chunk; a chat chunk's `tool_call_chunks` are fed.
            run_id: The id of the model run.
        """
        if not isinstance(chunk, ChatGenerationChunk):
            return
        message = chunk.message
        if not isinstance(message, AIMessageChunk):
            return
        run = self._run(run_id)
        calls = self._models.setdefault(run_id, {})
        for piece in message.tool_call_chunks:
            index = piece.get("index") or 0
            key = (run_id, index)
            if piece.get("id") and piece.get("name"):
                calls[index] = str(piece["id"])
                await run.start(key, str(piece["id"]), str(piece["name"]))
            await run.feed(key, piece.get("args") or "")

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Take back the previews of calls the model left malformed, which no tool will run.

        Args:
            response: The model's result; a streamed call missing from its messages' `tool_calls`
                is malformed.
            run_id: The id of the model run.
        """
        calls = self._models.pop(run_id, {})
        valid: set[str] = set()
        for generations in response.generations:
            for generation in generations:
                message = getattr(generation, "message", None)
                if isinstance(message, AIMessage):
                    valid.update(str(call["id"]) for call in message.tool_calls)
        run = self._run(run_id)
        for index, call_id in calls.items():
            if call_id not in valid:  # malformed: no tool will run it
                await run.drop((run_id, index))
        self._leave(run_id)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Take back the previews of the failed model run's streamed calls.

        Args:
            error: What the model raised (unused).
            run_id: The id of the model run.
        """
        run = self._run(run_id)
        for index in self._models.pop(run_id, {}):
            await run.drop((run_id, index))
        self._leave(run_id)

    def _leave(self, run_id: UUID) -> None:
        # A model run seen without its outer runs (the callback given to the model alone):
        # its tools run after it, so its streams stay for them, registered with the session's
        # calls, rather than ended here.
        self._parents.pop(run_id, None)
        self._runs.pop(run_id, None)
