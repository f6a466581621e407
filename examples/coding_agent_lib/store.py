"""Each session's plan state on disk, so a restarted agent can `session/load` it.

Damage never stops the agent: a database sqlite cannot read is moved aside (with a warning
on stderr, and a notice for the user) and a fresh one started; a stored snapshot that is not
strict JSON raises `DamagedSnapshot`, which the agent reports to the user instead of failing.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

FILE_NAME = "plans.sqlite3"


class DamagedSnapshot(Exception):
    """A stored snapshot that cannot be read back; the message says why."""


def _reject_constant(token: str) -> Any:
    # Python's json reads NaN and Infinity, which are not JSON and no plan ever contains.
    raise ValueError(f"{token} is not a JSON number")


def parse_snapshot(text: str) -> dict[str, Any]:
    """A stored snapshot, parsed strictly."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise DamagedSnapshot(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise DamagedSnapshot(f"a JSON {type(value).__name__}, not an object")
    return value


class PlanStore:
    """Plan snapshots by session id in a sqlite file; every save is one atomic transaction."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / FILE_NAME
        self.notices: list[str] = []
        """What the user should hear about the store; the agent says it once."""
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            aside = self._move_aside()
            notice = (
                f"The plan store {self.path} was damaged ({exc}); it was moved to {aside} "
                "and a new one started, so earlier sessions' plans cannot be loaded."
            )
            print(f"warning: {notice}", file=sys.stderr)  # stdout is the ACP channel
            self.notices.append(notice)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, "
                "snapshot TEXT NOT NULL, updated REAL NOT NULL)"
            )
            # Cheap on a store of plans, and it finds damage a header check alone misses.
            (verdict,) = db.execute("PRAGMA quick_check").fetchone()
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"integrity check: {verdict}")
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        aside = self.path.with_name(f"{FILE_NAME}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        self.path.replace(aside)
        for suffix in ("-wal", "-shm"):  # sqlite's side files belong to the damaged database
            side = self.path.with_name(FILE_NAME + suffix)
            if side.exists():
                side.replace(aside.with_name(aside.name + suffix))
        return aside

    def save(self, session_id: str, cwd: str, snapshot: dict[str, Any]) -> None:
        with self._db:  # BEGIN ... COMMIT: a crash leaves the previous snapshot intact
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "cwd = excluded.cwd, snapshot = excluded.snapshot, updated = excluded.updated",
                (session_id, cwd, json.dumps(snapshot, allow_nan=False), time.time()),
            )

    def load(self, session_id: str) -> dict[str, Any] | None:
        """The session's snapshot, None when none was saved; DamagedSnapshot when unreadable."""
        row = self._db.execute(
            "SELECT snapshot FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        if not isinstance(row[0], str):
            raise DamagedSnapshot(f"stored as {type(row[0]).__name__}, not text")
        return parse_snapshot(row[0])
