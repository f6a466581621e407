"""The sample project the scripted model fixes, and whether a folder is it.

The script writes its files whole, whatever was there: in any other project that would
replace someone's code with canned code. So it runs only where each file it writes is still
the sample's own (byte for byte; absent where the sample has none) or already exactly what it
writes, and stops before any plan or write otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

# Beside the agent in a checkout (examples/sample_project) and in a wheel
# (llm_plans/_examples/sample_project): the files this copy of the agent was shipped with.
SAMPLE = Path(__file__).resolve().parents[1] / "sample_project"

RUN_A_MODEL = (
    "For your own project, name a real model with --model (with OPENAI_API_KEY or "
    "ANTHROPIC_API_KEY set); `llm-plans demo` shows the script at work on the sample project."
)


@cache
def original(name: str) -> bytes | None:
    """The sample project's `name`, None when the sample has no such file."""
    path = SAMPLE / name
    return path.read_bytes() if path.is_file() else None


def holds(path: Path, *accepted: bytes | None) -> bool:
    """Whether `path` is one of `accepted`: a regular file with those bytes, or (None) nothing
    at all. A link, a folder or an unreadable file is none of them: a write would go through
    or around it."""
    if not os.path.lexists(path):
        return None in accepted
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return path.read_bytes() in accepted
    except OSError:
        return False


def unfit(project: Path, writes: Mapping[str, str], *, resuming: bool) -> str | None:
    """Why the script must not run in `project`, or None. `writes` maps each file it writes
    to the text it writes there; `resuming` is a run that stopped part-way and goes on, so
    files it already wrote may be its own."""
    for name, text in writes.items():
        path, own = project / name, original(name)
        if not holds(path, own, text.encode()):
            if own is None:
                why = f"its {name} is not the one the script writes"
            elif os.path.lexists(path):
                why = f"its {name} is not the sample's"
            else:
                why = f"it has no {name}"
            return (
                "I changed nothing: the scripted model only fixes llm_plans' sample project "
                f"(examples/sample_project), and this is not it ({why}). It follows a fixed "
                "script that writes whole files, so it stopped before any plan or write. "
                + RUN_A_MODEL
            )
    fixed = [name for name, text in writes.items() if original(name) is not None]
    done = all(holds(project / name, writes[name].encode()) for name in fixed)
    if fixed and done and not resuming:
        return (
            f"I changed nothing: {', '.join(fixed)} already has the fix the scripted model "
            "writes, so its script has nothing left to do here. It fixes llm_plans' sample "
            "project once, from the sample's own files: run it on a fresh copy. " + RUN_A_MODEL
        )
    return None
