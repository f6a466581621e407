"""`search`'s matching: the model's pattern on RE2, over the project's files, in bounded time.

Python's `re` backtracks: a pattern such as `(a+)+$` takes exponential time on a line of a's
ending in b, and nothing can interrupt it. RE2 matches in time linear in the text for every
pattern it accepts (no backreferences, no lookaround: exactly the features that need
backtracking), so a scan costs at most about its bytes times the pattern's size. The scan runs
in a worker thread that checks a stop flag between lines, so a cancelled turn ends it too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import re2

# Bigger files are data or logs, not code to search; reading them would only cost time.
MAX_FILE_BYTES = 1_000_000
MAX_HITS = 200
# A hit shows its line; a minified file's line is not worth a whole result.
MAX_LINE_CHARS = 300
# RE2 compiles into a program within this memory or refuses the pattern ("pattern too large"),
# which bounds the cost of matching by the pattern's size as well.
MAX_PROGRAM_BYTES = 8 << 20


class BadPattern(Exception):
    """The pattern is not one RE2 accepts; the message says why, for the model."""


def compile_pattern(pattern: str) -> Any:
    """The model's pattern compiled by RE2; BadPattern saying what to change."""
    options = re2.Options()
    options.max_mem = MAX_PROGRAM_BYTES
    options.log_errors = False  # the reason goes to the model, not to the agent's stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise BadPattern(
            f"The pattern {pattern!r} cannot be used: {reason}. Patterns use RE2 syntax, "
            "Python's regular expressions without backreferences (\\1) and lookaround "
            "((?=...), (?!...), (?<=...), (?<!...)). Fix the pattern and search again."
        ) from None


def scan(
    pattern: Any, files: Iterable[str], inside: Callable[[str], Path], stop: threading.Event
) -> str:
    """Lines of `files` (relative paths) that match; `inside` resolves a path or raises
    ValueError for one outside the project, which is then not read."""
    hits: list[str] = []
    outside = 0
    for listed in files:
        if stop.is_set() or len(hits) >= MAX_HITS:
            break
        try:
            path = inside(listed)
        except ValueError:  # a symlink out of the project
            outside += 1
            continue
        try:
            # Only regular files: a named pipe would block the read until a writer comes.
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, 1):
            if stop.is_set() or len(hits) >= MAX_HITS:
                break
            if pattern.search(line):
                hits.append(f"{listed}:{number}: {line[:MAX_LINE_CHARS]}")
    text = "\n".join(hits) or "(no matches)"
    if outside == 1:
        text += "\n(1 file links outside the project; it was not searched)"
    elif outside:
        text += f"\n({outside} files link outside the project; they were not searched)"
    return text
