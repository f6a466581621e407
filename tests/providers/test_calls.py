"""`field_reader`: the stream adapters' dict-speed reads give exactly what `get` gives."""

from __future__ import annotations

from types import MappingProxyType, SimpleNamespace
from typing import Any, Literal

from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses import ResponseFunctionCallArgumentsDeltaEvent
from pydantic import BaseModel, ConfigDict, Field, create_model

from llm_plans.providers._base import field_reader, get

POOL = ("id", "index", "name", "arguments", "delta")
values = st.one_of(st.none(), st.sampled_from(["", "call_1", 0, 1, {}, []]))


@st.composite
def models(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, Any]]:
    """A pydantic class declaring some names of the pool, and the keys to build one from."""
    declared = draw(st.sets(st.sampled_from(POOL)))
    aliased = draw(st.sets(st.sampled_from(POOL)))  # an SDK may name a field apart on the wire
    extras: list[Literal["allow", "ignore"]] = ["allow", "ignore"]
    extra = draw(st.sampled_from(extras))
    fields: dict[str, Any] = {  # required: may be left unset
        name: (Any, Field(alias=name.upper()) if name in aliased else ...) for name in declared
    }
    drawn = create_model("Drawn", __config__=ConfigDict(extra=extra), **fields)
    kind: type[BaseModel] = drawn
    if draw(st.booleans()):  # a subclass answering one undeclared name itself

        class Sub(drawn):
            @property
            def label(self) -> str:
                return "sub"

        kind = Sub
    keys = st.sampled_from((*POOL, *(name.upper() for name in POOL), "label", "other"))
    return kind, draw(st.dictionaries(keys, values))


@given(drawn=models(), names=st.sets(st.sampled_from((*POOL, "label")), min_size=1))
def test_a_reader_answers_as_get_does_or_not_at_all(
    drawn: tuple[type[BaseModel], dict[str, Any]], names: set[str]
) -> None:
    kind, keys = drawn
    obj = kind.model_construct(**keys)  # as the SDKs build objects: unvalidated, names unset
    values = field_reader(*names)(obj)
    if values is not None:
        assert {n: values.get(n) for n in names} == {n: get(obj, n) for n in names}
    if names <= set(kind.model_fields):
        assert values is not None  # every declared name is read at dict speed, extras or not


def test_a_dict_is_read_as_itself_and_other_objects_not_at_all() -> None:
    read = field_reader("id")
    chunk = {"id": "c"}
    assert read(chunk) is chunk
    assert read(SimpleNamespace(id="c")) is None
    assert read(MappingProxyType(chunk)) is None
    assert read(None) is None


def test_an_sdk_object_with_extras_is_read_at_dict_speed() -> None:
    """OpenAI's `obfuscation` is an extra on Responses events: the declared fields still
    sit in `__dict__`."""
    event = ResponseFunctionCallArgumentsDeltaEvent.construct(
        type="response.function_call_arguments.delta",
        item_id="fc_1",
        output_index=0,
        delta='{"',
        sequence_number=4,
        obfuscation="aB3d",
    )
    assert event.__pydantic_extra__ == {"obfuscation": "aB3d"}
    values = field_reader("type", "item_id", "output_index", "delta")(event)
    assert values is not None
    assert values["delta"] == '{"'
    assert field_reader("obfuscation")(event) is None  # an extra: `get` reads it
    assert get(event, "obfuscation") == "aB3d"
