"""The example agent's plan store survives damage: a corrupt file, rows that are not strict
JSON, snapshots restore() refuses. Directly, and through the agent over ACP."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agent_client import Client, agent_env, connected, prompt_block, sample_project
from coding_agent_lib.store import FILE_NAME, DamagedSnapshot, PlanStore

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
