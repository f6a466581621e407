"""The benchmark script runs (a smoke test: no timings are asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "run.py"


def test_benchmarks_run_and_print_every_table() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    for section in (
        "1. One update_plan call",
        "2. Against the ACP SDK",
        "3. Model output bytes",
        "4. Streaming",
        "5. End to end",
        "6. The three tools' definitions",
    ):
        assert section in out
