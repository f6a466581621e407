"""Decode tool arguments and repair the mistakes models commonly make, before validation."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import jiter

from .._models import PLAN_TYPES, PRIORITIES, STATUSES


class Undecodable(Exception):
    """The arguments are not JSON; `truncated` when they are a valid JSON prefix."""

    def __init__(self, message: str, *, truncated: bool) -> None:
        super().__init__(message)
        self.truncated = truncated


_SEPARATORS = re.compile(r"[\s\-]+")

_STATUS_SYNONYMS = {
    "done": "completed",
    "complete": "completed",
    "finished": "completed",
    "closed": "completed",  # Gemini CLI's tracker: a model trained on it writes it in a list too
    "todo": "pending",
    "to_do": "pending",
    "not_started": "pending",
    "open": "pending",
    "active": "in_progress",
    "doing": "in_progress",
    "started": "in_progress",
    "wip": "in_progress",
    "inprogress": "in_progress",
    "canceled": "cancelled",
    "abandoned": "cancelled",
    "skipped": "cancelled",
    "dropped": "cancelled",
}
_PRIORITY_SYNONYMS = {"med": "medium", "normal": "medium"}
_TYPE_SYNONYMS = {"item": "items", "md": "markdown"}

# Models nest their arguments in a JSON string at most this deep in practice; the bound
# keeps a pathological payload from costing more than a couple of parses.
_MAX_STRING_DECODES = 2


def decode_bytes(data: bytes) -> Any:
    """Parse JSON strictly: no NaN or Infinity, no lone surrogates, no duplicate keys, and
    nesting bounded by jiter's limit (so no RecursionError whatever the depth)."""
    if not data.strip():
        raise Undecodable("the arguments are empty", truncated=False)
    try:
        return _strict(data)
    except ValueError as exc:
        known = _explain(str(exc), data)
        if known is not None:
            raise Undecodable(known, truncated=False) from None
        message = f"the arguments are not valid JSON ({exc})"
        raise Undecodable(message, truncated=is_truncated(data)) from None


def _strict(data: bytes) -> Any:
    return jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)


def finite(value: Any) -> bool:
    """False when `value` holds an infinite float.

    jiter reads 1e999 as infinity even when NaN and Infinity are refused. Only `_meta`
    carries numbers into a plan (every other field is a string or a step number), so only
    `_meta` values are walked.
    """
    stack = [value]
    while stack:  # without recursion: the nesting depth is the model's to choose
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _explain(error: str, data: bytes) -> str | None:
    # jiter's messages for the causes a model can act on, said in its terms.
    if "invalid unicode" in error.lower() or "utf-8" in error.lower():
        return "the arguments are not UTF-8 text"
    if "surrogate" in error or "hex escape" in error:
        return "the arguments contain a lone surrogate (such as \\udfff) or a broken \\u escape"
    if "recursion limit" in error:
        return "the arguments are nested too deeply"
    if "duplicate key" in error:
        key = error.split('"')[1] if error.count('"') >= 2 else "?"
        return f'the key "{key}" appears twice in one object; send each key once'
    if _at_error(error, data).lstrip(b"-").startswith((b"NaN", b"Infinity")):
        return "NaN and Infinity are not JSON numbers; send finite numbers or strings"
    return None


_POSITION = re.compile(r"line (\d+) column (\d+)")


def _at_error(error: str, data: bytes) -> bytes:
    """The bytes where jiter says it failed (its line and column, 1-based)."""
    found = _POSITION.search(error)
    if found is None:
        return b""
    lines = data.split(b"\n")
    line, column = int(found.group(1)), int(found.group(2))
    return lines[line - 1][column - 1 :] if 0 < line <= len(lines) else b""


def is_truncated(data: bytes) -> bool:
    """True when `data` is a JSON document cut short, rather than malformed JSON."""
    try:
        jiter.from_json(data, partial_mode="trailing-strings", allow_inf_nan=False)
    except ValueError:
        return False
    return True


def repair(value: Any) -> Any:
    """Return `value` with common model mistakes undone; anything unrecognised is kept."""
    value = _decode_string(value, lambda v: isinstance(v, dict))
    if not isinstance(value, dict):
        return value
    fixed = dict(value)
    if "type" in fixed:
        fixed["type"] = _enum(fixed["type"], PLAN_TYPES, _TYPE_SYNONYMS)
    for key in ("entries", "changes"):
        if key in fixed:
            fixed[key] = _repair_list(fixed[key], as_entries=key == "entries")
    return fixed


def _repair_list(value: Any, *, as_entries: bool) -> Any:
    value = _decode_string(value, lambda v: isinstance(v, (list, dict)))
    if isinstance(value, dict):
        value = [value]  # a single step sent without its list
    if not isinstance(value, list):
        return value
    return [_repair_item(item, as_entry=as_entries) for item in value]


def repair_list(value: Any, field: str, text: str = "content", *, priorities: bool = False) -> Any:
    """Arguments of another dialect's list tool (`{"todos": [...]}`) with the mistakes
    `repair` undoes for ours undone: JSON sent as a string, a lone item without its list, a
    bare string for an item (its `text` field), status words such as "done"; with
    `priorities` (a dialect whose items have one), priority words such as "High"."""
    value = _decode_string(value, lambda v: isinstance(v, dict))
    if not isinstance(value, dict) or field not in value:
        return value
    items = _decode_string(value[field], lambda v: isinstance(v, (list, dict)))
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list):
        return value
    fixed = []
    for item in items:
        item = _decode_string(item, lambda v: isinstance(v, dict))
        if isinstance(item, str) and item.strip():
            item = {text: item}
        elif isinstance(item, dict):
            if "status" in item:
                # `blocked` too: dialects take it (as pending, keeping the word).
                status = _enum(item["status"], (*STATUSES, "blocked"), _STATUS_SYNONYMS)
                item = {**item, "status": status}
            if priorities and "priority" in item:
                priority = _enum(item["priority"], PRIORITIES, _PRIORITY_SYNONYMS)
                item = {**item, "priority": priority}
        fixed.append(item)
    return {**value, field: fixed}


def repair_entry(item: Any) -> Any:
    """One step of an items plan with common mistakes undone."""
    return _repair_item(item, as_entry=True)


def _repair_item(item: Any, *, as_entry: bool) -> Any:
    item = _decode_string(item, lambda v: isinstance(v, dict))
    if as_entry and isinstance(item, str) and item.strip():
        return {"content": item}
    if not isinstance(item, dict):
        return item
    fixed = dict(item)
    if "status" in fixed:
        fixed["status"] = _enum(fixed["status"], STATUSES, _STATUS_SYNONYMS)
    if "priority" in fixed:
        fixed["priority"] = _enum(fixed["priority"], PRIORITIES, _PRIORITY_SYNONYMS)
    return fixed


def _enum(value: Any, allowed: tuple[str, ...], synonyms: Mapping[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    key = _SEPARATORS.sub("_", value.strip().lower())
    if key in allowed:
        return key
    return synonyms.get(key, value)


def _decode_string(value: Any, wanted: Any) -> Any:
    for _ in range(_MAX_STRING_DECODES):
        if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "[", '"'):
            return value
        try:
            decoded = _strict(value.encode("utf-8"))
        except (ValueError, UnicodeEncodeError):
            return value
        if not (wanted(decoded) or isinstance(decoded, str)):
            return value
        value = decoded
    return value
