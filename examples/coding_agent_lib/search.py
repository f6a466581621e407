"""`search`: the model's pattern over the project's files, answered in bounded time.

RE2's time is linear in the text, but its constant grows with the pattern: thirty-two
`(?:\\w+\\s*){1000}` in a row (513 characters, within the program limit) cost about 1 ms a
byte of a long line. A running match cannot be interrupted from Python and a thread cannot be
killed, so the files are read and matched in a worker process (`matching`), killed when the
search runs out of time or its turn is cancelled. The worker sends each hit as it finds it: a
search cut short keeps them, and its result says it was cut short and what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from .matching import MAX_HITS, BadPattern, compile_pattern

__all__ = ["BadPattern", "compile_pattern", "search"]

# A search answers within this, whatever the pattern and the files: the model and the user
# wait on it. Ordinary patterns scan a large project well within it (RE2 reads tens of MB a
# second); one RE2 needs longer for is cut short, and the model is told to narrow it.
MAX_SEARCH_SECONDS = 10.0
# A cancelled or timed-out search's worker is killed (SIGKILL, which it cannot ignore or
# delay) and gone within this; the time is set aside before the time limit, so that killing
# and reaping the worker fits within MAX_SEARCH_SECONDS too.
STOP_SECONDS = 0.5

# The worker: a fresh interpreter that imports `matching` alone, reads its task as JSON on
# stdin and writes one JSON line a hit, then its end. Its path starts with this package's
# folder instead of the current one, where a `json.py` or `re2.py` would shadow the real ones.
_WORKER = (
    "import sys; sys.path[0] = sys.argv[1]; from coding_agent_lib.matching import _work; _work()"
)
_PACKAGES = str(Path(__file__).resolve().parents[1])
_NARROW = "narrow the pattern or the path and search again"


async def search(
    pattern: str,
    listing: Callable[[], list[str]],
    inside: Callable[[str], Path],
    *,
    max_files: int,
) -> str:
    """The hits of `pattern` in the files `listing` gives (relative paths, at most one past
    `max_files`), each resolved by `inside` or skipped when it raises ValueError (outside the
    project); within MAX_SEARCH_SECONDS, saying when it was cut short and what to do.
    BadPattern for a pattern RE2 refuses."""
    compile_pattern(pattern)  # refused at once, with the reason, not by the worker
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_SEARCH_SECONDS - STOP_SECONDS
    stop = threading.Event()
    hits: list[str] = []
    cut: list[str] = []
    outside = 0

    def resolve() -> list[tuple[str, str]]:  # off the loop: a big tree takes a while
        nonlocal outside
        files = []
        listed = listing()
        if len(listed) > max_files:
            cut.append(f"only the first {max_files:,} files were searched")
        for relative in listed[:max_files]:
            if stop.is_set():
                break
            try:
                files.append((relative, str(inside(relative))))
            except ValueError:  # a symlink out of the project
                outside += 1
        return files

    try:
        files = await asyncio.wait_for(asyncio.to_thread(resolve), deadline - loop.time())
        await _match(pattern, files, deadline, hits)
    except asyncio.TimeoutError:
        cut.append(f"it ran out of its {MAX_SEARCH_SECONDS:g} s")
    finally:
        stop.set()  # a listing still resolving paths stops at the next file
    if len(hits) > MAX_HITS:
        del hits[MAX_HITS:]
        cut.append(f"it stopped at {MAX_HITS} matches")
    return _result(hits, outside, cut)


async def _match(
    pattern: str, files: list[tuple[str, str]], deadline: float, hits: list[str]
) -> None:
    """Run the worker on `files`, adding its hits to `hits` as they come; TimeoutError at
    `deadline`. The worker is killed and reaped however this ends, cancelled included."""
    loop = asyncio.get_running_loop()
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WORKER,
        _PACKAGES,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        stdin, stdout = worker.stdin, worker.stdout
        if stdin is None or stdout is None:  # both are pipes: for the type checker
            raise RuntimeError("the search worker has no pipes")
        stdin.write(json.dumps({"pattern": pattern, "files": files}).encode())
        await asyncio.wait_for(stdin.drain(), deadline - loop.time())
        stdin.close()
        while True:
            line = await asyncio.wait_for(stdout.readline(), deadline - loop.time())
            if not line:
                raise RuntimeError(f"the search worker failed (exit code {await worker.wait()})")
            message = json.loads(line)
            if "end" in message:
                return
            hits.append(message["hit"])
    finally:
        if worker.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                worker.kill()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(worker.wait(), STOP_SECONDS)


def _result(hits: list[str], outside: int, cut: list[str]) -> str:
    text = "\n".join(hits) or "(no matches)"
    if outside == 1:
        text += "\n(1 file links outside the project; it was not searched)"
    elif outside:
        text += f"\n({outside} files link outside the project; they were not searched)"
    if cut:
        text += (
            f"\n(The search was cut short: {' and '.join(cut)}. The results are incomplete: "
            f"{_NARROW}.)"
        )
    return text
