"""The benchmark script runs (a smoke test: no timings are asserted) and writes what it prints
to its results file, its timing helpers interleave what they compare, and the published tables
are exactly those of the committed results file."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "run.py"
RESULTS = BENCHMARKS / "results.json"
# The tables a full run reports, in order, as run.py names them.
SECTIONS = tuple(re.findall(r'report\(\s*"(\w+)"', SCRIPT.read_text()))
sys.path.insert(0, str(BENCHMARKS))
import tables  # noqa: E402  (benchmarks/ is scripts, not a package)

sys.path.remove(str(BENCHMARKS))


def test_benchmarks_run_print_every_table_and_write_them_to_the_results_file(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results.json"
    printed = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    results = json.loads(out.read_text("utf-8"))
    assert [t["key"] for t in results["tables"]] == list(SECTIONS)
    assert results["quick"] is True
    assert results["machine"] in printed
    for t in results["tables"]:
        assert f"{t['key']}. {t['title']}" in printed
        assert tables.markdown_table(t["header"], t["rows"]) in printed  # the same figures


def test_a_quick_run_leaves_the_published_results_alone(tmp_path: Path) -> None:
    before = RESULTS.read_bytes()
    subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--sections", "c"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert RESULTS.read_bytes() == before


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


def test_published_results_are_from_a_full_run_of_every_section() -> None:
    results = json.loads(RESULTS.read_text("utf-8"))
    assert results["quick"] is False
    assert results["rounds"] == 21
    assert [t["key"] for t in results["tables"]] == list(SECTIONS)
    for t in results["tables"]:
        assert t["rows"]
        assert all(len(row) == len(t["header"]) for row in t["rows"])


@pytest.mark.parametrize("page", tables.PAGES, ids=lambda p: p.name)
def test_pages_show_exactly_the_tables_of_the_results_file(page: Path) -> None:
    """docs/benchmarks.md and benchmarks/README.md: what `tables.py` renders, between the
    markers; run `python benchmarks/tables.py` after a benchmark run to update them."""
    text = page.read_text("utf-8")
    rendered = tables.render(json.loads(RESULTS.read_text("utf-8")))
    assert f"{tables.START}\n\n{rendered}\n\n{tables.END}" in text
    assert text.count(tables.START) == 1
    assert "python benchmarks/run.py" in text
    assert not re.search(r"issue[s]? \d", text, flags=re.I)  # no internal issue numbers


def test_the_docs_prose_agrees_with_the_results() -> None:
    """The claims of "What the numbers say", against the published figures."""
    by_key = {t["key"]: t for t in json.loads(RESULTS.read_text("utf-8"))["tables"]}
    assert all(int(row[1]) <= 3000 for row in by_key["h"]["rows"][:4])  # tool definitions
    assert len({row[1] for row in by_key["c"]["rows"]}) == 1  # the same bytes at any length
    assert all(int(row[2]) > int(row[1]) < int(row[3]) for row in by_key["c"]["rows"])
    assert all(int(row[2]) < 600 for row in by_key["d"]["rows"])
    assert all(float(row[4].rstrip("x")) <= 8.5 for row in by_key["e2"]["rows"])
    assert by_key["e2"]["rows"][0][5].startswith("0 /")  # 20 steps: each step at once
    assert all(float(row[3].split("x")[0]) < 1 for row in by_key["b"]["rows"][1:])
    assert float(by_key["g"]["rows"][0][3].split("x")[0]) > 0.5  # most of the raw rate
    assert float(by_key["f"]["rows"][0][2].split("x")[0]) < 1.5  # about what a small file costs
    assert float(by_key["a2"]["rows"][0][3].split("x")[0]) < 0.5  # a small fraction of a call
    default = [row for row in by_key["e3"]["rows"] if row[1] == "8"]
    assert default
    assert all(float(row[5].rstrip("x")) <= 8 for row in default)  # within 8x by default
    by_budget = sorted(by_key["e3"]["rows"], key=lambda row: (int(row[0]), float(row[1])))
    for small, large in itertools.pairwise(by_budget):  # more budget, sooner, more bytes
        if small[0] == large[0]:
            assert int(large[2]) <= int(small[2])
            assert float(large[5].rstrip("x")) >= float(small[5].rstrip("x"))
