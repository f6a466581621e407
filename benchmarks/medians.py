"""Several runs of the benchmark as one: each measured figure's median over the runs.

Ratios move by about 10% between runs on a shared machine, and a goal counts as met when its
median over at least five runs meets it. `python benchmarks/run.py --runs 5` runs the
benchmark five times, each in a fresh process, and publishes what `combined` makes of them:

- a timed cell, a median with its interquartile range (`1.46x (1.44-1.49)`, `1.25 µs
  (1.23-1.28)`), becomes the median of the runs' medians with, in brackets, the lowest and
  the highest of them;
- a plain number (µs, updates per second; an exact count is the same in every run, and so
  its own median) becomes the runs' median;
- every other cell (words, exact ratios such as `8.4x`, virtual-clock latencies such as
  `0 / 1120`) must be the same in every run: a difference there is a bug, not noise.

Each table also keeps, under `each_run`, every timed cell's figure in each run, in the runs'
order, named by its row (its first cell, and its second where the first names several rows)
and its column's header: a range widened by one run unlike the others shows there.
"""

from __future__ import annotations

import re
import statistics
from typing import Any

_TIMED = re.compile(r"^(-?\d+(?:\.\d+)?)(x| µs) \((-?[\d.]+)-(-?[\d.]+)\)$")
_NUMBER = re.compile(r"^-?\d+(?:\.(\d+))?$")


def combined(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One results file from several runs of the same sections (as `run.py` writes them)."""
    first = runs[0]
    tables = []
    for k, table in enumerate(first["tables"]):
        same = [run["tables"][k] for run in runs]
        if any(_shape(t) != _shape(table) for t in same):
            raise ValueError(f"table {table['key']}: the runs measured different things")
        rows = [
            [_cell([t["rows"][i][j] for t in same]) for j in range(len(row))]
            for i, row in enumerate(table["rows"])
        ]
        firsts = [row[0] for row in table["rows"]]
        each_run = [
            [_row_name(row, firsts), table["header"][j], figures]
            for i, row in enumerate(table["rows"])
            for j in range(len(row))
            if (figures := _figures([t["rows"][i][j] for t in same])) is not None
        ]
        header = [
            h.replace("median (IQR)", f"median of {len(runs)} runs (their range)")
            for h in table["header"]
        ]
        timed = {"each_run": each_run} if each_run else {}  # exact tables have none
        tables.append({**table, "header": header, "rows": rows, **timed})
    loads = [float(run["load_average"].split()[0]) for run in runs]
    return {
        **first,
        "runs": len(runs),
        "load_average": f"{min(loads):.1f} to {max(loads):.1f} at the runs' starts",
        "tables": tables,
    }


def _shape(table: dict[str, Any]) -> tuple[Any, ...]:
    return table["key"], table["header"], len(table["rows"])


def _row_name(row: list[str], firsts: list[str]) -> str:
    return row[0] if firsts.count(row[0]) == 1 else f"{row[0]}, {row[1]}"


def _figures(cells: list[str]) -> list[float] | None:
    """The runs' own figures of a timed cell (their medians); None for any other cell."""
    timed = [_TIMED.match(c) for c in cells]
    return [float(m.group(1)) for m in timed if m] if all(timed) else None


def _cell(cells: list[str]) -> str:
    medians = _figures(cells)
    if medians is not None:
        unit = _TIMED.sub(r"\2", cells[0])
        return f"{statistics.median(medians):.2f}{unit} ({min(medians):.2f}-{max(medians):.2f})"
    numbers = [_NUMBER.match(c) for c in cells]
    if all(numbers):
        decimals = max(len(m.group(1) or "") for m in numbers if m)
        return f"{statistics.median(float(c) for c in cells):.{decimals}f}"
    if len(set(cells)) == 1:
        return cells[0]
    raise ValueError(f"the runs disagree on a figure that should be exact: {cells}")
