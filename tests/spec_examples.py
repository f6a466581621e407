"""The JSON examples of the specification in ../shared/spec, extracted from its text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPEC_DIR = Path(__file__).resolve().parents[2] / "shared" / "spec"


def spec_examples() -> list[tuple[str, dict[str, Any]]]:
    """Every `session/update` example in the spec files: (file name, update object)."""
    decoder = json.JSONDecoder()
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(SPEC_DIR.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        index = 0
        while (start := text.find("{", index)) != -1:
            try:
                value, end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                index = start + 1
                continue
            index = end
            if not isinstance(value, dict):
                continue
            update = value.get("params", {}).get("update", value)
            if "sessionUpdate" in update:
                found.append((path.name, update))
    return found
