"""Two checkouts of llm_plans measured against each other: a change's cost, before and after.

    python benchmarks/versus.py BEFORE AFTER [--runs 5] [--sections per-call,streaming]
        [--before-sections ae] [--out versus.md]

BEFORE and AFTER are two checkouts (a `git worktree` of each commit, say). Each round runs
the benchmark of one, then of the other, each in a fresh process with its own checkout on
`PYTHONPATH` and its own benchmark scripts; the order alternates from round to round, so a
machine that slows down over the session weighs on both alike. Each timed figure is then
the median of its runs (medians.py), and the table puts the two side by side with each
one's run-to-run range: a change is within the noise when it is within that spread.

`--sections` is passed to each checkout's run.py as it is; a checkout from before the
sections had names takes letters (`--before-sections ae`), and its tables are matched to
the named ones (`LETTERS`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from medians import combined

HERE = Path(__file__).parent
LETTERS = {
    "a": "per-call",
    "a2": "snapshot",
    "b": "acp-sdk",
    "c": "written",
    "d": "results",
    "e1": "streaming-fed",
    "e2": "streaming-live",
    "e3": "preview-budget",
    "e4": "adapters",
    "f": "legacy-file",
    "g": "pipe",
    "h": "definitions",
    "i1": "dialect-definitions",
    "i2": "dialect-written",
}
"""The tables' names, by the letters they had before the sections were named."""


def run_once(checkout: Path, sections: str, out: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    script = str(checkout / "benchmarks" / "run.py")
    subprocess.run(
        [sys.executable, script, "--sections", sections, "--out", str(out)],
        check=True,
        env=env,
        cwd=checkout,
        stdout=subprocess.DEVNULL,
    )
    results: dict[str, Any] = json.loads(out.read_text())
    return results


def rows(results: dict[str, Any]) -> dict[tuple[str, str, str], list[float]]:
    """Every timed cell of a combined result: (table, row, column) -> its runs' figures."""
    out = {}
    for table in results["tables"]:
        for name, column, figures in table.get("each_run", []):
            key = LETTERS.get(table["key"], table["key"])
            out[(key, name, re.split(r" \(|,", column)[0])] = figures
    return out


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[list[str]]:
    """The table: each timed figure before and after, with its runs' range, and the change
    set against the wider of the two run-to-run spreads."""
    old, new = rows(before), rows(after)
    table = []
    for key in old:
        if key not in new:
            continue
        a, b = old[key], new[key]
        ma, mb = _median(a), _median(b)
        change = (mb - ma) / ma * 100 if ma else 0.0
        spread = max((max(a) - min(a)) / ma, (max(b) - min(b)) / mb) * 100 if ma and mb else 0.0
        table.append(
            [
                key[0],
                key[1],
                key[2],
                f"{ma:g} ({min(a):g}-{max(a):g})",
                f"{mb:g} ({min(b):g}-{max(b):g})",
                f"{change:+.1f}%",
                f"{spread:.1f}%",
                "yes" if abs(change) <= spread else "no",
            ]
        )
    return table


def markdown(table: list[list[str]]) -> str:
    header = [
        "table",
        "row",
        "figure",
        "before: median (range)",
        "after: median (range)",
        "change",
        "run-to-run spread",
        "within it",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in table]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sections", default="per-call,streaming")
    parser.add_argument("--before-sections", default=None, help="the before side's, if other")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.runs):
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for side in order:
                out = Path(scratch) / f"{side}-{round_}.json"
                sections = args.sections
                if side == "before" and args.before_sections is not None:
                    sections = args.before_sections
                runs[side].append(run_once(getattr(args, side).resolve(), sections, out))
                print(f"round {round_ + 1}/{args.runs}: {side} done", file=sys.stderr)
    text = markdown(compare(combined(runs["before"]), combined(runs["after"])))
    if args.out is not None:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
