"""What of a half-written plan tool call is already final, as arguments a preview can use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jiter

from ._apply import AnyPlan


@dataclass
class InFlight:
    """One streamed plan tool call: its text so far and what the client was shown of it."""

    name: str
    buffer: bytearray = field(default_factory=bytearray)
    reserved_id: str | None = None
    """The generated id promised to this call's plan, so the preview and the result agree."""
    preview: AnyPlan | None = None
    """The plan as last previewed (what the client shows for this call), if any."""
    pending: bool = False
    """A newer preview waits for the coalescing interval."""
    shown: bool = False
    """Some preview of this call reached the client (so a rejection must roll it back)."""


def partial(buffer: bytes | bytearray) -> Any:
    """The JSON value of an unfinished document, incomplete trailing strings included."""
    try:
        return jiter.from_json(bytes(buffer), partial_mode="trailing-strings")
    except ValueError:
        return None


def final_arguments(tool: str, value: Any) -> dict[str, Any] | None:
    """The arguments a preview may use: only fields, entries and lines that are complete.

    A key is final once a later key has started; a list's items are final but the last;
    markdown is cut after its last complete line. None when there is nothing to show yet.
    """
    if tool not in ("create_plan", "update_plan") or not isinstance(value, dict):
        return None
    keys = list(value)
    out: dict[str, Any] = {}
    for position, key in enumerate(keys):
        done = position < len(keys) - 1
        item = value[key]
        if key in ("type", "id", "uri"):
            if not done:
                return None if key in ("type", "id") else out or None
            out[key] = item
        elif key == "entries" and isinstance(item, list):
            complete = item if done else item[:-1]
            if complete:
                out[key] = complete
        elif key == "content" and isinstance(item, str):
            text = item if done else item[: item.rfind("\n") + 1].rstrip("\n")
            if text.strip():
                out[key] = text
    if tool == "update_plan" and "id" not in out:
        return None
    if tool == "create_plan" and "type" not in out:
        return None
    return out if any(k in out for k in ("entries", "content", "uri")) else None
