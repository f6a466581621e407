"""Building this checkout's wheel for the tests that install it (the demo, the extras)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "-q"]


def build_wheel(dist: Path, *, timeout: float) -> Path:
    """The wheel of this checkout, built into `dist` offline (no build isolation)."""
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("building the wheel offline needs hatchling, which the dev extra installs")
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=timeout,
    )
    (built,) = dist.glob("llm_plans-*.whl")
    return built
