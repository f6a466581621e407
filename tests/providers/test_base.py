"""What every stream adapter shares: telling when a call's JSON text is whole, at a cost
linear in the text however the deltas are cut."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import fragments

from llm_plans import PlanSession
from llm_plans.providers import OpenAIChatStream
from llm_plans.providers import _base as base
from llm_plans.testing import RecordingSend, chat_chunk

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.sampled_from('ab"\\{}[] é\n')),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@st.composite
def json_like(draw: st.DrawFn) -> str:
    """JSON texts, whole, cut short, or with something after them."""
    text = json.dumps(draw(_values), ensure_ascii=draw(st.booleans()))
    how = draw(st.sampled_from(["whole", "cut", "tail", "space"]))
    if how == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if how == "tail":
        return text + draw(st.sampled_from(["}", "]", "x", ' "a"', "{}"]))
    if how == "space":
        return " \n" + text + " \n"
    return text


def whole(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, (dict, list))


@given(data=st.data(), text=json_like())
def test_a_call_is_whole_exactly_when_its_text_is_one_object_or_array(
    data: st.DataObject, text: str
) -> None:
    call = base.StreamedCall(None, "create_plan", "create_plan")
    for part in data.draw(fragments(text, most=8)) if text else []:
        call.add(part)
        assert call.is_complete_json() == whole("".join(call.parts))


async def test_a_long_stream_of_closing_brackets_is_parsed_at_most_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every delta ends in "}" and repeats the name with an empty id (as Gemini's server does):
    # each asks whether the call is whole. The text is parsed only once its brackets close.
    parses: list[int] = []
    real = json.loads

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parses.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr("llm_plans.providers._base.json.loads", counting)
    parts = ['{"type": "markdown", "content": "', *["}}}}"] * 5_000, '"}']

    async def run() -> list[dict[str, Any]]:
        session = PlanSession(RecordingSend(), session_id="s", client_capabilities={"plan": {}})
        async with OpenAIChatStream(session) as stream:
            for part in parts:
                delta: dict[str, Any] = {"index": 0, "id": "", "function": {"name": "create_plan"}}
                delta["function"]["arguments"] = part
                await stream.on_event(chat_chunk({"tool_calls": [delta]}))
            await stream.on_event(chat_chunk({}, "tool_calls"))
            return await stream.finish()

    results = await run()
    assert len(results) == 1
    assert results[0]["content"].startswith('Created plan "plan-1"')
    assert len(parses) <= 1
