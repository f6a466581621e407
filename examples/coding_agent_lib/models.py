"""Model backends for the agent loop: OpenAI Chat Completions, OpenAI Responses, Anthropic.

Each keeps the conversation in its API's own format, streams a reply (text to the user,
plan tool calls into the `PlanSession` as they are written) and returns the other tool calls
for the agent to run. A reply that does not finish (the stream broke, the turn was cancelled)
closes its HTTP response and aborts the plan calls it streamed: their previews are taken back
on the client, and their ids are free for the next call, as for a rejected call.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from llm_plans import PlanSession, tools
from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream

from .retries import with_retries
from .workspace import definitions

OnText = Callable[[str], Awaitable[None]]


@dataclass
class ToolUse:
    id: str
    name: str
    arguments: str
    """JSON text."""


@dataclass
class Reply:
    uses: list[ToolUse] = field(default_factory=list)
    plan_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Native results of the plan tool calls, already run while streaming, by call id."""


class Backend:
    """A conversation with one model API."""

    label = ""
    client: Any = None

    @property
    def endpoint(self) -> str:
        """The API's base URL, for messages about it."""
        return str(getattr(self.client, "base_url", "")) or self.label

    def add_user(self, text: str) -> None:
        raise NotImplementedError

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        raise NotImplementedError

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        """A coding tool's result in this API's format."""
        raise NotImplementedError

    def add_results(self, results: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def state(self) -> dict[str, Any] | None:
        """What the agent keeps with the session after each turn, for `restore` after a
        `session/load`: JSON values, or None for nothing (the API backends keep none)."""
        return None

    def restore(self, state: dict[str, Any]) -> None:
        """Take back a loaded session's `state()`."""


class OpenAIChat(Backend):
    def __init__(self, client: Any, model: str, system: str) -> None:
        self.client, self.model, self.label = client, model, f"OpenAI chat ({model})"
        self.messages: list[Any] = [{"role": "system", "content": system}]
        self.tools = tools.openai_chat() + definitions("openai_chat")

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        stream = await with_retries(
            lambda: self.client.chat.completions.create(
                model=self.model, messages=self.messages, tools=self.tools, stream=True
            ),
            on_retry=on_text,
        )
        text: list[str] = []
        async with stream, OpenAIChatStream(plans) as adapter:
            async for chunk in stream:
                await adapter.on_event(chunk)
                for choice in chunk.choices:
                    if choice.delta.content:
                        text.append(choice.delta.content)
                        await on_text(choice.delta.content)
            results = await adapter.finish()
        # The adapter's record of the calls, not one of our own: servers key streamed calls
        # differently (Gemini and Ollama send parallel calls all at index 0), and a record
        # keyed another way would merge or split the calls the session applied.
        calls = adapter.tool_calls()
        uses = [ToolUse(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)
        return Reply(uses, {r["tool_call_id"]: r for r in results})

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": use.id, "content": text}

    def add_results(self, results: list[dict[str, Any]]) -> None:
        self.messages += results


class OpenAIResponses(Backend):
    def __init__(self, client: Any, model: str, system: str) -> None:
        self.client, self.model, self.label = client, model, f"OpenAI Responses ({model})"
        self.system = system
        self.items: list[Any] = []
        self.tools = tools.openai_responses() + definitions("openai_responses")

    def add_user(self, text: str) -> None:
        self.items.append({"role": "user", "content": text})

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        stream = await with_retries(
            lambda: self.client.responses.create(
                model=self.model,
                instructions=self.system,
                input=self.items,
                tools=self.tools,
                stream=True,
            ),
            on_retry=on_text,
        )
        output: list[Any] = []
        async with stream, OpenAIResponsesStream(plans) as adapter:
            async for event in stream:
                await adapter.on_event(event)
                if event.type == "response.output_text.delta":
                    await on_text(event.delta)
                elif event.type == "response.output_item.done":
                    output.append(event.item)
                elif event.type == "response.completed" and event.response.output:
                    # The whole output, as the adapter finishes its calls from it: servers
                    # that skip `output_item.done` have their calls there only.
                    output = list(event.response.output)
            results = await adapter.finish()
        self.items += [item.model_dump(exclude_none=True) for item in output]
        uses = [
            ToolUse(i.call_id, i.name, i.arguments) for i in output if i.type == "function_call"
        ]
        return Reply(uses, {r["call_id"]: r for r in results})

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": use.id, "output": text}

    def add_results(self, results: list[dict[str, Any]]) -> None:
        self.items += results


class Anthropic(Backend):
    # Room for a long plan and a file written in one reply.
    MAX_TOKENS = 8192

    def __init__(self, client: Any, model: str, system: str) -> None:
        self.client, self.model, self.label = client, model, f"Anthropic ({model})"
        self.system = system
        self.messages: list[Any] = []
        self.tools = tools.anthropic() + definitions("anthropic")

    def add_user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        stream = await with_retries(
            lambda: self.client.messages.create(
                model=self.model,
                max_tokens=self.MAX_TOKENS,
                system=self.system,
                messages=self.messages,
                tools=self.tools,
                stream=True,
            ),
            on_retry=on_text,
        )
        blocks: dict[int, dict[str, Any]] = {}
        async with stream, AnthropicStream(plans) as adapter:
            async for event in stream:
                await adapter.on_event(event)
                if event.type == "content_block_start":
                    blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                    blocks[event.index].setdefault("partial", "")
                elif event.type == "content_block_delta":
                    block = blocks[event.index]
                    if event.delta.type == "text_delta":
                        block["text"] += event.delta.text
                        await on_text(event.delta.text)
                    elif event.delta.type == "input_json_delta":
                        block["partial"] += event.delta.partial_json
            results = await adapter.finish()
        content = []
        uses = []
        for index in sorted(blocks):
            block = blocks[index]
            partial = block.pop("partial")
            if block["type"] == "tool_use":
                # As the adapter reads it: streamed text, when some came, is the input, else
                # the input given whole at the block's start (as gateways send it).
                given = block.get("input") or {}
                uses.append(ToolUse(block["id"], block["name"], partial or json.dumps(given)))
                try:
                    block["input"] = json.loads(partial) if partial else given
                except json.JSONDecodeError:
                    block["input"] = {}  # cut off by max_tokens: its result says so
            if block["type"] in ("text", "tool_use"):
                content.append(block)
        self.messages.append({"role": "assistant", "content": content})
        return Reply(uses, {r["tool_use_id"]: r for r in results})

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": not ok}

    def add_results(self, results: list[dict[str, Any]]) -> None:
        self.messages.append({"role": "user", "content": results})
