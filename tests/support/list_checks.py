"""Checks every list dialect's tests share (`codex`, `write_todos`, `cursor`, `claude_todos`,
`opencode`, `vibe`): a scripted run sends compliant notifications, a streamed call ends as the
same call sent whole, and a hostile call is answered without changing anything."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import strategies as st
from spec_shapes import check
from strategies import fragments

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

CAPS: dict[str, Any] = {"schema": {"plan": {}}, "legacy": {}}
STATUSES = ("pending", "in_progress", "completed", "cancelled")


def session(dialect: str, form: str = "schema", **kwargs: Any) -> tuple[PlanSession, RecordingSend]:
    send = RecordingSend()
    kwargs.setdefault("dialects", dialect)
    kwargs.setdefault("stream_interval", 0)
    plans = PlanSession(send, session_id="s", client_capabilities=CAPS[form], **kwargs)
    return plans, send


async def scripted_updates(
    dialect: str, form: str, tool: str, script: Iterable[dict[str, Any]]
) -> list[Any]:
    """The updates a session of `dialect` sends in `form` for calls that must all apply, each
    notification checked against the published shapes."""
    plans, send = session(dialect, form)
    for args in script:
        result = await plans.call(tool, args)
        assert result.ok, result.content
    for params in send.sent:
        check(form, params)
    return send.updates


async def streamed_as_plain(
    dialect: str,
    tool: str,
    before: Sequence[Any],
    args: dict[str, Any],
    list_field: str,
    parts: Iterable[str | bytes],
) -> None:
    """`args` fed in `parts` ends exactly as `args` sent whole (result, state, last
    notification), after the calls `before`; every preview is what the call with only its
    first k items would have made, for some k (never a half-written item)."""
    plain, plain_send = session(dialect)
    streamed, streamed_send = session(dialect)
    for earlier in before:
        assert (await plain.call(tool, earlier)).ok
        assert (await streamed.call(tool, earlier)).ok
    start = plain.snapshot()
    sent_before = len(streamed_send.sent)
    whole = await plain.call(tool, json.dumps(args))
    for part in parts:
        await streamed.feed("call-1", tool, part)
    done = await streamed.finish("call-1")
    assert (done.ok, done.content, done.plan_id) == (whole.ok, whole.content, whole.plan_id)
    assert streamed.snapshot() == plain.snapshot()
    if whole.ok:
        assert streamed_send.updates[-1] == plain_send.updates[-1]
    previews = streamed_send.updates[sent_before:]
    if not previews:
        return
    prefixes = []
    for k in range(1, len(args[list_field]) + 1):
        one, one_send = session(dialect)
        one.restore(start)
        if (await one.call(tool, {**args, list_field: args[list_field][:k]})).ok:
            prefixes.append(one_send.updates[-1])
    # A rejected call's last notification takes its previews back: the list as it was, or
    # its removal when there was none.
    taken_back = (
        plain_send.updates[len(before) - 1]
        if before
        else {"sessionUpdate": "plan_removed", "planId": "main"}
    )
    for update in previews:
        check("schema", {"sessionId": "s", "update": update})
        assert update in prefixes or update == taken_back
    if not whole.ok:
        assert streamed_send.updates[-1] == taken_back


@st.composite
def sent_parts(draw: st.DrawFn, args: dict[str, Any]) -> list[Any]:
    """`args` as a model's stream carries them, cut anywhere: JSON text with or without
    escapes for non-ASCII characters, or its UTF-8 bytes (cut inside a character too)."""
    form = draw(st.sampled_from(["ascii", "text", "bytes"]))
    text = json.dumps(args, ensure_ascii=form == "ascii")
    return draw(fragments(text.encode() if form == "bytes" else text, most=8))


def broken(args: dict[str, Any], list_field: str) -> dict[str, Any]:
    """`args` with a status no dialect takes in its last item: streamed, its earlier items
    show as previews that the rejection then takes back."""
    items = copy.deepcopy(args[list_field])
    items[-1]["status"] = "on fire"
    return {**args, list_field: items}


# ---- hostile input ---------------------------------------------------------------------------

# No key or text here can spell one of the core's own field names (`entries`, `content`), so a
# rejection that names one leaked the core's terms.
_WORDS = st.sampled_from(
    ["", " ", "x", "Step one", "done", "DONE", "blocked", "7", "\u00e9\U0001f600"]
)
_KEYS = st.sampled_from(["colour", "step", "status", "id", "todos", "plan", "merge", "note"])
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _WORDS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, args: dict[str, Any], list_field: str) -> Any:
    """`args` with one to three things broken or changed: a value of any JSON type where a
    field was, a field dropped or unknown, an item replaced, the list replaced."""
    out: Any = copy.deepcopy(args)
    for _ in range(draw(st.integers(1, 3))):
        items = out.get(list_field) if isinstance(out, dict) else None
        choice = draw(st.integers(0, 5))
        if choice == 0 or not isinstance(out, dict):
            out = draw(JSON_VALUES) if draw(st.booleans()) else out
        elif choice == 1:
            out[draw(_KEYS)] = draw(JSON_VALUES)
        elif choice == 2 and out:
            del out[draw(st.sampled_from(sorted(out)))]
        elif choice == 3:
            out[list_field] = draw(JSON_VALUES)
        elif isinstance(items, list) and items:
            index = draw(st.integers(0, len(items) - 1))
            item = items[index]
            if choice == 4 or not isinstance(item, dict):
                items[index] = draw(JSON_VALUES)
            elif draw(st.booleans()) and item:
                del item[draw(st.sampled_from(sorted(item)))]
            else:
                item[draw(_KEYS)] = draw(JSON_VALUES)
    return out


_PATH = re.compile(r"^- ([A-Za-z_]\w*)(?:\[\d+\])*(?:\.(\w+))?: ")


async def answered_safely(
    plans: PlanSession, send: RecordingSend, tool: str, args: Any, fields: dict[str, set[str]]
) -> bool:
    """Call `tool` with `args`: a rejection changes nothing, sends nothing and names only the
    dialect's own fields (`fields`: top-level field to the fields of its items); an accepted
    call leaves a compliant list of our statuses. True when accepted."""
    before, sent = plans.snapshot(), len(send.sent)
    result = await plans.call(tool, args)
    if not result.ok:
        assert (plans.snapshot(), len(send.sent)) == (before, sent)
        lines = result.content.split("\n")
        assert lines[0].startswith(f"{tool} was not applied (")
        assert lines[-1] == f"Fix the errors and call {tool} again."
        for line in lines[1:-1]:
            found = _PATH.match(line)
            if found is None:
                continue
            top, inner = found.groups()
            # An unknown field is named as sent; every other path is one of the dialect's.
            if "not a known field" in line:
                continue
            assert top in fields, line
            assert inner is None or inner in fields[top], line
        return False
    for params in send.sent[sent:]:
        check("schema", params)
    plan = plans.plans["main"]
    for item in plan.entries:  # type: ignore[union-attr]
        assert item.status in STATUSES
        assert item.content.strip()
    return True
