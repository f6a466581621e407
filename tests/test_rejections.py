"""Rejections stay small whatever the model sends, and say the same on every path.

A rejection names the first problems and how many more there are, and is at most
`MAX_REJECTION_BYTES`, for every tool (unknown ones too) and on every path a call takes:
`call()` with a dict or JSON text, and a streamed call finished from its fragments or from
the provider's final arguments.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import event, given, target
from hypothesis import strategies as st
from strategies import fragments

from llm_plans import Limits, PlanSession, ToolResult
from llm_plans._core.results import MAX_PROBLEMS_LISTED, MAX_REJECTION_BYTES, Problem, rejection
from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream
from llm_plans.testing import RecordingSend, anthropic_events, chat_chunks, responses_events
from llm_plans.tools import NAMES

# Values as long as the arguments' byte limit allows, in one- to four-byte characters.
_huge = st.builds(
    lambda char, n: char * n,
    st.sampled_from(["x", "é", "€", "😀", "\n", '"']),
    st.integers(0, 120_000),
)
_small = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.just([]), st.just({})
)
_bad_entry = st.one_of(
    _small,
    st.fixed_dictionaries({"content": _small, "status": _small, "priority": _small}),
    st.builds(lambda key, value: {"content": "a", key: value}, _huge, _small),
    st.builds(lambda value: {"content": value}, _huge),
)
_bad_change = st.one_of(
    _small,
    st.fixed_dictionaries({"step": _small, "status": _small}),
    st.builds(lambda step: {"step": step, "status": "completed"}, st.integers(-5, 10**6)),
    st.builds(lambda key: {"step": 1, key: 1}, _huge),
)


@st.composite
def many(draw: st.DrawFn, element: st.SearchStrategy[Any]) -> list[Any]:
    """A list of up to thousands of bad elements: a few drawn, repeated."""
    drawn = draw(st.lists(element, min_size=1, max_size=4))
    # Around the arguments' byte limit at most: past it a call is one problem, found fast.
    most = max(1, 700_000 // len(json.dumps(drawn)))
    return drawn * min(most, draw(st.sampled_from([1, 3, 50, 2_000])))


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": [value]}
    return value


@st.composite
def hostile_arguments(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(["type", "id", "entries", "changes", "content"]))):
        args[key] = draw(
            st.one_of(
                _small,
                _huge,
                many(_bad_entry if key == "entries" else _bad_change),
                st.builds(_nested, st.sampled_from([10, 200, 400])),
            )
        )
    if draw(st.booleans()):
        args["type"] = draw(st.sampled_from(["items", "markdown", "file", "nope"]))
    if draw(st.booleans()):
        args["id"] = draw(st.sampled_from(["work", "ghost", "x" * 70_000]))
    suffix = draw(st.sampled_from(["", "k" * 200]))
    for _ in range(draw(st.sampled_from([0, 1, 300, 3_000]))):
        args[f"unknown{len(args)}{suffix}"] = 1
    return args


_tools = st.one_of(
    st.sampled_from(["create_plan", "update_plan", "remove_plan"]),
    st.sampled_from(["make_plan", "x" * 100_000, "[/]\n\u2028tool"]),
)


async def _session() -> PlanSession:
    # Plans whose listings become a rejection's context: long steps, long ids, many plans.
    limits = Limits(max_plans=40)
    session = PlanSession(RecordingSend(), session_id="s", limits=limits)
    steps = [{"content": f"Step {n} " + "long words " * 90} for n in range(40)]
    assert (await session.call("create_plan", {"type": "items", "id": "work", "entries": steps})).ok
    for n in range(30):
        plan = {"type": "markdown", "id": f"{n}-" + "i" * 60, "content": "- x"}
        assert (await session.call("create_plan", plan)).ok
    return session


def check(content: str, label: str = "rejection bytes") -> None:
    assert len(content.encode("utf-8", "surrogatepass")) <= MAX_REJECTION_BYTES
    header = content.split("\n", 1)[0]
    found = re.search(r"\((\d+) problems?\)", header)
    assert found is not None, header
    total = int(found.group(1))
    listed = [line for line in content.split("\n")[1:] if line.startswith("- ")]
    more = total - MAX_PROBLEMS_LISTED
    event("some problems not listed" if more > 0 else "every problem listed")
    size = len(content.encode("utf-8", "surrogatepass"))
    event("near the byte bound" if size > MAX_REJECTION_BYTES // 2 else "short")
    target(float(size), label=label)
    if more > 0:
        plural = "problem" if more == 1 else "problems"
        assert f"- ... and {more} more {plural}, not listed here." in content
        assert len(listed) == MAX_PROBLEMS_LISTED + 1
    else:
        assert len(listed) == total


@given(
    tool=_tools,
    args=hostile_arguments(),
    how=st.sampled_from(["dict", "text", "stream", "handle"]),
)
async def test_a_rejection_is_bounded_on_every_path(
    tool: str, args: dict[str, Any], how: str
) -> None:
    session = await _session()
    text = json.dumps(args, ensure_ascii=False)
    if how == "stream" and tool in NAMES:
        for part in (text[i : i + 50_000] for i in range(0, len(text), 50_000)):
            await session.feed("c1", tool, part)
        result = await session.finish("c1")
    elif how == "handle" and tool in NAMES:
        # An OpenAI chat tool call as the SDK returns it: the result in its native shape.
        call = {"id": "c1", "type": "function", "function": {"name": tool, "arguments": text}}
        native = await session.handle(call)
        assert native is not None
        result = ToolResult(
            not native["content"].split("\n", 1)[0].endswith("changed."), native["content"]
        )
    else:
        result = await session.call(tool, args if how == "dict" else text)
    if result.ok:
        return  # a few draws are valid calls (a removal of "work")
    check(result.content)
    if how == "stream":
        # One text per problem on every path: the streamed call says what call() says.
        assert result.content == (await (await _session()).call(tool, text)).content


@given(
    count=st.sampled_from([11, 12, 500, 20_000]),
    final=st.sampled_from(["fed", "text", "dict"]),
)
async def test_a_streamed_finish_with_final_arguments_is_bounded(count: int, final: str) -> None:
    session = await _session()
    args = {"type": "items", "entries": [{"content": 1}] * count}
    text = json.dumps(args)
    await session.feed("c1", "create_plan", text[:100])
    if final == "fed":
        await session.feed("c1", "create_plan", text[100:])
        result = await session.finish("c1")
    else:
        result = await session.finish("c1", arguments=text if final == "text" else args)
    check(result.content)
    assert f"({count} problems)" in result.content
    assert f"- ... and {count - MAX_PROBLEMS_LISTED} more problem" in result.content


@given(
    steps=st.lists(st.integers(41, 10**9), min_size=1, max_size=4).map(lambda s: s * 100),
    text=st.sampled_from(["x", "€" * 50, "😀" * 100]),
)
async def test_a_rejection_with_context_is_bounded(steps: list[int], text: str) -> None:
    # Out-of-range steps of a plan with long steps: every problem comes with the plan's
    # numbered steps as context. Many plans with long ids: the ids come as context.
    session = await _session()
    changes = [{"step": step, "content": text} for step in steps]
    result = await session.call("update_plan", {"id": "work", "changes": changes})
    check(result.content)
    assert "steps not shown" in result.content or "more lines not shown" in result.content
    result = await session.call("create_plan", {"type": "markdown", "id": "work", "content": text})
    check(result.content, "ids context bytes")
    assert "Existing plan ids: " in result.content


_any_text = st.one_of(st.text(), _huge, st.sampled_from(["[/]", "\udfff", "a\nb" * 5_000]))


@given(
    tool=st.one_of(_tools, st.text()),
    problems=st.lists(
        st.builds(Problem, _any_text, _any_text, st.one_of(_small, _any_text)), max_size=15
    ).flatmap(lambda drawn: st.sampled_from([drawn, drawn * 1_000])),
    context=_any_text,
)
def test_the_bound_holds_for_any_problems_and_context(
    tool: str, problems: list[Problem], context: str
) -> None:
    # Whatever a future check puts in a problem (any path, message, value, context), the
    # rejection built from it stays under the bound.
    text = rejection(tool, problems, context=context)
    assert len(text.encode("utf-8", "surrogatepass")) <= MAX_REJECTION_BYTES
    target(float(len(text.encode("utf-8", "surrogatepass"))), label="rejection bytes")


async def test_few_problems_are_all_listed_as_before() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call(
        "create_plan", {"type": "items", "entries": [{"content": 1}] * MAX_PROBLEMS_LISTED}
    )
    assert result.content.count("expected a string") == MAX_PROBLEMS_LISTED
    assert "more problem" not in result.content


# ---- a lone surrogate gets one text on every path -------------------------------------------

_SURROGATE_ARGS = '{"type": "items", "entries": [{"content": "a\udfffb"}]}'


async def _plain(text: str) -> str:
    return (await PlanSession(RecordingSend(), session_id="s").call("create_plan", text)).content


async def _fed(parts: list[Any], final: Any = None) -> str:
    session = PlanSession(RecordingSend(), session_id="s")
    for part in parts:
        await session.feed("c1", "create_plan", part)
    return (await session.finish("c1", arguments=final)).content


async def _adapter(kind: str, text: str, size: int) -> str:
    session = PlanSession(RecordingSend(), session_id="s")
    call = ("call_1", "create_plan", text)
    if kind == "anthropic":
        stream: Any = AnthropicStream(session)
        events = anthropic_events([call], size=size)
        key = "content"
    elif kind == "chat":
        stream = OpenAIChatStream(session)
        events = chat_chunks([call], size=size)
        key = "content"
    else:
        stream = OpenAIResponsesStream(session)
        events = responses_events([call], size=size)
        key = "output"
    async with stream:
        for event in events:
            await stream.on_event(event)
        results = await stream.finish()
    assert len(results) == 1
    return str(results[0][key])


@given(
    where=st.integers(0, len(_SURROGATE_ARGS)),
    size=st.integers(1, 60),
    mixed=st.booleans(),
    data=st.data(),
)
async def test_a_lone_surrogate_gets_one_text_on_every_path(
    where: int, size: int, mixed: bool, data: st.DataObject
) -> None:
    text = _SURROGATE_ARGS
    expected = await _plain(text)
    assert "invalid Unicode (a lone surrogate" in expected
    assert (
        await PlanSession(RecordingSend(), session_id="s").call("create_plan", json.loads(text))
    ).content == expected
    parts = data.draw(fragments(text))
    if mixed:
        # Bytes beside the text (as adapters open a call with b""): still the text's problem.
        parts = [b"", *parts[:1], b"", *parts[1:]]
    assert await _fed(parts) == expected
    assert await _fed([text[:where]], final=text) == expected
    for kind in ("anthropic", "chat", "responses"):
        assert await _adapter(kind, text, size) == expected
