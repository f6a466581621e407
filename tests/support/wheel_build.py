"""Building this checkout's wheel for the tests that install it (the demo, the extras, the
docs' agents, the install lines), and the fresh virtualenvs they install it into."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import venv
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

K = TypeVar("K")

ROOT = Path(__file__).resolve().parents[2]
PIP = [sys.executable, "-m", "pip", "-q"]
# Fresh virtualenvs take minutes: CI runs the tests that install the wheel into them (.ci/run
# sets the variable), a local run opts in.
RUN_FRESH_VIRTUALENVS = (
    os.environ.get("CI") == "true" or os.environ.get("LLM_PLANS_EXTRAS_CHECK") == "1"
)


def build_wheel(dist: Path, *, timeout: float) -> Path:
    """The wheel of this checkout, built into `dist` offline (no build isolation)."""
    if importlib.util.find_spec("hatchling") is None:
        pytest.skip(
            "building the wheel offline needs hatchling, which the dev extra installs (as CI does)"
        )
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=timeout,
    )
    (built,) = dist.glob("llm_plans-*.whl")
    return built


def clean_env() -> dict[str, str]:
    """This environment without API keys and without anything deciding which llm_plans runs."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "LLM_PLANS_SPEC_DIR"}
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in drop}


def fresh_virtualenv(env_dir: Path, *requirements: str, timeout: float) -> Path:
    """A new virtualenv at `env_dir` with `requirements` installed (pip's requirement
    specifiers: a wheel's path with extras, `name @ git+url@commit`, `name==version`); its
    python."""
    venv.create(env_dir, with_pip=False)  # this interpreter's pip installs into it
    python = env_dir / "bin" / "python"
    # From the index, as a user gets them; pip's cache keeps the downloads between runs.
    subprocess.run(
        [*PIP, "--python", str(python), "install", *requirements],
        check=True,
        capture_output=True,
        timeout=timeout,
        env=clean_env(),
    )
    return python


@contextmanager
def installed_in_background(
    installs: Mapping[K, tuple[Path, tuple[str, ...]]], *, timeout: float
) -> Iterator[dict[K, Future[Path]]]:
    """A fresh virtualenv per key (its folder and requirements), installed two at a time in
    the background while the tests that wait on them run: an install mostly waits on the
    index and the disk, so two fit on two cores, and pip's cache is safe to share between
    processes. Installs not yet started are cancelled on exit."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            key: pool.submit(fresh_virtualenv, env_dir, *requirements, timeout=timeout)
            for key, (env_dir, requirements) in installs.items()
        }
        try:
            yield futures
        finally:
            for future in futures.values():
                future.cancel()
