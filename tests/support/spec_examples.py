"""The JSON examples of the specification documents, extracted from their text.

The documents live outside this repository (beside it, as `../shared/spec`, in CI); the golden
files in `tests/golden` are the source of truth, and the cross-check against the documents
runs only where they are. `LLM_PLANS_SPEC_DIR` names their folder; when it is set, a missing
folder is an error rather than a skip, so CI cannot silently lose the check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

DEFAULT_SPEC_DIR = Path(__file__).resolve().parents[3] / "shared" / "spec"
ENV = "LLM_PLANS_SPEC_DIR"


def spec_dir() -> Path:
    """The folder of the spec documents; skips the calling test when they are not there."""
    named = os.environ.get(ENV)
    folder = Path(named) if named else DEFAULT_SPEC_DIR
    if not any(folder.glob("*.txt")):
        if named:
            pytest.fail(f"{ENV} is set but the ACP spec documents (*.txt) are not in {folder}")
        pytest.skip(
            "the ACP spec documents (*.txt) are kept outside this repository and CI provides "
            f"them; set {ENV} to a folder of them to cross-check the golden files here"
        )
    return folder


def spec_examples(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every `session/update` example in the spec files: (file name, update object)."""
    decoder = json.JSONDecoder()
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(folder.glob("*.txt")):
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
