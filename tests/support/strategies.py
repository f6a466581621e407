"""Hypothesis strategies for what a model sends to the plan tools.

Three families, for any test that drives `PlanSession`:

- valid arguments (`create_args`, `update_args`, `remove_args`): every plan kind, `changes` by
  step number, keys in random order, optional fields null or missing;
- `repairable(args)`: the same arguments with the mistakes README says are repaired (enum
  casing and separators, status synonyms, lists sent as JSON strings, doubly encoded
  arguments), so they mean exactly what `args` means;
- `hostile(...)`: deep nesting, NaN and Infinity, lone surrogates, invalid UTF-8, duplicate
  keys, oversize arguments, unknown ids, wrong types, each tagged with what it may do.

`as_sent(args)` turns arguments into what reaches `session.call` (a dict or JSON text in any
layout) and `fragments(text)` splits a text or its UTF-8 bytes as a stream delivers it.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

STATUSES = ("pending", "in_progress", "completed", "cancelled")
PRIORITIES = ("high", "medium", "low")
KINDS = ("items", "markdown", "file")
# A small pool so creates collide with existing plans and with generated ids.
IDS = ("work", "notes", "plan-1", "plan-2", "plan-3", "étape-2", "design doc")
FIELD_FOR = {"items": "entries", "markdown": "content", "file": "uri"}
# File plans point where nothing is, so the legacy form shows one entry naming the file
# whatever machine the tests run on.
FILE_DIR = "/nonexistent/llm-plans"

# ---- valid ---------------------------------------------------------------------------------

# Letters, digits, punctuation and symbols, inner spaces, multibyte and astral characters:
# text that survives `strip` unchanged, so the expected step is exactly what was sent.
_WORD = st.text(
    alphabet=st.characters(categories=["L", "N", "P", "S"], exclude_characters="\x7f"),
    min_size=1,
    max_size=8,
)
step_text = st.one_of(
    st.sampled_from(["Read the parser", "Fix it", 'Quote "x"', "Ünïcode 中文 🙂", "a\\b"]),
    st.lists(_WORD, min_size=1, max_size=4).map(" ".join),
)
markdown_text = (
    st.lists(
        st.one_of(
            step_text.map("- [ ] {}".format),
            step_text.map("- [x] {}".format),
            step_text.map("1. {}".format),
            step_text.map("# {}".format),
            step_text,
            st.just(""),
        ),
        min_size=1,
        max_size=5,
    )
    .map("\n".join)
    .filter(str.strip)
)


def _absent_or_null() -> st.SearchStrategy[Any]:
    """A field that means "not given": missing (the sentinel `MISSING`) or null."""
    return st.sampled_from([MISSING, None])


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@st.composite
def _shuffled(draw: st.DrawFn, fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` without the MISSING ones, in a random key order."""
    items = [(k, v) for k, v in fields.items() if v is not MISSING]
    return dict(draw(st.permutations(items)))


def entry() -> st.SearchStrategy[dict[str, Any]]:
    """One valid step: content, and priority and status each given, null or missing."""
    return st.builds(
        lambda content, priority, status, meta: {
            "content": content,
            "priority": priority,
            "status": status,
            "_meta": meta,
        },
        step_text,
        st.sampled_from([MISSING, None, *PRIORITIES]),
        st.sampled_from([MISSING, None, *STATUSES]),
        st.sampled_from([MISSING, MISSING, {"source": "model", "n": 1}]),
    ).flatmap(_shuffled)


entries = st.lists(entry(), min_size=1, max_size=5)
uris = st.sampled_from(["plan.md", "a/b.md", "x_1.txt"]).flatmap(
    lambda name: st.sampled_from([f"{FILE_DIR}/{name}", f"file://{FILE_DIR}/{name}"])
)


def body(kind: str) -> st.SearchStrategy[Any]:
    """The value of the field a plan of `kind` needs."""
    return {"items": entries, "markdown": markdown_text, "file": uris}[kind]


@st.composite
def create_args(draw: st.DrawFn, ids: st.SearchStrategy[Any] | None = None) -> dict[str, Any]:
    """Valid `create_plan` arguments; the id is drawn from `ids` (IDS, null or missing)."""
    kind = draw(st.sampled_from(KINDS))
    fields: dict[str, Any] = {
        "type": kind,
        "id": draw(ids if ids is not None else st.sampled_from([MISSING, None, *IDS])),
    }
    for other_kind, field in FIELD_FOR.items():
        fields[field] = draw(body(kind) if other_kind == kind else _absent_or_null())
    return draw(_shuffled(fields))


@st.composite
def update_args(draw: st.DrawFn, plan_id: str, steps: int = 0) -> dict[str, Any]:
    """Valid `update_plan` arguments for plan `plan_id`: a full replacement (any kind), or
    `changes` when it is an items plan of `steps` steps."""
    if steps and draw(st.booleans()):
        changes = draw(st.lists(change(steps), min_size=1, max_size=3))
        fields: dict[str, Any] = {"id": plan_id, "changes": changes, "type": MISSING}
        fields["type"] = draw(st.sampled_from([MISSING, None, "items"]))
        for field in FIELD_FOR.values():
            fields[field] = draw(_absent_or_null())
        return draw(_shuffled(fields))
    kind = draw(st.sampled_from(KINDS))
    fields = {"id": plan_id, "type": draw(st.sampled_from([MISSING, None, kind]))}
    for other_kind, field in FIELD_FOR.items():
        fields[field] = draw(body(kind) if other_kind == kind else _absent_or_null())
    fields["changes"] = draw(_absent_or_null())
    return draw(_shuffled(fields))


@st.composite
def change(draw: st.DrawFn, steps: int) -> dict[str, Any]:
    """One change to step 1..`steps`, setting at least one of status, priority, content."""
    fields = {
        "step": draw(st.integers(1, steps)),
        "status": draw(st.sampled_from([MISSING, None, *STATUSES])),
        "priority": draw(st.sampled_from([MISSING, None, *PRIORITIES])),
        "content": draw(st.sampled_from([MISSING, None]) | step_text),
    }
    if all(fields[k] in (MISSING, None) for k in ("status", "priority", "content")):
        fields["status"] = draw(st.sampled_from(STATUSES))
    return draw(_shuffled(fields))


def remove_args(plan_id: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.just({"id": plan_id})


# ---- repairable ----------------------------------------------------------------------------

STATUS_MISTAKES = {
    "pending": ["Pending", "TODO", "todo", "not started", "Not-Started", "open"],
    "in_progress": ["In Progress", "in-progress", "IN_PROGRESS", "wip", "doing", "InProgress"],
    "completed": ["Completed", "DONE", "done", "finished", " complete "],
    "cancelled": ["Cancelled", "canceled", "CANCELLED", "skipped"],
}
PRIORITY_MISTAKES = {
    "high": ["HIGH", "High"],
    "medium": ["Medium", "med", "normal"],
    "low": ["Low", "LOW "],
}
TYPE_MISTAKES = {
    "items": ["Items", "ITEMS", "item"],
    "markdown": ["Markdown", "md"],
    "file": ["File"],
}


@st.composite
def repairable(draw: st.DrawFn, args: dict[str, Any]) -> Any:
    """`args` as a model might garble it in ways that are repaired back to exactly `args`:
    a dict, or JSON text (doubly encoded arguments are text holding a JSON string)."""

    def enum(value: Any, mistakes: dict[str, list[str]]) -> Any:
        if value in mistakes and draw(st.booleans()):
            return draw(st.sampled_from(mistakes[value]))
        return value

    def item(value: dict[str, Any]) -> dict[str, Any]:
        out = dict(value)
        if "status" in out:
            out["status"] = enum(out["status"], STATUS_MISTAKES)
        if "priority" in out:
            out["priority"] = enum(out["priority"], PRIORITY_MISTAKES)
        return out

    out = dict(args)
    if "type" in out:
        out["type"] = enum(out["type"], TYPE_MISTAKES)
    for key in ("entries", "changes"):
        if isinstance(out.get(key), list):
            out[key] = [item(v) for v in out[key]]
            if draw(st.booleans()):
                out[key] = json.dumps(out[key], ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 3)) == 0:
        return json.dumps(json.dumps(out))  # the whole arguments doubly encoded
    return draw(as_sent(out))


# ---- what reaches session.call ---------------------------------------------------------------


def as_sent(args: Any) -> st.SearchStrategy[Any]:
    """`args` as a dict, or as JSON text in one of the layouts models and SDKs produce."""
    return st.one_of(
        st.just(args),
        st.builds(
            lambda ascii_, indent: json.dumps(args, ensure_ascii=ascii_, indent=indent),
            st.booleans(),
            st.sampled_from([None, 2]),
        ),
    )


def strictly_json(args: Any) -> bool:
    """True when `args` is a dict that JSON text can carry exactly (no NaN, no surrogates)."""
    try:
        json.dumps(args, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


# ---- hostile -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hostile:
    """A call a model should never send, and what the session may do with it.

    `must_reject`: no reading of it is sound (not JSON, ambiguous, over a limit, unknown id,
    wrong type), so it must be rejected. Otherwise the session may reject it, or accept it as
    `base` means when `base` is given, or (base None) change only the plan the call names.
    """

    label: str
    tool: str
    arguments: Any
    must_reject: bool
    base: dict[str, Any] | None = None


DEEP = 50_000
GHOSTS = ("ghost", "plan-99", "Work")  # never created by these strategies


def _text(args: dict[str, Any]) -> str:
    return json.dumps(args)


@st.composite
def hostile(draw: st.DrawFn, existing: tuple[str, ...] = ()) -> Hostile:
    """One hostile call; `existing` are plan ids the session has (for updates and removals)."""
    fresh = draw(st.sampled_from([None, "h-1", "h-2"]))
    base = {"type": "items", "id": fresh, "entries": [{"content": "a", "status": "pending"}]}
    target = draw(st.sampled_from(existing)) if existing else "ghost"
    cases: list[Any] = [
        # Deep nesting, unbalanced and balanced, whole and inside a field that gets decoded.
        lambda: Hostile("deep", "create_plan", "[" * DEEP, True),
        lambda: Hostile("deep-object", "create_plan", '{"a":' * DEEP, True),
        lambda: Hostile("deep-balanced", "create_plan", "[" * 5000 + "]" * 5000, True),
        lambda: Hostile("deep-in-field", "create_plan", {**base, "entries": "[" * DEEP}, True),
        lambda: Hostile(
            "deep-in-field-text",
            "create_plan",
            _text({**base, "entries": "[" * 3000 + "]" * 3000}),
            True,
        ),
        lambda: Hostile("deep-changes", "update_plan", {"id": target, "changes": "[" * DEEP}, True),
        # NaN and Infinity: tokens in JSON text are not JSON; floats in a dict may be
        # rejected or kept out of the notification, never sent.
        lambda: Hostile(
            "nan-token",
            "create_plan",
            _text(base).replace('"pending"}', '"pending", "_meta": {"x": NaN}}'),
            True,
        ),
        lambda: Hostile(
            "inf-token",
            "update_plan",
            f'{{"id": {json.dumps(target)}, "changes": [{{"step": Infinity, "status": "done"}}]}}',
            True,
        ),
        lambda: Hostile(
            "nan-meta",
            "create_plan",
            {**base, "entries": [{"content": "a", "_meta": {"x": float("nan")}}]},
            False,
            base,
        ),
        lambda: Hostile(
            "inf-plan-meta", "create_plan", {**base, "_meta": {"y": float("inf")}}, False, None
        ),
        # Lone surrogates: escapes in JSON text, raw characters in Python strings.
        lambda: Hostile(
            "surrogate-escape-id",
            "create_plan",
            '{"type": "markdown", "id": "s\\udfff", "content": "# x"}',
            False,
        ),
        lambda: Hostile(
            "surrogate-escape-content",
            "create_plan",
            '{"type": "items", "entries": [{"content": "a\\ud800"}]}',
            False,
        ),
        lambda: Hostile(
            "surrogate-id",
            "create_plan",
            {"type": "markdown", "id": "s\udfff", "content": "x"},
            False,
        ),
        lambda: Hostile(
            "surrogate-markdown",
            "create_plan",
            {"type": "markdown", "id": fresh, "content": "- [ ] a\udfff"},
            False,
        ),
        lambda: Hostile(
            "surrogate-entry",
            "create_plan",
            {"type": "items", "id": fresh, "entries": [{"content": "\udfff"}]},
            False,
        ),
        lambda: Hostile(
            "surrogate-uri",
            "create_plan",
            {"type": "file", "id": fresh, "uri": f"{FILE_DIR}/\udfff.md"},
            False,
        ),
        lambda: Hostile(
            "surrogate-update", "update_plan", {"id": target, "content": "x\udfff"}, False
        ),
        # Not UTF-8.
        lambda: Hostile(
            "invalid-utf8",
            "create_plan",
            b'{"type": "markdown", "content": "caf\xe9 \xff\xfe"}',
            True,
        ),
        lambda: Hostile("invalid-utf8-only", "create_plan", b"\xff\xfe\xfd", True),
        # Duplicate keys: which one the model meant is unknowable.
        lambda: Hostile(
            "duplicate-id",
            "create_plan",
            '{"type": "items", "id": "dup-a", "entries": [{"content": "a"}], "id": "dup-b"}',
            True,
        ),
        lambda: Hostile(
            "duplicate-status",
            "create_plan",
            '{"type": "items", "entries": [{"content": "a", "status": "pending", '
            '"status": "completed"}]}',
            True,
        ),
        # Over the limits.
        lambda: Hostile(
            "oversize-text",
            "create_plan",
            _text({"type": "markdown", "content": "x" * (600 * 1024)}),
            True,
        ),
        lambda: Hostile(
            "oversize-markdown", "create_plan", {"type": "markdown", "content": "y" * 100_001}, True
        ),
        lambda: Hostile(
            "too-many-entries",
            "create_plan",
            {"type": "items", "entries": [{"content": f"s{n}"} for n in range(201)]},
            True,
        ),
        lambda: Hostile(
            "long-entry",
            "create_plan",
            {"type": "items", "entries": [{"content": "z" * 1001}]},
            True,
        ),
        lambda: Hostile(
            "long-id", "create_plan", {"type": "markdown", "id": "i" * 65, "content": "x"}, True
        ),
        # Unknown ids.
        lambda: Hostile(
            "unknown-update",
            "update_plan",
            {"id": draw(st.sampled_from(GHOSTS)), "content": "x"},
            True,
        ),
        lambda: Hostile(
            "unknown-remove", "remove_plan", {"id": draw(st.sampled_from(GHOSTS))}, True
        ),
        # Wrong types and shapes.
        lambda: Hostile("type-number", "create_plan", {**base, "type": 5}, True),
        lambda: Hostile("entries-number", "create_plan", {**base, "entries": 5}, True),
        lambda: Hostile("id-number", "update_plan", {"id": 7, "content": "x"}, True),
        lambda: Hostile(
            "step-word",
            "update_plan",
            {"id": target, "changes": [{"step": "first", "status": "completed"}]},
            True,
        ),
        lambda: Hostile(
            "step-zero",
            "update_plan",
            {"id": target, "changes": [{"step": 0, "status": "done"}]},
            True,
        ),
        lambda: Hostile("blank-step", "create_plan", {**base, "entries": [{"content": " "}]}, True),
        lambda: Hostile("extra-field", "create_plan", {**base, "colour": "red"}, True),
        lambda: Hostile("array", "remove_plan", "[1, 2]", True),
        lambda: Hostile("null", "update_plan", "null", True),
        lambda: Hostile("empty", "create_plan", "", True),
        lambda: Hostile("truncated", "create_plan", _text(base)[:-7], True),
    ]
    return draw(st.sampled_from(cases))()  # type: ignore[no-any-return]


# ---- streaming -----------------------------------------------------------------------------


class Fragments(list):  # type: ignore[type-arg]
    """A list of fragments whose repr stays short when the text is long."""

    def __repr__(self) -> str:
        shown = [repr(f) if len(f) <= 40 else f"<{len(f)} chars>" for f in self]
        return f"[{', '.join(shown)}]"


@st.composite
def fragments(draw: st.DrawFn, text: str | bytes, most: int = 6) -> list[Any]:
    """`text` cut into at most `most` non-empty fragments, often at awkward places: right
    after a backslash (inside an escape), inside a multibyte character (for bytes), and
    next to each other (1-character fragments)."""
    size = len(text)
    if size <= 1:
        return Fragments([text])
    if isinstance(text, bytes):
        awkward = [i for i in range(1, size) if text[i] & 0xC0 == 0x80]  # continuation bytes
    else:
        awkward = [i + 1 for i, ch in enumerate(text[:-1]) if ch == "\\"]
        awkward += [i + 2 for i, ch in enumerate(text[:-2]) if ch == "\\"]
    position = st.integers(1, size - 1)
    if awkward:
        position = position | st.sampled_from(awkward)
    cuts = draw(st.lists(position, max_size=most - 1, unique=True))
    if bool(cuts) and draw(st.booleans()):  # (bool: mypy types the draw by the list's type)
        # A 1-character fragment next to a cut.
        near = cuts[0] + 1
        if near < size:
            cuts.append(near)
    bounds = [0, *sorted(set(cuts)), size]
    return Fragments(text[a:b] for a, b in itertools.pairwise(bounds) if b > a)
