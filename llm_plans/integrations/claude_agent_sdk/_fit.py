"""Claude Code's call arguments cut to what a plan keeps: a mirror shows what Claude Code
did even when its texts are longer than a step may be."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..._limits import Limits

_TEXTS = ("subject", "description", "activeForm", "owner", "content")


def fitted(arguments: dict[str, Any], limits: Limits) -> tuple[dict[str, Any], list[str]]:
    """Claude Code's arguments cut to what a plan keeps, and what was cut: a mirror shows
    what Claude Code did (the task, its status) even when its texts are longer than a step
    may be, where a model's own call would be refused to be written again."""
    cut: list[str] = []
    width = limits.max_entry_chars

    def fit(item: dict[str, Any], where: str) -> dict[str, Any]:
        out = dict(item)
        for key in _TEXTS:
            text = out.get(key)
            if isinstance(text, str) and len(text) > width:
                out[key] = text[: width - 1] + "\u2026"
                cut.append(where + key)
        metadata = out.get("metadata")
        if isinstance(metadata, Mapping):
            try:
                size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")))
            except (TypeError, ValueError):
                size = width + 1
            if size > width:
                del out["metadata"]
                cut.append(where + "metadata")
        return out

    fitted = fit(arguments, "")
    todos = fitted.get("todos")
    if isinstance(todos, list):
        if len(todos) > limits.max_entries:
            cut.append(f"todos[{limits.max_entries}:]")
        fitted["todos"] = [
            fit(todo, f"todos[{n}].") if isinstance(todo, dict) else todo
            for n, todo in enumerate(todos[: limits.max_entries])
        ]
    return fitted, cut


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None
