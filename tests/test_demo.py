"""The demo as the README runs it (`python -m llm_plans demo`, and `llm-plans demo`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_demo(*flags: str, script: bool = False) -> str:
    # README's command, or the script the package installs beside this interpreter
    if script:
        command = [str(Path(sys.executable).parent / "llm-plans")]
    else:
        command = [sys.executable, "-m", "llm_plans"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = subprocess.run(
        [*command, "demo", "--delay", "0", *flags],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return out.stdout


def test_demo_shows_the_plans() -> None:
    out = run_demo()
    assert "scripted offline model" in out
    assert "[plan-1] 4/4 done" in out
    assert "[design] markdown" in out
    assert "[design] removed" in out
    assert "[follow-ups] 0/2 done" in out
    assert "approved: Write calc.py" in out
    assert "Turn ended: end_turn" in out


def test_demo_as_a_legacy_client() -> None:
    out = run_demo("--legacy", script=True)
    assert "legacy `plan` updates" in out
    assert "[plan] 4/6 done" in out  # both item plans, flattened into one list
    assert "[plan-1]" not in out
