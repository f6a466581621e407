"""The demo as the README runs it (`python -m llm_plans demo`, and `llm-plans demo`), from the
checkout and from a wheel installed into a fresh virtualenv."""

from __future__ import annotations

import importlib.util
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from llm_plans._demo import examples_dir

ROOT = Path(__file__).resolve().parents[1]
# The demo runs the whole scripted session in a subprocess; generous room for a slow machine.
TIMEOUT = 120
PIP = [sys.executable, "-m", "pip", "-q"]


def clean_env() -> dict[str, str]:
    """This environment without API keys, and without a PYTHONPATH that would decide which
    llm_plans runs."""
    drop = ("PYTHONPATH",)
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in drop}


def run_demo(*flags: str, command: list[str] | None = None, cwd: Path | None = None) -> str:
    command = command or [sys.executable, "-m", "llm_plans"]  # README's command
    out = subprocess.run(
        [*command, "demo", "--delay", "0", *flags],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=cwd,
        timeout=TIMEOUT,
        check=True,
    )
    return out.stdout


def check_demo_output(out: str) -> None:
    assert "scripted offline model" in out
    assert "[plan-1] 4/4 done" in out
    assert "[design] markdown" in out
    assert "[design] removed" in out
    assert "[follow-ups] 0/2 done" in out
    assert "approved: Write calc.py" in out
    assert "Turn ended: end_turn" in out


def test_demo_shows_the_plans() -> None:
    check_demo_output(run_demo())


def test_demo_as_a_legacy_client() -> None:
    # the script the package installs beside this interpreter
    out = run_demo("--legacy", command=[str(Path(sys.executable).parent / "llm-plans")])
    assert "legacy `plan` updates" in out
    assert "[plan] 4/6 done" in out  # both item plans, flattened into one list
    assert "[plan-1]" not in out
    assert "Divide by `len(values)` (removed)" in out  # the design note's steps, shown leaving


def test_a_checkout_runs_its_own_examples() -> None:
    assert examples_dir() == ROOT / "examples"


@pytest.mark.skipif(
    importlib.util.find_spec("hatchling") is None,
    reason="building the wheel offline needs hatchling, which the dev extra installs",
)
def test_demo_from_a_wheel_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    """Build the wheel, install it alone into a new virtualenv, run `llm-plans demo` there."""
    dist = tmp_path / "dist"
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    (wheel,) = dist.glob("llm_plans-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)  # this interpreter's pip installs into it
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*PIP, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    # The dependencies come from this environment, appended after the new one's own
    # site-packages (a .pth path line adds the folder without running its .pth files, so this
    # checkout's editable install stays out): offline, and seconds instead of a download.
    (new_site,) = (env_dir / "lib").glob("python3*/site-packages")
    (new_site / "deps_from_test_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import llm_plans._demo as d; print(d.__file__); print(d.examples_dir())",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        check=True,
        timeout=TIMEOUT,
    ).stdout.splitlines()
    assert where == [
        str(new_site / "llm_plans" / "_demo.py"),
        str(new_site / "llm_plans" / "_examples"),
    ]
    check_demo_output(run_demo(command=[str(env_dir / "bin" / "llm-plans")], cwd=tmp_path))
