"""A tool call's arguments: strict JSON in, validated fields out, or the problems for the model.

Everything a model may send takes one path: a dict is serialised to JSON text first, text is
encoded to UTF-8, and the bytes are size-checked and parsed strictly (no NaN or Infinity, no
lone surrogates, no duplicate keys, bounded nesting). Only then are the fields validated, and
only arguments that fail validation are repaired and validated again. The usual call of our
own tools is parsed and validated in one pass instead, where a count proves the answer is
the strict path's (`one_pass`); `tests/core/test_arguments.py` holds the two paths equal. That
pass also holds each step's text to the session's length limit, so that building the plan
need not measure the texts again (`parse_bounded`).

The validators here mirror the public argument models in `_models.py` as TypedDicts: they
return plain dicts (entries ready to send) at a fraction of the cost of model instances.
`tests/core/test_arguments.py` checks the two agree field for field.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, TypeAdapter
from pydantic import ValidationError as _ValidationError
from typing_extensions import Required, TypedDict

from .._limits import Limits
from .._models import PlanType, Priority, Status, ToolName
from . import results
from .plans import CONTENT
from .repair import Undecodable, decode_bytes
from .results import Problem

if TYPE_CHECKING:
    from .tool import PlanTool


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


_Text = Annotated[str, AfterValidator(_not_blank)]
_StepText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_FORBID = ConfigDict(extra="forbid")


# What the fast paths count on, kept here where it could change: fields come out in the
# order declared (an entry's is the wire's, which `build(validated=True)` keeps as it is) and
# no field has a default (validation adds no key, which the key count in `one_pass` needs).
# Extra keys are forbidden: `one_pass` alone ignores them, and its count sends any to the
# strict path, which refuses them.


class EntryArgs(TypedDict, total=False):
    content: Required[_StepText]
    priority: Priority | None
    status: Status | None
    _meta: dict[str, Any] | None


EntryArgs.__pydantic_config__ = _FORBID  # type: ignore[attr-defined]


class ChangeArgs(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    step: Required[Annotated[int, Field(ge=1)]]
    status: Status | None
    priority: Priority | None
    content: _StepText | None


class CreateArgs(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    type: Required[PlanType]
    id: str | None
    entries: list[EntryArgs] | None
    content: _Text | None
    uri: _Text | None


class UpdateArgs(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    id: Required[str]
    type: PlanType | None
    entries: list[EntryArgs] | None
    content: _Text | None
    uri: _Text | None
    changes: list[ChangeArgs] | None


class RemoveArgs(TypedDict, total=False):
    __pydantic_config__ = _FORBID  # type: ignore[misc]
    id: Required[str]


_TYPES: dict[ToolName, Any] = {
    "create_plan": CreateArgs,
    "update_plan": UpdateArgs,
    "remove_plan": RemoveArgs,
}
ADAPTERS: dict[ToolName, TypeAdapter[Any]] = {
    tool: TypeAdapter(fields) for tool, fields in _TYPES.items()
}
_FIELDS: dict[ToolName, tuple[str, ...]] = {
    tool: tuple(adapter.json_schema()["properties"]) for tool, adapter in ADAPTERS.items()
}


class Rejection(Exception):
    """The call cannot be applied; `problems` say why, `context` helps the model fix it."""

    def __init__(self, problems: list[Problem], context: str = "") -> None:
        super().__init__(problems)
        self.problems = problems
        self.context = context


@dataclass(frozen=True)
class Decoded:
    """Arguments already parsed strictly (a streamed call's final parts): no re-encoding."""

    value: Any


def parse(tool: PlanTool, arguments: Any, limits: Limits, *, size: int | None = None) -> Any:
    """The validated arguments of one call, as a dict; raises `Rejection`.

    `size` is the byte count of the arguments when they are known to be longer than what
    is passed (a stream that stopped keeping text past the limit).
    """
    return parse_bounded(tool, arguments, limits, size=size)[0]


def parse_bounded(
    tool: PlanTool, arguments: Any, limits: Limits, *, size: int | None = None
) -> tuple[Any, bool]:
    """`parse`, and whether every entry's text is known to be within
    `limits.max_entry_chars`: a tool's quick parse (ours: `one_pass`) holds the texts to it
    as it parses, so that building the plan need not measure them again (the `Call`
    carries that to `usual_items` as `texts_checked`). A plain pair: it is made on every
    call, and a named tuple's constructor costs about 0.2 µs more."""
    if isinstance(arguments, Decoded):
        value = arguments.value
    elif not tool.needs_arguments and _nothing(arguments):
        # A tool without required arguments (`TaskList`) called with none at all: APIs
        # stream such a call as an empty text ("" in Anthropic's input_json_delta).
        value = {}
    else:
        data = _as_bytes(arguments)
        total = len(data) if size is None else size
        if total > limits.max_arguments_bytes:
            raise Rejection(
                [
                    Problem(
                        "",
                        f"the arguments are {total} bytes; at most "
                        f"{limits.max_arguments_bytes} are accepted. Send a shorter plan.",
                    )
                ]
            )
        if tool.quick_parse is not None:
            chars = _text_bound(limits)
            quick = tool.quick_parse(data, chars)
            if quick is not None:
                return quick, chars is not None
        try:
            value = decode_bytes(data)
        except Undecodable as exc:
            if exc.truncated:
                raise Rejection([Problem("", tool.cut_off)]) from None
            raise Rejection([Problem("", f"{exc}. Send one JSON object.")]) from None
    return validate(tool, value), False


def one_pass(tool: ToolName, data: bytes, chars: int | None) -> Any | None:
    """The validated arguments from pydantic's own parse of the bytes, in one pass, when that
    provably equals the strict path's answer and every entry's text is at most `chars` long
    (any length when None); None to take the strict path (which reports a longer text as the
    limits do).

    pydantic's JSON parser keeps the last of duplicate keys and takes NaN where `_meta` allows
    any value, both of which the strict path refuses; and this parse ignores extra keys in
    place of refusing them (refusing costs a quarter of the parse: 15 µs of 57 at 100
    entries). The proof is a count: each key of the text has one `:` after it and every
    other `:` is inside a string; without escapes every such colon is still in a parsed
    string unless that string was dropped with a duplicate or extra key (field names have
    none). So colons in the text minus colons in the strings counted below equals the keys
    counted below exactly when no key was dropped and there is nothing else:
    a non-empty `_meta` (its keys are not counted) takes the strict path, as does anything
    with an escape, a rejection or a repair. The usual call needs no string read at all:
    the text has at least as many colons as keys, so when it has exactly as many colons as
    keys counted, no string holds one and no key was dropped. Every other field is typed,
    so NaN, Infinity and deep nesting fail validation here. The count holds while
    validation adds no key (no field defaults) and the strings it counts are every field
    that can hold a colon.
    """
    if b"\\" in data:  # memchr speed; an escape such as \\u003a hides a colon from the count
        return None
    try:
        adapter = ADAPTERS[tool] if chars is None else _bounded(tool, chars)
        args = adapter.validate_json(data, extra="ignore")
    except _ValidationError:
        return None
    keys = len(args)
    entries, changes = args.get("entries"), args.get("changes")
    if entries:  # at C speed: this runs for every step of the plan
        keys += sum(map(len, entries))
    if changes:
        keys += sum(map(len, changes))
    colons = data.count(b":")
    if colons == keys:
        return args  # the usual call: no string holds a colon, so no key can have been dropped
    for field in ("id", "content", "uri"):
        text = args.get(field)
        if text is not None:
            colons -= text.count(":")
    if entries:
        colons -= "".join(map(CONTENT, entries)).count(":")
    if changes:
        colons -= "".join(filter(None, map(dict.get, changes, repeat("content")))).count(":")
    return args if colons == keys else None


def _text_bound(limits: Limits) -> int | None:
    """The length the one pass holds entry texts to: `max_entry_chars` when pydantic can take
    it (a whole number, at most the longest a text can be); None for any other value (a
    float such as `math.inf`, a negative number), which the builder measures against as it
    always did."""
    chars = limits.max_entry_chars
    if type(chars) is not int or chars < 0:
        return None
    return min(chars, sys.maxsize)


@functools.lru_cache(maxsize=128)
def _bounded(tool: ToolName, chars: int) -> TypeAdapter[Any]:
    """`tool`'s validator with each entry's text, once stripped, at most `chars` long: the
    same fields, and a text's length checked as pydantic parses it, at no cost (a pass of
    its own costs 4 µs at 100 entries). Made once per limit (about 2 ms), and kept for the
    last 128 limits the process used."""
    fields = get_type_hints(_TYPES[tool], include_extras=True)
    if "entries" not in fields:
        return ADAPTERS[tool]
    entry_fields = get_type_hints(EntryArgs, include_extras=True)
    entry_fields["content"] = Required[Annotated[_StepText, StringConstraints(max_length=chars)]]
    entry = TypedDict("EntryArgs", entry_fields, total=False)  # type: ignore[misc]
    entry.__pydantic_config__ = _FORBID  # type: ignore[attr-defined]
    fields["entries"] = list[entry] | None
    bounded = TypedDict(_TYPES[tool].__name__, fields, total=False)  # type: ignore[misc]
    bounded.__pydantic_config__ = _FORBID  # type: ignore[attr-defined]
    return TypeAdapter(bounded)


def _nothing(arguments: Any) -> bool:
    if arguments is None:
        return True
    return isinstance(arguments, (str, bytes, bytearray)) and not arguments.strip()


def validate(tool: PlanTool, value: Any) -> Any:
    """Validated fields of decoded arguments, repairing common mistakes when needed."""
    adapter, fix = tool.adapter, tool.repair
    try:
        return adapter.validate_python(value)
    except _ValidationError:
        pass
    try:
        value = fix(value)
    except Undecodable as exc:
        raise Rejection([Problem("", f"{exc}. Send one JSON object.")]) from None
    if not isinstance(value, dict):
        raise Rejection([Problem("", "the arguments must be a JSON object.", value)])
    # A step sent as a JSON string was parsed from its own root, so it may nest deeper than
    # the whole call may: hold the repaired call to the rules of one JSON text, as a snapshot
    # of the plan will be held when it is restored.
    try:
        decode_bytes(_as_bytes(value))
    except Undecodable as exc:
        raise Rejection([Problem("", f"{exc}. Send one JSON object.")]) from None
    try:
        return adapter.validate_python(value)
    except _ValidationError as exc:
        raise Rejection(results.from_validation_error(exc, tool.fields, tool.nested)) from None


def _as_bytes(arguments: Any) -> bytes:
    if isinstance(arguments, str):  # the usual: the text a model wrote
        text = arguments
    elif isinstance(arguments, (bytes, bytearray, memoryview)):
        return bytes(arguments)
    elif isinstance(arguments, Mapping):
        text = _dumps(arguments)
    elif arguments is None:
        raise Rejection([Problem("", "the arguments are missing. Send one JSON object.")])
    else:
        raise Rejection([Problem("", "the arguments must be a JSON object.", repr(arguments))])
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise Rejection([_INVALID_UNICODE]) from None


_INVALID_UNICODE = Problem(
    "",
    "the arguments contain invalid Unicode (a lone surrogate such as \\udfff). "
    "Send text of valid characters only.",
)


def _dumps(arguments: Mapping[str, Any]) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        if "JSON compliant" in str(exc):
            message = "NaN and Infinity are not JSON numbers; send finite numbers or strings."
        else:
            message = f"the arguments are not JSON ({exc}); send one JSON object."
        raise Rejection([Problem("", message)]) from None
    except RecursionError:
        raise Rejection([Problem("", "the arguments are nested too deeply.")]) from None
    except TypeError as exc:
        raise Rejection([Problem("", f"the arguments are not JSON ({exc}).")]) from None


def valid_as_sent(tool: PlanTool, value: Any) -> Any | None:
    """`value`'s fields validated as `validate` gives them when they need no repair; None
    when they need one or fail (the caller then takes `validate`'s whole way)."""
    try:
        return tool.adapter.validate_python(value)
    except _ValidationError:
        return None
