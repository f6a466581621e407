"""`search`'s matching, what its worker process runs: the model's pattern on RE2, line by line
over the files it is given, each hit written out as found.

Python's `re` backtracks: a pattern such as `(a+)+$` takes exponential time on a line of a's
ending in b, and nothing can interrupt it. RE2 matches in time linear in the text for every
pattern it accepts (no backreferences, no lookaround: exactly the features that need
backtracking), but the constant grows with the pattern; `search` bounds the time. This module
imports little (a worker starts and answers in about 35 ms): asyncio alone would add 60 ms.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type hints

# Bigger files are data or logs, not code to search; reading them would only cost time.
MAX_FILE_BYTES = 1_000_000
MAX_HITS = 200
# A hit shows its line; a minified file's line is not worth a whole result.
MAX_LINE_CHARS = 300
# RE2 compiles into a program within this memory or refuses the pattern ("pattern too large").
MAX_PROGRAM_BYTES = 8 << 20
# Should the agent die without killing its worker, the kernel ends the worker after this much
# CPU time (SIGXCPU, then SIGKILL): no orphan keeps a core busy. Past `search`'s time limit.
MAX_WORKER_CPU_SECONDS = 11


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


def scan(pattern: Any, files: Iterable[tuple[str, str]]) -> Iterator[str]:
    """The lines of `files` ((as listed, resolved path) pairs) that match, as hits; lines are
    matched one by one, so `^` and `$` are a line's ends."""
    for listed, resolved in files:
        path = Path(resolved)
        try:
            # Only regular files: a named pipe would block the read until a writer comes.
            if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, 1):
            if pattern.search(line):
                yield f"{listed}:{number}: {line[:MAX_LINE_CHARS]}"


def _work() -> None:
    """The worker's body: hits of the task on stdin, up to one past MAX_HITS (to tell that
    there were more), each flushed as found."""
    with contextlib.suppress(ImportError, ValueError, OSError):  # not on Windows
        import resource

        limit = MAX_WORKER_CPU_SECONDS
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    task = json.load(sys.stdin)
    hits = scan(compile_pattern(task["pattern"]), task["files"])
    for hit in itertools.islice(hits, MAX_HITS + 1):
        print(json.dumps({"hit": hit}), flush=True)
    print(json.dumps({"end": True}), flush=True)
