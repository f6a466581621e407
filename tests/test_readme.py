"""Every Python block in README.md runs as written."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / f"block_{index}.py"
    script.write_text(BLOCKS[index])
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    if "PlanSession(send" in BLOCKS[index]:
        assert '"sessionUpdate": "plan_update"' in out
        assert "True\n" in out


def test_readme_has_code_blocks() -> None:
    assert len(BLOCKS) >= 2
    assert sys.version_info >= (3, 10)
