"""One streamed plan tool call: its text so far, and which of its parts are final."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jiter
from pydantic import BaseModel, TypeAdapter, ValidationError

from ._apply import AnyPlan
from ._models import ARGUMENT_MODELS, PlanEntry
from ._repair import repair, repair_entry

_ENTRY: TypeAdapter[PlanEntry] = TypeAdapter(PlanEntry)


@dataclass
class InFlight:
    """One streamed plan tool call: its text so far and what the client was shown of it."""

    name: str
    parts: list[str] = field(default_factory=list)
    """The argument fragments so far. Only a fragment holding `}`, `]` or `\\` (which starts
    the `\\n` escape) can complete an entry or a line of markdown; a file plan's uri shows
    when its call finishes."""
    reserved_id: str | None = None
    """The generated id promised to this call's plan, so the preview and the result agree."""
    preview: AnyPlan | None = None
    """The plan as last previewed (what the client shows for this call), if any."""
    pending: bool = False
    """A newer preview waits for the coalescing interval."""
    shown: bool = False
    """Some preview of this call reached the client (so a rejection must roll it back)."""
    entries: list[PlanEntry] = field(default_factory=list)
    """The complete entries validated so far: each is validated once, as it completes."""
    last: dict[str, Any] | None = None
    broken: bool = False
    """An entry failed validation: no more previews; the finished call will say why."""

    _decoder: codecs.IncrementalDecoder | None = None

    def decode(self, fragment: bytes) -> str:
        """Bytes fragments as text; a character split across fragments is kept whole."""
        if self._decoder is None:
            self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return self._decoder.decode(fragment)

    @property
    def text(self) -> str:
        """The arguments so far, as one string (joined once, then kept)."""
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def preview_arguments(self, reserve_id: Callable[[], str]) -> BaseModel | None:
        """Validated arguments from what is final so far, or None when nothing new is.

        A create with a null id gets `reserve_id()` once, so previews and result agree.
        """
        if self.broken:
            return None
        fields = final_arguments(self.name, partial(self.text))
        if fields is None or fields == self.last:
            return None
        self.last = dict(fields)
        raw_entries = fields.pop("entries", None)
        fields = repair(fields)
        if raw_entries is not None:
            try:
                for raw in raw_entries[len(self.entries) :]:
                    self.entries.append(_ENTRY.validate_python(repair_entry(raw)))
            except ValidationError:
                self.broken = True
                return None
            fields["entries"] = self.entries[: len(raw_entries)]
        if self.name == "create_plan" and fields.get("id") is None:
            self.reserved_id = self.reserved_id or reserve_id()
            fields["id"] = self.reserved_id
        try:
            return ARGUMENT_MODELS[self.name].model_validate(fields)  # type: ignore[index]
        except ValidationError:
            return None


def partial(text: str) -> Any:
    """The JSON value of an unfinished document, incomplete trailing strings included."""
    try:
        return jiter.from_json(text.encode(), partial_mode="trailing-strings")
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
                if key != "uri":
                    return None  # what comes after an unfinished type or id is not known yet
                continue
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
