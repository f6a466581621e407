"""The demo as the README runs it (`python -m llm_plans demo`, and `llm-plans demo`), from the
checkout and from a wheel installed into a fresh virtualenv, where acpx also drives the
wheel's `llm-plans agent`."""

from __future__ import annotations

import functools
import io
import math
import os
import re
import shutil
import site
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest
from agent_client import CAPS, Client, connected, prompt_block
from node_tools import acpx_exec, node_modules
from rich.console import Console
from wheel_build import PIP, ROOT, build_wheel

from e2e.agent.test_scripted import NOT_THE_SAMPLE, files, kinds, look_alike
from llm_plans._cli import demo as _demo
from llm_plans._cli.demo import examples_dir, marked
from llm_plans.testing import client_view
from llm_plans.view import MARK_SECONDS, PlanBoard

# The demo runs the whole scripted session in a subprocess; generous room for a slow machine.
TIMEOUT = 120
DESIGN = {"planId": "design", "type": "markdown", "content": "- [x] one"}


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
    # The design note is ticked off once the fix is written, every item of it, last included.
    fixed = out.index("approved: Write calc.py")
    ticked = out.index("  - [x] Reject an empty list with a clear error", fixed)
    assert "- [ ]" not in out[ticked : out.index("[design] removed")]
    # Its removal is not the run's last plan event: the follow-ups come after it.
    assert out.index("[design] removed") < out.index("[follow-ups]")


def test_demo_shows_the_plans() -> None:
    check_demo_output(run_demo())


def test_demo_as_a_legacy_client() -> None:
    # the script the package installs beside this interpreter
    out = run_demo("--legacy", command=[str(Path(sys.executable).parent / "llm-plans")])
    assert "legacy `plan` updates" in out
    assert "[plan] 4/6 done" in out  # both item plans, flattened into one list
    assert "[plan-1]" not in out
    assert "Divide by `len(values)` (removed)" in out  # the design note's steps, shown leaving


def test_marks_last_until_their_time_is_up() -> None:
    now = [0.0]
    board = PlanBoard(clock=lambda: now[0])
    board.apply({"update": {"sessionUpdate": "plan_update", "plan": DESIGN}})
    now[0] = MARK_SECONDS
    assert not marked(board)
    board.apply({"update": {"sessionUpdate": "plan_removed", "planId": "design"}})
    assert marked(board)  # the removed plan is on screen, struck through
    now[0] += MARK_SECONDS - 0.01
    assert marked(board)
    now[0] += 0.01
    assert not marked(board)
    assert board.shown() == []


async def test_the_live_view_keeps_the_removal_on_screen_before_settling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a terminal the view does not settle the moment the turn ends: frames keep showing
    the last changes (the design note's removal) until their marks expire. The board's clock
    is frozen here, so the marks never expire and the view holds for its whole bound, in
    frames, not seconds; then the final frame is settled."""
    monkeypatch.setattr(_demo, "PlanBoard", functools.partial(PlanBoard, clock=lambda: 0.0))
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100, color_system=None)
    assert await _demo.run(console=console, delay=0) == 0
    out = buffer.getvalue()
    after_turn = out[out.index("Done: `mean` divides") :]
    frames = re.split(r"(?:\x1b\[2K|\x1b\[1A)+", after_turn)
    held = [f for f in frames if "design · markdown · removed" in f]
    assert len(held) >= math.ceil(MARK_SECONDS * _demo.REFRESH)
    final = frames[-1]
    assert "removed" not in final
    assert "follow-ups · 0/2" in final
    assert "plan-1 · 4/4" in final
    assert final.rstrip().endswith("Turn ended: end_turn; 16 plan updates.")


def test_a_checkout_runs_its_own_examples() -> None:
    assert examples_dir() == ROOT / "examples"


@dataclass
class Installed:
    """The wheel, installed alone into a fresh virtualenv."""

    env_dir: Path
    site: Path

    @property
    def command(self) -> str:
        return str(self.env_dir / "bin" / "llm-plans")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel, install it alone into a new virtualenv."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp_path / "dist", timeout=TIMEOUT)
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
    return Installed(env_dir, new_site)


def test_demo_from_a_wheel_in_a_fresh_virtualenv(installed: Installed, tmp_path: Path) -> None:
    """`llm-plans demo` from the wheel runs the example agent the wheel carries."""
    where = subprocess.run(
        [
            str(installed.env_dir / "bin" / "python"),
            "-c",
            "import llm_plans._cli.demo as d; print(d.__file__); print(d.examples_dir())",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        check=True,
        timeout=TIMEOUT,
    ).stdout.splitlines()
    assert where == [
        str(installed.site / "llm_plans" / "_cli" / "demo.py"),
        str(installed.site / "llm_plans" / "_examples"),
    ]
    check_demo_output(run_demo(command=[installed.command], cwd=tmp_path))


def test_acpx_drives_llm_plans_agent_from_a_wheel(installed: Installed, tmp_path: Path) -> None:
    """The wheel's `llm-plans agent`, started by acpx as its docs say, with no checkout
    anywhere: the agent and the sample project come from site-packages."""
    node_modules()
    project = tmp_path / "project"
    shutil.copytree(installed.site / "llm_plans" / "_examples" / "sample_project", project)
    home = tmp_path / "home"
    home.mkdir()
    env = {**clean_env(), "HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    help_text = subprocess.run(
        [installed.command, "agent", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT,
    ).stdout
    assert help_text.startswith("usage: llm-plans agent ")
    agent = f"{installed.command} agent --model scripted --script-delay 0"
    out = acpx_exec(agent, "fix the failing test", cwd=project, env=env)
    assert "- [completed] Run the tests" in out.stdout
    assert "sum(values) / len(values)" in (project / "calc.py").read_text()
    assert (tmp_path / "xdg" / "llm-plans-agent").is_dir()


def test_the_wheels_agent_leaves_a_look_alike_project_as_it_was(
    installed: Installed, tmp_path: Path
) -> None:
    """Tracker issue 39, item 1, as reported: acpx, the wheel's scripted agent, a project of
    one's own that looks like the sample. It stops before any plan or write and says so."""
    node_modules()
    project = look_alike(tmp_path)
    before = files(project)
    home = tmp_path / "home"
    home.mkdir()
    env = {**clean_env(), "HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    agent = f"{installed.command} agent --model scripted --script-delay 0"
    out = acpx_exec(agent, "fix the failing test", cwd=project, env=env)
    assert NOT_THE_SAMPLE in out.stdout
    assert "I changed nothing" in out.stdout
    assert "[plan]" not in out.stdout
    assert "Done" not in out.stdout
    assert files(project) == before


async def test_the_wheels_agent_answers_a_second_prompt_without_touching_its_plans(
    installed: Installed, tmp_path: Path
) -> None:
    """The wheel's agent fixes a copy of the wheel's sample project, then answers later
    prompts (in the same agent, and in a restarted one after session/load) with one message."""
    project = tmp_path / "project"
    shutil.copytree(installed.site / "llm_plans" / "_examples" / "sample_project", project)
    env = {**clean_env(), "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    command = [installed.command, "agent", "--model", "scripted", "--script-delay", "0"]
    first = Client()
    async with connected(first, project, env, CAPS["schema"], command) as (conn, _, _init):
        session = await conn.new_session(cwd=str(project))
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=prompt_block("fix the failing test"))
        plans, fixed, seen = client_view(first.plan_updates), files(project), len(first.raw)
        assert "sum(values) / len(values)" in (project / "calc.py").read_text()
        await conn.prompt(session_id=sid, prompt=prompt_block("and now?"))
    assert kinds(first.raw[seen:]) == ["agent_message_chunk"]
    assert client_view(first.plan_updates) == plans
    second = Client()
    async with connected(second, project, env, CAPS["schema"], command) as (conn, _, _init):
        await conn.load_session(cwd=str(project), session_id=sid)
        seen = len(second.raw)
        await conn.prompt(session_id=sid, prompt=prompt_block("and now?"))
    assert kinds(second.raw[seen:]) == ["agent_message_chunk"]
    assert client_view(second.plan_updates) == plans
    assert files(project) == fixed
