"""The scripted model runs only on the sample project, and only once per session: anywhere
else it stops before any plan or write (tracker issue 39, item 1), and after its run a later
prompt, also after session/load, gets one message and leaves the plans as they are."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from agent_client import (
    CAPS,
    SAMPLE,
    Client,
    agent_env,
    connected,
    prompt_block,
    run_prompt,
    sample_project,
)
from coding_agent_lib.sample import unfit
from coding_agent_lib.scripted import FIXED_CALC, TEST_CALC, WRITES, Scripted
from hypothesis import given
from hypothesis import strategies as st

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend, client_view

LOOK_ALIKE_CALC = '''"""Small arithmetic helpers."""


def add(a: float, b: float) -> float:
    return a + b


def mean(values: list[float]) -> float:
    return sum(values) / (len(values) - 1)
'''
LOOK_ALIKE_TEST = """from calc import add, mean


def test_add():
    assert add(2, 3) == 5


def test_mean():
    assert mean([2, 4]) == 3.0
"""
DOCS = Path(__file__).resolve().parents[3] / "docs" / "example-agent.md"
NOT_THE_SAMPLE = "the scripted model only fixes llm_plans' sample project"
# Words the script says only while working or once the work was done.
CLAIMS = ("Found it", "Fixed", "Tests pass", "Done", "test_calc.py covers it")


def look_alike(tmp_path: Path) -> Path:
    """The issue's project: its own calc.py with add and mean, and a pytest test_calc.py."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text(LOOK_ALIKE_CALC)
    (project / "test_calc.py").write_text(LOOK_ALIKE_TEST)
    return project


def files(project: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `project` (links too, as links): its bytes and modification time."""
    found = {}
    for path in sorted(project.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(project))] = (os.readlink(path).encode(), 0)
        elif path.is_file():
            found[str(path.relative_to(project))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [u["update"]["sessionUpdate"] for u in updates]


def assert_stopped_untouched(
    client: Client, stop: str, before: dict[str, Any], project: Path
) -> None:
    assert stop == "end_turn"
    assert files(project) == before  # nothing written, nothing touched
    assert kinds(client.raw) == ["agent_message_chunk"]  # no plan, no tool call: one message
    assert client.permissions == []
    assert "I changed nothing" in client.said
    assert not any(claim in client.said for claim in CLAIMS), client.said


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_look_alike_project_is_left_as_it_was(form: str, tmp_path: Path) -> None:
    project = look_alike(tmp_path)
    before = files(project)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS[form], "fix the failing test")
    assert_stopped_untouched(client, stop, before, project)
    assert NOT_THE_SAMPLE in client.said
    assert "(its calc.py is not the sample's)" in client.said
    assert "--model" in client.said  # what to do instead


def _sample_with(tmp_path: Path, name: str, text: str | None) -> Path:
    project = sample_project(tmp_path)
    if text is None:
        (project / name).unlink()
    else:
        (project / name).write_text(text)
    return project


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("test_calc.py", LOOK_ALIKE_TEST, "its test_calc.py is not the one the script writes"),
        ("calc.py", None, "it has no calc.py"),
        ("calc.py", LOOK_ALIKE_CALC, "its calc.py is not the sample's"),
    ],
)
async def test_the_sample_with_a_file_of_its_own_is_left_as_it_was(
    name: str, text: str | None, why: str, tmp_path: Path
) -> None:
    project = _sample_with(tmp_path, name, text)
    before = files(project)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS["schema"])
    assert_stopped_untouched(client, stop, before, project)
    assert f"{NOT_THE_SAMPLE} (examples/sample_project), and this is not it ({why})" in client.said


async def test_a_link_to_the_samples_calc_is_not_the_sample(tmp_path: Path) -> None:
    """Same bytes, but the script's write would go through the link, out of the project."""
    elsewhere = sample_project(tmp_path / "elsewhere")
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").symlink_to(elsewhere / "calc.py")
    before, linked = files(project), files(elsewhere)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS["schema"])
    assert_stopped_untouched(client, stop, before, project)
    assert files(elsewhere) == linked


async def test_a_sample_it_already_fixed_is_left_as_it_was(tmp_path: Path) -> None:
    """A fresh session on a copy the script fixed before: it says so, and writes nothing
    (its "Found it: the divisor is off by one" would be untrue)."""
    project = _sample_with(tmp_path, "calc.py", FIXED_CALC)
    (project / "test_calc.py").write_text(TEST_CALC)
    before = files(project)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS["schema"])
    assert_stopped_untouched(client, stop, before, project)
    assert "calc.py already has the fix the scripted model writes" in client.said


def _once(said: str) -> None:
    assert "can do nothing more" in said
    assert "fix llm_plans' sample project, once per session" in said
    assert "--model" in said


async def test_later_prompts_get_one_message_and_leave_the_plans(tmp_path: Path) -> None:
    """The done-criterion's second half: a second prompt leaves the first turn's plans, in the
    same session and in a restarted agent that loaded it."""
    project = sample_project(tmp_path)
    env = agent_env(tmp_path / "data")
    first = Client()
    async with connected(first, project, env, CAPS["schema"]) as (conn, _process, _init):
        session = await conn.new_session(cwd=str(project))
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=prompt_block("fix the failing test"))
        assert "return sum(values) / len(values)" in (project / "calc.py").read_text()
        plans, fixed, seen = client_view(first.plan_updates), files(project), len(first.raw)
        assert list(plans) == ["plan-1", "follow-ups"]
        response = await conn.prompt(session_id=sid, prompt=prompt_block("now add a median"))
        assert response.stop_reason == "end_turn"
        assert kinds(first.raw[seen:]) == ["agent_message_chunk"]
        _once(first.raw[seen]["update"]["content"]["text"])
    assert client_view(first.plan_updates) == plans
    assert files(project) == fixed

    second = Client()
    async with connected(second, project, env, CAPS["schema"]) as (conn, _process, _init):
        await conn.load_session(cwd=str(project), session_id=sid)
        assert client_view(second.plan_updates) == plans  # the replay
        seen = len(second.raw)
        response = await conn.prompt(session_id=sid, prompt=prompt_block("fix it again"))
        assert response.stop_reason == "end_turn"
    assert kinds(second.raw[seen:]) == ["agent_message_chunk"]
    _once(second.said)
    assert client_view(second.plan_updates) == plans
    assert files(project) == fixed


async def test_a_stopped_run_resumes_after_session_load(tmp_path: Path) -> None:
    """A run that stopped at a declined write is not finished: a restarted agent that loaded
    the session retries that step, as the same agent would."""
    project = sample_project(tmp_path)
    env = agent_env(tmp_path / "data")
    first = Client(approve=False)
    async with connected(first, project, env, CAPS["schema"]) as (conn, _process, _init):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix"))
    assert "I stopped: I could not write calc.py." in first.said
    second = Client()
    async with connected(second, project, env, CAPS["schema"]) as (conn, _process, _init):
        await conn.load_session(cwd=str(project), session_id=session.session_id)
        await conn.prompt(session_id=session.session_id, prompt=prompt_block("go on"))
    assert "Trying step 2 again: Fix mean() in calc.py." in second.said
    assert "return sum(values) / len(values)" in (project / "calc.py").read_text()


# ---- any change to calc.py stops the script --------------------------------------------------

SAMPLE_CALC = (SAMPLE / "calc.py").read_bytes()


def _mutation() -> st.SearchStrategy[bytes]:
    """The sample's calc.py with one byte changed, bytes appended, or cut short."""
    size = len(SAMPLE_CALC)
    changed = st.tuples(st.integers(0, size - 1), st.integers(0, 255)).filter(
        lambda c: SAMPLE_CALC[c[0]] != c[1]
    )
    return st.one_of(
        changed.map(lambda c: SAMPLE_CALC[: c[0]] + bytes([c[1]]) + SAMPLE_CALC[c[0] + 1 :]),
        st.binary(min_size=1, max_size=8).map(lambda tail: SAMPLE_CALC + tail),
        st.integers(0, size - 1).map(lambda end: SAMPLE_CALC[:end]),
    )


@given(calc=_mutation(), with_test=st.booleans())
async def test_any_small_change_to_calc_stops_before_any_plan_or_write(
    calc: bytes, with_test: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "calc.py").write_bytes(calc)
        if with_test:
            (project / "test_calc.py").write_text(TEST_CALC)
        before = files(project)
        send = RecordingSend()
        plans = PlanSession(send, session_id="s")
        model = Scripted(project, delay=0)
        said: list[str] = []

        async def on_text(text: str) -> None:
            said.append(text)

        model.add_user("fix the failing test")
        reply = await model.reply(plans, on_text)
        assert reply.uses == []  # no tool call: nothing to write or run
        assert send.sent == []
        assert dict(plans.plans) == {}
        assert files(project) == before
        assert len(said) == 1
        assert NOT_THE_SAMPLE in said[0]
        assert not model.finished  # a refusal is not the run: the next prompt checks again


@pytest.mark.parametrize(
    ("state", "finished", "stopped_at"),
    [
        ({"finished": True, "stopped_at": None}, True, None),
        ({"finished": False, "stopped_at": 2}, False, 2),
        ({"finished": "yes", "stopped_at": True}, False, None),
        ({"stopped_at": 99}, False, None),
        ({}, False, None),
    ],
)
def test_a_stored_state_is_taken_back_only_when_it_makes_sense(
    state: dict[str, Any], finished: bool, stopped_at: int | None, tmp_path: Path
) -> None:
    model = Scripted(tmp_path)
    model.restore(state)
    assert (model.finished, model.stopped_at) == (finished, stopped_at)


def test_the_docs_quote_what_it_says_on_a_look_alike(tmp_path: Path) -> None:
    section = DOCS.read_text().split("## The scripted model\n")[1].split("\n## ")[0]
    quoted = section.split("```text\n")[1].split("\n```")[0]
    assert unfit(look_alike(tmp_path), WRITES, resuming=False) == quoted
