"""Each session's plan state on disk, so a restarted agent can `session/load` it."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any


class PlanStore:
    """Plan snapshots by session id in a sqlite file; every save is one atomic transaction."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(directory / "plans.sqlite3", isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, "
            "snapshot TEXT NOT NULL, updated REAL NOT NULL)"
        )

    def save(self, session_id: str, cwd: str, snapshot: dict[str, Any]) -> None:
        with self._db:  # BEGIN ... COMMIT: a crash leaves the previous snapshot intact
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "cwd = excluded.cwd, snapshot = excluded.snapshot, updated = excluded.updated",
                (session_id, cwd, json.dumps(snapshot), time.time()),
            )

    def load(self, session_id: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT snapshot FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return json.loads(row[0]) if row else None
