"""The example agent's plan store survives damage: a corrupt file, rows that are not strict
JSON, snapshots restore() refuses. Directly, and through the agent over ACP. Its saver writes
off the event loop, in commit order, and always ends with the last state."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from agent_client import Client, agent_env, connected, prompt_block, sample_project
from coding_agent_lib.store import FILE_NAME, DamagedSnapshot, PlanStore, Saver
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

SNAPSHOT = {
    "version": 1,
    "next_number": 2,
    "plans": [{"type": "items", "id": "plan-1", "entries": [{"content": "a"}]}],
}


def corrupt(data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / FILE_NAME).write_bytes(b"this is not a database, just bytes\n" * 200)


def store_row(data: Path, session_id: str, snapshot_text: str) -> None:
    PlanStore(data)  # creates the table
    with sqlite3.connect(data / FILE_NAME) as db:
        db.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, 0)", (session_id, "/", snapshot_text)
        )


def test_a_corrupt_file_is_moved_aside_and_a_new_store_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt(tmp_path)
    store = PlanStore(tmp_path)
    aside = list(tmp_path.glob(f"{FILE_NAME}.damaged-*"))
    assert len(aside) == 1
    assert aside[0].read_bytes().startswith(b"this is not a database")
    assert "moved to" in capsys.readouterr().err
    assert len(store.notices) == 1
    assert str(aside[0]) in store.notices[0]
    store.save("s", "/", SNAPSHOT)
    assert store.load("s") == SNAPSHOT


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 1, "next_number": NaN, "plans": []}', "NaN is not a JSON number"),
        ('{"version": 1, "next_number": Infinity, "plans": []}', "Infinity is not a JSON"),
        ('{"version": 1, "next_number": -Infinity, "plans": []}', "-Infinity is not a JSON"),
        ("[1, 2]", "a JSON list, not an object"),
    ],
)
def test_rows_that_are_not_strict_json_objects_are_refused(
    text: str, reason: str, tmp_path: Path
) -> None:
    store_row(tmp_path, "s", text)
    with pytest.raises(DamagedSnapshot, match=reason):
        PlanStore(tmp_path).load("s")


def test_saving_refuses_what_loading_would(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        PlanStore(tmp_path).save("s", "/", {"x": float("nan")})


def test_a_models_state_is_kept_beside_its_plans(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    assert store.load_model("s") is None
    store.save_model("s", {"finished": True, "stopped_at": None})
    store.save_model("s", {"finished": False, "stopped_at": 2})  # the last one counts
    assert PlanStore(tmp_path).load_model("s") == {"finished": False, "stopped_at": 2}
    assert store.load("s") is None  # no plans saved: the two are apart


@pytest.mark.parametrize("text", ["{not json", "[1]", '{"finished": NaN}'])
def test_a_damaged_model_state_reads_as_none(text: str, tmp_path: Path) -> None:
    """The model then acts as in a new session (the scripted one checks the files anyway)."""
    PlanStore(tmp_path)
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("INSERT INTO models VALUES ('s', ?)", (text,))
    assert PlanStore(tmp_path).load_model("s") is None


def test_a_store_from_before_model_states_opens_and_keeps_its_plans(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, "
            "snapshot TEXT NOT NULL, updated REAL NOT NULL)"
        )
    PlanStore(tmp_path).save("s", "/", SNAPSHOT)
    store = PlanStore(tmp_path)
    assert store.load("s") == SNAPSHOT
    assert store.load_model("s") is None


async def test_the_agent_starts_on_a_corrupt_store_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    corrupt(data)
    project = sample_project(tmp_path)
    client = Client()
    async with connected(client, project, agent_env(data), {"plan": {}}) as (conn, _process, _):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
    assert response.stop_reason == "end_turn"
    assert client.said.startswith(f"The plan store {data / FILE_NAME} was damaged")
    assert client.plan_updates  # and the session then works as usual


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 1, "next_number": NaN, "plans": []}', "NaN is not a JSON number"),
        ('{"version": 7, "plans": []}', "ConfigurationError: unsupported snapshot version 7"),
    ],
)
async def test_a_damaged_snapshot_is_skipped_on_load_with_a_message(
    text: str, reason: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    store_row(data, "sess_damaged", text)
    project = sample_project(tmp_path)
    client = Client()
    async with connected(client, project, agent_env(data), {"plan": {}}) as (conn, _process, _):
        await conn.load_session(cwd=str(project), session_id="sess_damaged")
        response = await conn.prompt(session_id="sess_damaged", prompt=prompt_block("go"))
    assert client.said.startswith("The saved plans of this session could not be restored (")
    assert reason in client.said
    assert response.stop_reason == "end_turn"  # the loaded session works without them


# ---- saving off the event loop --------------------------------------------------------------


class SlowStore(PlanStore):
    """Records the thread of every save, and holds saves until `gate` opens, as a slow disk."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.gate = threading.Event()
        self.gate.set()
        self.threads: set[int] = set()
        self.written: list[dict[str, Any]] = []

    def save(self, session_id: str, cwd: str, snapshot: dict[str, Any]) -> None:
        self.threads.add(threading.get_ident())
        self.gate.wait()
        super().save(session_id, cwd, snapshot)
        self.written.append(snapshot)


def saving_session(saver: Saver, session_id: str = "s") -> PlanSession:
    return PlanSession(
        RecordingSend(),
        session_id=session_id,
        client_capabilities={"plan": {}},
        on_commit=lambda s: saver.save(session_id, "/", s.snapshot()),
    )


async def test_saves_run_off_the_event_loop_thread(tmp_path: Path) -> None:
    store = SlowStore(tmp_path)
    saver = Saver(store)
    session = saving_session(saver)
    store.gate.clear()  # the disk is busy: the calls return all the same
    for n in range(3):
        result = await session.call("create_plan", {"type": "items", "entries": [f"step {n}"]})
        assert result.ok
    assert store.written == []
    store.gate.set()
    await saver.flushed()
    assert store.threads
    assert threading.get_ident() not in store.threads
    assert store.load("s") == session.snapshot()
    saver.close()


# Plan calls a model might make, for the quick-commits property below.
CALLS = st.one_of(
    st.builds(
        lambda n, entries: ("create_plan", {"type": "items", "id": f"p{n}", "entries": entries}),
        st.integers(0, 3),
        st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3),
    ),
    st.builds(
        lambda n, s: ("update_plan", {"id": f"p{n}", "changes": [{"step": 1, "status": s}]}),
        st.integers(0, 3),
        st.sampled_from(["pending", "in_progress", "completed"]),
    ),
    st.builds(lambda n: ("remove_plan", {"id": f"p{n}"}), st.integers(0, 3)),
)


@settings(max_examples=30)
@given(st.lists(st.tuples(CALLS, st.booleans()), min_size=1, max_size=12))
def test_quick_commits_save_in_order_and_the_last_state_wins(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, bool]]
) -> None:
    """Commits come faster than the disk: saves fold together but never reorder, and what
    is stored at the end is the session's final state, whichever calls were accepted."""

    async def run() -> None:
        store = SlowStore(tmp_path_factory.mktemp("store"))
        saver = Saver(store)
        session = saving_session(saver)
        states = [session.snapshot()]
        for (name, arguments), disk_busy in steps:
            if disk_busy:
                store.gate.clear()
            result = await session.call(name, arguments)
            if result.ok:
                states.append(session.snapshot())
            store.gate.set()
        await saver.flushed()
        saver.close()
        assert store.load("s") == (None if len(states) == 1 else session.snapshot())
        # Each write is a committed state no older than the one before it (a state can
        # recur, as a status set back, so it is looked for from the last one matched on).
        at = 0
        for written in store.written:
            assert written in states[at:]
            at += states[at:].index(written)
        if len(states) > 1:
            assert store.written[-1] == states[-1]

    asyncio.run(run())


async def test_sessions_save_independently_and_all_land(tmp_path: Path) -> None:
    store = SlowStore(tmp_path)
    saver = Saver(store)
    sessions = [saving_session(saver, f"s{n}") for n in range(4)]
    store.gate.clear()
    await asyncio.gather(
        *(
            s.call("create_plan", {"type": "items", "entries": [f"from {s.session_id}"]})
            for s in sessions
        )
    )
    store.gate.set()
    await saver.flushed()
    for session in sessions:
        assert store.load(session.session_id) == session.snapshot()
    saver.close()


async def test_a_failed_save_is_told_and_the_next_commit_saves_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SlowStore(tmp_path)
    saver = Saver(store)
    session = saving_session(saver)
    original = store.save

    def failing(session_id: str, cwd: str, snapshot: dict[str, Any]) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    store.save = failing  # type: ignore[method-assign]
    await session.call("create_plan", {"type": "items", "entries": ["one"]})
    await saver.flushed()
    assert "could not be saved (disk I/O error)" in store.notices[0]
    assert "could not be saved" in capsys.readouterr().err
    store.save = original  # type: ignore[method-assign]
    await session.call("create_plan", {"type": "items", "entries": ["two"]})
    await saver.flushed()
    assert store.load("s") == session.snapshot()
    saver.close()
