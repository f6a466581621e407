"""The benchmark script runs (a smoke test: no timings are asserted), and its timing helpers
interleave what they compare."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "run.py"


def test_benchmarks_run_and_print_every_table() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    for section in (
        "a. One update_plan call",
        "b. The same calls against the ACP SDK",
        "c. Bytes the model writes",
        "d. Bytes of the tool results",
        "e1. Streaming a create_plan fed back to back",
        "e2. The same streams at a live 50 tokens/s",
        "f. Legacy form",
        "g. End to end over a stdio pipe",
        "h. The three tools' definitions",
    ):
        assert section in out


def test_compare_interleaves_the_sides_and_reports_per_round_ratios() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from timing import compare
    finally:
        sys.path.remove(str(BENCHMARKS))
    blocks: list[str] = []

    def side(name: str) -> Callable[[int], None]:
        return lambda number: blocks.append(name)

    timings = compare([side("a"), side("b")], rounds=4)
    assert len(timings.ratio(0, 1).values) == 4
    assert blocks[-8:] == ["a", "b", "b", "a", "a", "b", "b", "a"]  # ABBA, not AAAA BBBB


def test_readme_shows_every_section_and_how_to_reproduce_it() -> None:
    readme = (BENCHMARKS.parent / "README.md").read_text()
    section = readme[readme.index("## Benchmarks") :]
    assert "python benchmarks/run.py" in section
    for letter in ("a", "b", "c", "d", "e1", "e2", "f", "g", "h"):
        assert f"\n{letter}. " in section, letter
