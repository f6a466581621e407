"""The stream adapters' fast path for the usual chunk (`_usual`, `_more`, `_stream`) does
exactly what their general path does: for any stream of chunks, in any form each level of a
chunk may take (dicts, SDK objects built by the SDK, SDK subclasses, pydantic models with
extras or with declared fields missing, plain objects, read-only mappings), an adapter with
the fast path makes the same session calls, in the same order, with the same results, as
one that reads every chunk with `get` on the general path.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import (
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)
from pydantic import BaseModel, ConfigDict

from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream
from llm_plans.providers._base import StreamAdapter
from llm_plans.testing import sdk_stream

PLAN_TOOLS = ("create_plan", "mcp__plans__create_plan")


class Recorder:
    """The session side of an adapter, noting every call made of it. `feed_nowait` says a
    preview is due at every `due`-th fragment, so that both `flush` paths are taken."""

    def __init__(self, due: int) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.due = due
        self.fed = 0

    def plan_tool(self, name: str) -> str | None:
        self.log.append(("plan_tool", name))
        return name if name in PLAN_TOOLS else None

    def feed_nowait(self, call_id: str, name: str, fragment: str | bytes) -> bool:
        self.fed += 1
        self.log.append(("feed", _plain(call_id), name, fragment))
        return self.fed % self.due == 0

    async def flush(self) -> None:
        self.log.append(("flush",))

    async def finish(self, call_id: str, *, truncated: bool = False, arguments: Any = None) -> Any:
        self.log.append(("finish", _plain(call_id), truncated, arguments))
        return SimpleNamespace(ok=True, content=f"done {_plain(call_id)}")

    async def abort(self, call_id: str) -> bool:
        self.log.append(("abort", _plain(call_id)))
        return True


def _plain(call_id: str) -> str:
    """A session call id without the adapter's serial number, which differs per adapter."""
    return re.sub(r"@\d+\.", "@", call_id)


def general(kind: type[StreamAdapter]) -> type[StreamAdapter]:
    """The adapter `kind` with its fast path off: every chunk goes the general path."""

    class General(kind):  # type: ignore[valid-type,misc]
        def _usual(self, event: Any) -> None:
            return None

        def _more(self, calls: Any, delta: Any) -> None:
            return None

        def _stream(self, call: Any, fragment: Any) -> None:
            return None

    return General


def run(
    kind: Callable[..., StreamAdapter], events: list[Any], due: int, **options: Any
) -> tuple[list[tuple[Any, ...]], Any]:
    """Feed the events, finish, and return the session calls and everything observable."""

    async def go() -> tuple[list[tuple[Any, ...]], Any]:
        session = Recorder(due)
        adapter = kind(session, **options)
        outcomes: list[Any] = []
        for event in events:
            try:
                await adapter.on_event(event)
                outcomes.append(None)
            except Exception as error:  # the same error, at the same event, on both paths
                outcomes.append(repr(error))
        results = await adapter.finish()
        dropped = await adapter.abort()
        seen: tuple[Any, ...] = (outcomes, results, dropped, adapter.truncated)
        if isinstance(adapter, OpenAIChatStream):
            seen += (adapter.results_for(0), adapter.results_for(1))
        return session.log, seen

    return asyncio.run(go())


def assert_same_as_general(
    kind: type[StreamAdapter], events: list[Any], reference: list[Any], due: int, **options: Any
) -> None:
    """The fast path on `events` does what the general path does on `reference` (the same
    stream, as dicts) and on `events` themselves."""
    fast = run(kind, events, due, **options)
    assert fast == run(general(kind), events, due, **options)
    assert fast == run(general(kind), reference, due, **options)


# ---- OpenAI chat ----------------------------------------------------------------------------

fragments = st.sampled_from(
    ['{"type":"items",', '"id":"p",', '"entries":[{"content":"a"}]}', "{}", "", "}", " ", "[1]"]
)
arguments = st.one_of(fragments, st.sampled_from([None, {}, {"id": "q"}, 7]))
names = st.sampled_from([*PLAN_TOOLS, "get_weather", "", None])


def optional(**keys: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional=keys)


any_tool_delta = optional(
    index=st.sampled_from([0, 1, None]),
    id=st.sampled_from(["call_a", "call_b", "", None]),
    type=st.sampled_from(["function", None]),
    function=st.one_of(st.none(), optional(name=names, arguments=arguments)),
)
usual_tool_delta = st.builds(
    lambda text, index, also: {"index": index, "function": {"arguments": text}, **also},
    fragments,
    st.sampled_from([0, 0, 0, 1]),
    # What some servers repeat on every delta (Alibaba's "" ids, LiteLLM's type, names).
    st.sampled_from(
        [{}, {}, {}, {"id": ""}, {"id": "call_a"}, {"id": "call_b"}, {"type": "function"}]
    ),
)
starting_tool_delta = st.builds(
    lambda call_id, name, index: {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    },
    st.sampled_from(["call_a", "call_b", ""]),
    st.sampled_from(PLAN_TOOLS),
    st.sampled_from([0, 1]),
)
tool_deltas = st.one_of(
    st.lists(usual_tool_delta, min_size=1, max_size=1),
    st.lists(st.one_of(usual_tool_delta, starting_tool_delta, any_tool_delta), max_size=2),
    st.none(),
)
deltas = st.builds(
    lambda tools, extra: {**extra, **({} if tools is None else {"tool_calls": tools})},
    tool_deltas,
    optional(role=st.just("assistant"), content=st.sampled_from([None, "", "Planning"])),
)
choices = st.builds(
    lambda delta, extra: {"delta": delta, **extra},
    deltas,
    optional(
        index=st.sampled_from([0, 0, 0, 1, None]),
        finish_reason=st.sampled_from([None, None, None, "", "tool_calls", "length"]),
        logprobs=st.none(),
    ),
)
any_chunk = st.builds(
    lambda listed, extra: {"choices": listed, **extra},
    st.one_of(st.lists(choices, min_size=1, max_size=1), st.lists(choices, max_size=2)),
    optional(
        id=st.sampled_from(["chatcmpl-1", "chatcmpl-1", "chatcmpl-2", None]),
        object=st.sampled_from(["chat.completion.chunk"] * 4 + ["chat.completion", None]),
        obfuscation=st.sampled_from(["aB3d", "F1wZCrV0lEsbu"]),
        usage=st.none(),
        type=st.sampled_from(["chunk", "content.delta", None]),
    ),
)


def chunk(delta: dict[str, Any], index: int = 0, reason: str | None = None) -> dict[str, Any]:
    choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": reason}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}


# Streams as servers send them (a call's id and name, then its argument text, a chunk a
# token), with any chunk at all mixed in: the fast path must be taken, and left, often.
usual_chunk = st.builds(
    lambda tool, chunk_id, name: {
        **chunk({"tool_calls": [{**tool, "function": {**tool["function"], **name}}]}),
        "id": chunk_id,
    },
    usual_tool_delta,
    st.sampled_from(["chatcmpl-1", "chatcmpl-1", "chatcmpl-2"]),
    st.sampled_from([{}, {}, {}, {"name": "create_plan"}, {"name": None}]),
)
starting_chunk = st.builds(lambda tool: chunk({"tool_calls": [tool]}), starting_tool_delta)
finishing_chunk = st.builds(
    lambda tool, reason, chunk_id: {**chunk({"tool_calls": [tool]}, 0, reason), "id": chunk_id},
    usual_tool_delta,
    st.sampled_from(["tool_calls", "length"]),
    st.sampled_from(["chatcmpl-1", "chatcmpl-2", None]),
)
chunks = st.one_of(
    usual_chunk, usual_chunk, usual_chunk, starting_chunk, finishing_chunk, any_chunk, any_chunk
)
streams = st.builds(
    lambda first, rest: [first, *rest], starting_chunk, st.lists(chunks, max_size=16)
)

# Each level of a chat chunk: its SDK class, and the names the fast path reads of it.
# The last name is one whose value, read as None, would let the fast path go on: a model
# declaring all but it (so it sits in the extras) must not be read from its `__dict__`.
LEVELS: dict[str, tuple[type[BaseModel], tuple[str, ...]]] = {
    "chunk": (ChatCompletionChunk, ("object", "choices", "id")),
    "choice": (Choice, ("index", "delta", "finish_reason")),
    "delta": (ChoiceDelta, ("tool_calls",)),
    "tool_call": (ChoiceDeltaToolCall, ("index", "function", "id")),
    "function": (ChoiceDeltaToolCallFunction, ("arguments", "name")),
}
FORMS = ("dict", "sdk", "subclass", "declares_all", "declares_some", "namespace", "mapping")


def _model(level: str, form: str) -> type[BaseModel]:
    """A pydantic class for one level: an SDK subclass with a field and a property of its
    own, or a model of ours that declares all or only some of what the fast path reads
    (extra="allow", so the rest lands in its extras)."""
    sdk, read = LEVELS[level]
    if form == "subclass":

        class Subclass(sdk):  # type: ignore[valid-type,misc]
            note: str | None = None

            @property
            def label(self) -> str:
                return level

        return Subclass
    declared = read if form == "declares_all" else read[:-1]
    annotations = dict.fromkeys(declared, Any)
    namespace = {"__annotations__": annotations, "model_config": ConfigDict(extra="allow")}
    return type(f"Ours_{level}_{form}", (BaseModel,), namespace)


MODELS = {
    (level, form): _model(level, form)
    for level in LEVELS
    for form in ("subclass", "declares_all", "declares_some")
}


def in_form(level: str, value: dict[str, Any], form: str) -> Any:
    """One level of a chunk (its children already converted) in the form drawn."""
    if form == "dict":
        return value
    if form == "sdk":  # as the SDK builds what it reads off the wire: no validation
        return LEVELS[level][0].construct(**value)
    if form == "subclass":
        return MODELS[level, form].construct(**value)
    if form in ("declares_all", "declares_some"):  # a declared name absent stays unset
        return MODELS[level, form].model_construct(**value)
    if form == "namespace":
        return SimpleNamespace(**value)
    return MappingProxyType(value)


def chunk_in_forms(chunk: dict[str, Any], form: Callable[[str], str]) -> Any:
    """The chunk with each of its objects in a form drawn for it."""

    def level(name: str, value: Any) -> Any:
        return in_form(name, value, form(name)) if isinstance(value, dict) else value

    def tool_call(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if isinstance(value.get("function"), dict):
            value = {**value, "function": level("function", value["function"])}
        return level("tool_call", value)

    def choice(value: dict[str, Any]) -> Any:
        delta = dict(value["delta"])
        if isinstance(delta.get("tool_calls"), list):
            delta["tool_calls"] = [tool_call(t) for t in delta["tool_calls"]]
        return level("choice", {**value, "delta": level("delta", delta)})

    return level("chunk", {**chunk, "choices": [choice(c) for c in chunk["choices"]]})


@settings(max_examples=200)
@given(
    stream=streams,
    data=st.data(),
    only=st.sampled_from([None, None, 0, 1]),
    wrapped=st.booleans(),
    due=st.integers(1, 4),
)
def test_chat_fast_path_does_what_the_general_path_does(
    stream: list[dict[str, Any]], data: Any, only: int | None, wrapped: bool, due: int
) -> None:
    forms = data.draw(st.fixed_dictionaries({name: st.sampled_from(FORMS) for name in LEVELS}))
    events = [chunk_in_forms(chunk, forms.__getitem__) for chunk in stream]
    if wrapped:  # as `chat.completions.stream(...)` yields them, a raw chunk in each event
        events = [{"type": "chunk", "chunk": event} for event in events]
        stream = [{"type": "chunk", "chunk": event} for event in stream]
    assert_same_as_general(OpenAIChatStream, events, stream, due, choice=only)


@given(
    text=st.lists(fragments, min_size=1, max_size=20),
    extra=st.sampled_from([{}, {"obfuscation": "aB3d"}]),
    due=st.integers(1, 4),
)
def test_chat_fast_path_on_what_the_sdk_yields(
    text: list[str], extra: dict[str, Any], due: int
) -> None:
    """Chunks built by the `openai` client itself from an SSE body."""
    head = {"index": 0, "id": "call_1", "type": "function"}
    stream = [
        {"tool_calls": [{**head, "function": {"name": "create_plan", "arguments": ""}}]},
        *({"tool_calls": [{"index": 0, "function": {"arguments": t}}]} for t in text),
    ]
    wire = [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
            **extra,
        }
        for delta in stream
    ]
    wire.append({**wire[0], "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    events = asyncio.run(sdk_stream("chat", wire))
    assert_same_as_general(OpenAIChatStream, events, wire, due)


# ---- OpenAI Responses and Anthropic: events of one level, by type ------------------------------

item_ids = st.sampled_from(["fc_1", "fc_2", "", None])


def responses_event(kind: str, where: dict[str, Any], value: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": f"response.{kind}", **where}
    if kind.startswith("output_item"):
        item = {"type": "function_call", "id": where.get("item_id"), "call_id": "call_1"}
        event = {"type": event["type"], "output_index": where.get("output_index"), "item": item}
        item.update(name=value if kind.endswith("added") else "create_plan", arguments="")
    elif kind.endswith("done"):
        event["arguments"] = value
    else:
        event["delta"] = value
    return event


responses_events = st.builds(
    responses_event,
    st.sampled_from(
        ["function_call_arguments.delta"] * 4
        + ["function_call_arguments.done", "output_item.added", "output_item.done"]
    ),
    optional(item_id=item_ids, output_index=st.sampled_from([0, 1, None])),
    st.one_of(arguments, names),
).map(lambda event: {**event, "sequence_number": 0})
responses_start = {
    "type": "response.output_item.added",
    "output_index": 0,
    "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "create_plan"},
}
responses_usual = st.builds(
    lambda text, where: {
        "type": "response.function_call_arguments.delta",
        **where,
        "delta": text,
        "sequence_number": 0,
        "obfuscation": "aB3d",
    },
    fragments,
    st.sampled_from(
        [{"item_id": "fc_1", "output_index": 0}] * 3
        + [{"item_id": "", "output_index": 0}, {"output_index": 0}, {"item_id": "fc_2"}]
    ),
)
responses_streams = st.builds(
    lambda rest: [responses_start, *rest],
    st.lists(
        st.one_of(
            responses_usual,
            responses_usual,
            responses_events,
            st.sampled_from(
                [{"type": "response.created", "response": {"id": "r"}}, {"type": "error"}]
            ),
        ),
        max_size=16,
    ),
)

anthropic_deltas = st.one_of(
    st.builds(
        lambda kind, text: {"type": kind, "partial_json": text},
        st.sampled_from(["input_json_delta", "input_json_delta", "text_delta", None]),
        arguments,
    ),
    optional(type=st.sampled_from(["input_json_delta", "text_delta"]), text=fragments),
)
anthropic_events = st.one_of(
    st.builds(
        lambda index, delta: {"type": "content_block_delta", "index": index, "delta": delta},
        st.sampled_from([0, 0, 1, None]),
        anthropic_deltas,
    ),
    st.builds(
        lambda index, name, given: {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": f"toolu_{index}", "name": name, **given},
        },
        st.sampled_from([0, 1]),
        names,
        optional(input=st.sampled_from([{}, {"id": "q"}])),
    ),
    st.builds(
        lambda index: {"type": "content_block_stop", "index": index}, st.sampled_from([0, 1])
    ),
    st.sampled_from([{"type": "ping"}, {"type": "message_delta", "delta": {"stop_reason": None}}]),
)
anthropic_start = st.builds(
    lambda given: {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_0", "name": "create_plan", **given},
    },
    # A gateway may send the whole input here; streamed text then replaces it.
    st.sampled_from([{"input": {}}, {"input": {}}, {"input": {"id": "q"}}, {}]),
)
anthropic_usual = st.builds(
    lambda text: {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": text},
    },
    fragments,
)
anthropic_streams = st.builds(
    lambda start, rest: [start, *rest],
    anthropic_start,
    st.lists(st.one_of(anthropic_usual, anthropic_usual, anthropic_events), max_size=16),
)


class DeltaEvent(BaseModel):
    """A delta event of our own: declares some of what the fast path reads, the rest extras."""

    model_config = ConfigDict(extra="allow")
    type: str
    delta: Any = None


def event_in_form(event: dict[str, Any], form: str) -> Any:
    if form == "namespace":
        return SimpleNamespace(**event)
    if form == "mapping":
        return MappingProxyType(event)
    if form == "declares_some":
        return DeltaEvent.model_construct(**event)
    return event


@pytest.mark.parametrize("kind", [OpenAIResponsesStream, AnthropicStream])
@settings(max_examples=200)
@given(data=st.data(), due=st.integers(1, 4))
def test_event_fast_paths_do_what_the_general_paths_do(
    kind: type[StreamAdapter], data: Any, due: int
) -> None:
    """Dicts, objects of other kinds, and the SDK's own objects built from an SSE body."""
    if kind is AnthropicStream:
        api, stream = "anthropic", data.draw(anthropic_streams)
        stream = [{"type": "message_start", "message": {"id": "msg_1"}}, *stream]
    else:
        api, stream = "responses", data.draw(responses_streams)
    form = data.draw(st.sampled_from(["sdk", "dict", "namespace", "mapping", "declares_some"]))
    if form == "sdk":
        events = asyncio.run(sdk_stream(api, stream))
        reference = [e for e in stream if e["type"] != "ping"]  # the SDK drops pings
    else:
        events, reference = [event_in_form(e, form) for e in stream], stream
    assert_same_as_general(kind, events, reference, due)


def test_a_chunk_id_read_on_the_fast_path_tells_the_next_response() -> None:
    """The usual chunk's id is kept, as the general path keeps it: after a finish without
    an id, a chunk with another id starts a new response."""
    start = chunk(
        {"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "create_plan"}}]}
    )
    usual = {**chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}), "id": "c2"}
    finish = {**chunk({}, 0, "tool_calls"), "id": None}
    stream = [start, usual, finish, chunk({"content": "Next turn"})]
    assert_same_as_general(OpenAIChatStream, stream, stream, 2)
    _, (_, results, *_) = run(OpenAIChatStream, stream, 2)
    assert results == []  # the chunk after the finish began another response


class Spy:
    """Counts the events an adapter took on its fast path."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kind: type[StreamAdapter]) -> None:
        self.fast = 0
        usual = kind._usual

        def counted(adapter: Any, event: Any) -> bool | None:
            due = usual(adapter, event)
            self.fast += due is not None
            return due

        monkeypatch.setattr(kind, "_usual", counted)


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_the_sdks_own_objects_take_the_fast_path(monkeypatch: pytest.MonkeyPatch, api: str) -> None:
    """Each argument fragment of a stream as the API sends it today, extras included
    (OpenAI's `obfuscation`), built by the SDK from the SSE body, is taken on the fast path:
    that is what makes an SDK object cost about what a dict does (benchmark e4). The shapes
    are the benchmark's own."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    import streamed

    make = {"chat": streamed.chat_chunks, "responses": streamed.responses_events}
    wire = make.get(api, streamed.anthropic_events)(3)
    kind = {"chat": OpenAIChatStream, "responses": OpenAIResponsesStream}.get(api, AnthropicStream)
    spy = Spy(monkeypatch, kind)
    events = asyncio.run(sdk_stream(api, wire))
    assert_same_as_general(kind, events, [e for e in wire if e.get("type") != "ping"], 3)
    assert spy.fast == len(streamed.split(streamed.create_text(3)[0]))


def _usual(text: str, index: int = 0, **also: Any) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": text}, **also}]})


def _start(call_id: str, index: int = 0, text: str = "") -> dict[str, Any]:
    function = {"name": "create_plan", "arguments": text}
    return chunk({"tool_calls": [{"index": index, "id": call_id, "function": function}]})


def _delta(index: int, text: Any, kind: str = "input_json_delta") -> dict[str, Any]:
    delta = {"type": kind, "partial_json": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _arguments(text: str, **where: Any) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", **where, "delta": text}


_BLOCK = {"type": "tool_use", "id": "toolu_1", "name": "create_plan"}
_ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "create_plan"}

# Each chunk the fast path must leave to the general path (or take just as it does), one case
# each, as hypothesis may take long to meet some of them by chance.
CASES: dict[str, tuple[type[StreamAdapter], list[dict[str, Any]]]] = {
    "a delta for a parallel call that is not the latest": (
        OpenAIChatStream,
        [_start("call_a"), _start("call_b", 1), _usual('{"a"', 0), _usual('{"b"', 1)],
    ),
    "the last text in the finishing chunk": (
        OpenAIChatStream,
        [
            _start("call_a"),
            _usual("{"),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}, 0, "length"),
        ],
    ),
    "a name again after a complete call, no id (Gemini)": (
        OpenAIChatStream,
        [_start(""), _usual("{}"), _start("", text="{}")],
    ),
    "another call's id on a delta": (
        OpenAIChatStream,
        [_start("call_a"), _usual("{", id="call_b")],
    ),
    "a chunk that is another event of the stream helper": (
        OpenAIChatStream,
        [_start("call_a"), {**_usual("{"), "object": None, "type": "content.delta"}],
    ),
    "text for a choice that finished": (
        OpenAIChatStream,
        [_start("call_a"), _usual("{}"), chunk({}, 0, "tool_calls"), _usual("{}")],
    ),
    "streamed text after a gateway's whole input": (
        AnthropicStream,
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {**_BLOCK, "input": {"id": "q"}},
            },
            _delta(0, '{"id":'),
            _delta(0, '"p"}'),
        ],
    ),
    "a text delta that carries partial_json": (
        AnthropicStream,
        [
            {"type": "content_block_start", "index": 0, "content_block": _BLOCK},
            _delta(0, "{", "text_delta"),
        ],
    ),
    "text after the block stopped": (
        AnthropicStream,
        [
            {"type": "content_block_start", "index": 0, "content_block": _BLOCK},
            _delta(0, "{}"),
            {"type": "content_block_stop", "index": 0},
            _delta(0, "{}"),
        ],
    ),
    "a delta found by its output index (no item id)": (
        OpenAIResponsesStream,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": _ITEM},
            _arguments("{", output_index=0),
            _arguments("}", item_id="", output_index=0),
        ],
    ),
    "text after the arguments were done": (
        OpenAIResponsesStream,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": _ITEM},
            _arguments("{}", item_id="fc_1", output_index=0),
            {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": "{}"},
            _arguments("{}", item_id="fc_1", output_index=0),
        ],
    ),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("due", [1, 2])
def test_each_case_the_fast_path_must_tell_apart(case: str, due: int) -> None:
    kind, stream = CASES[case]
    assert_same_as_general(kind, stream, stream, due)


# ---- sessions of one's own, and garbage indexes (found by review) -----------------------------


class _RaisesOnce(Recorder):
    """A session that refuses the second fragment, as one of a caller's own may."""

    def feed_nowait(self, call_id: str, name: str, fragment: str | bytes) -> bool:
        due = super().feed_nowait(call_id, name, fragment)
        if self.fed == 2:
            raise RuntimeError("refused")
        return due


class _SaysNothing(Recorder):
    """A session whose feed_nowait forgets to return whether a preview is due."""

    def feed_nowait(self, call_id: str, name: str, fragment: str | bytes) -> bool:
        super().feed_nowait(call_id, name, fragment)
        return None  # type: ignore[return-value]


def _chunk(chunk_id: str, call: Any = None, index: Any = 0, reason: Any = None) -> Any:
    delta = {} if call is None else {"tool_calls": [call]}
    choice = {"index": index, "delta": delta, "finish_reason": reason}
    return {"id": chunk_id, "object": "chat.completion.chunk", "choices": [choice]}


_CALL_A = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "create_plan"}}
_CALL_B = {**_CALL_A, "id": "call_b"}


def _more(text: str, index: Any = 0) -> Any:
    return {"index": index, "function": {"arguments": text}}


_GATEWAY = [
    {"type": "message_start", "message": {}},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {
            "type": "tool_use",
            "id": "tu1",
            "name": "create_plan",
            "input": {"a": 1},
        },
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 0},
]
_RESPONSES = [
    {"type": "response.created", "response": {}},
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {
            "type": "function_call",
            "id": "fc1",
            "call_id": "c1",
            "name": "create_plan",
            "arguments": "",
        },
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc1",
        "output_index": 0,
        "delta": "{}",
    },
]


@pytest.mark.parametrize(
    ("kind", "events", "session", "options"),
    [
        # a choice index that is no int, while following choice 0
        (
            OpenAIChatStream,
            [_chunk("c1", _CALL_A), _chunk("c1", _more("{"), index=[1])],
            Recorder,
            {"choice": 0},
        ),
        # a tool call index that is no int, then the same chunk id finishing and going on
        (
            OpenAIChatStream,
            [
                _chunk("c1", _CALL_A),
                _chunk("c2", _more("{}", [0])),
                _chunk("c2", _more("{}")),
                _chunk("c2", reason="tool_calls"),
                _chunk("c2", _CALL_B),
            ],
            Recorder,
            {},
        ),
        # the session refuses a fragment of a chunk with a new id: the id is kept all the same
        (
            OpenAIChatStream,
            [
                _chunk("c1", _CALL_A),
                _chunk("c2", _more("{}")),
                _chunk("c2", reason="stop"),
                _chunk("c2", _CALL_B),
            ],
            _RaisesOnce,
            {},
        ),
        # a gateway's whole input, then streamed text the session refuses: the text is the input
        (AnthropicStream, _GATEWAY, _RaisesOnce, {}),
        (AnthropicStream, _GATEWAY, _SaysNothing, {}),
        (OpenAIResponsesStream, _RESPONSES, _SaysNothing, {}),
        (OpenAIChatStream, [_chunk("c1", _CALL_A), _chunk("c1", _more("{}"))], _SaysNothing, {}),
    ],
)
def test_the_fast_path_stays_the_general_one_when_things_go_wrong(
    kind: type[StreamAdapter],
    events: list[Any],
    session: type[Recorder],
    options: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "Recorder", session)
    assert run(kind, events, 1000, **options) == run(general(kind), events, 1000, **options)
