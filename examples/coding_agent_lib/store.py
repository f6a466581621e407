"""Each session's plan state on disk, so a restarted agent can `session/load` it; beside it,
the state its model backend keeps (the scripted model's progress through its script).

Damage never stops the agent: a database sqlite cannot read is moved aside (with a warning
on stderr, and a notice for the user) and a fresh one started; a stored snapshot that is not
strict JSON raises `DamagedSnapshot`, which the agent reports to the user instead of failing.

A save is one sqlite transaction with an fsync, milliseconds to tens of milliseconds: `Saver`
runs them on one worker thread, in commit order, so the event loop (and with it cancellation,
other sessions and the ACP pipe) never waits for the disk.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import sqlite3
import sys
import threading
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
        # One connection for the loop's reads and the saver's writes, one at a time.
        self._guard = threading.Lock()
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
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # Each commit reaches the disk before the save returns (and so before the client
            # hears of it); some builds default to NORMAL, which can lose the last commits.
            db.execute("PRAGMA synchronous=FULL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, "
                "snapshot TEXT NOT NULL, updated REAL NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS models (id TEXT PRIMARY KEY, state TEXT NOT NULL)"
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
        """Store a snapshot now (blocking: the agent saves through a `Saver`)."""
        with self._guard, self._db:  # BEGIN ... COMMIT: a crash leaves the last snapshot intact
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "cwd = excluded.cwd, snapshot = excluded.snapshot, updated = excluded.updated",
                (session_id, cwd, json.dumps(snapshot, allow_nan=False), time.time()),
            )

    def load(self, session_id: str) -> dict[str, Any] | None:
        """The session's snapshot, None when none was saved; DamagedSnapshot when unreadable."""
        with self._guard:
            row = self._db.execute(
                "SELECT snapshot FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            return None
        if not isinstance(row[0], str):
            raise DamagedSnapshot(f"stored as {type(row[0]).__name__}, not text")
        return parse_snapshot(row[0])

    def save_model(self, session_id: str, state: dict[str, Any]) -> None:
        """Store the session's model state now (blocking: the agent saves through a `Saver`)."""
        with self._guard, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO models VALUES (?, ?)",
                (session_id, json.dumps(state, allow_nan=False)),
            )

    def load_model(self, session_id: str) -> dict[str, Any] | None:
        """The session's model state, None when none was saved or it cannot be read: a model
        without its state acts as in a new session."""
        with self._guard:
            row = self._db.execute(
                "SELECT state FROM models WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None or not isinstance(row[0], str):
            return None
        try:
            return parse_snapshot(row[0])
        except DamagedSnapshot:
            return None


class Saver:
    """Saves a store's snapshots on one worker thread, in the order they were committed.

    `save` returns at once. Saves of one session that queue up while the disk is busy are
    folded into the newest, which is always written; `flushed()` waits (without blocking the
    loop) until everything saved so far is on disk. Queued saves still run at interpreter exit.
    """

    def __init__(self, store: PlanStore) -> None:
        self.store = store
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plan-store")
        self._serials = itertools.count(1)
        self._newest: dict[str, tuple[int, str, dict[str, Any]]] = {}
        self._guard = threading.Lock()
        self._last: concurrent.futures.Future[None] | None = None

    def save(self, session_id: str, cwd: str, snapshot: dict[str, Any]) -> None:
        """Queue a session's snapshot (taken at its commit) to be written."""
        serial = next(self._serials)
        with self._guard:
            self._newest[session_id] = (serial, cwd, snapshot)
        self._last = self._pool.submit(self._write, session_id, serial)

    def _write(self, session_id: str, serial: int) -> None:
        with self._guard:
            newest = self._newest.get(session_id)
            if newest is None or newest[0] != serial:
                return  # a later commit of the session is queued behind this one and writes
            del self._newest[session_id]
        _, cwd, snapshot = newest
        try:
            self.store.save(session_id, cwd, snapshot)
        except Exception as exc:  # the disk is full, the file went away: the agent goes on
            notice = (
                f"The plans of session {session_id} could not be saved ({exc}); "
                "they are saved again at the next change."
            )
            print(f"warning: {notice}", file=sys.stderr)
            self.store.notices.append(notice)

    def save_model(self, session_id: str, state: dict[str, Any]) -> None:
        """Queue a session's model state to be written, after the snapshots queued before."""
        self._last = self._pool.submit(self._write_model, session_id, state)

    def _write_model(self, session_id: str, state: dict[str, Any]) -> None:
        try:
            self.store.save_model(session_id, state)
        except Exception as exc:  # as for plans: the agent goes on, the user is told
            notice = f"The model state of session {session_id} could not be saved ({exc})."
            print(f"warning: {notice}", file=sys.stderr)
            self.store.notices.append(notice)

    async def flushed(self) -> None:
        """Return once every snapshot saved so far is written (or failed with a notice)."""
        last = self._last
        if last is None or last.done():
            return
        # The single worker runs saves in order: the last one done means all are. Shielded,
        # so a cancelled wait never cancels a queued save.
        await asyncio.shield(asyncio.wrap_future(last))

    async def load(self, session_id: str) -> dict[str, Any] | None:
        """`PlanStore.load` after the queued saves, off the event loop."""
        await self.flushed()
        return await asyncio.to_thread(self.store.load, session_id)

    async def load_model(self, session_id: str) -> dict[str, Any] | None:
        """`PlanStore.load_model` after the queued saves, off the event loop."""
        await self.flushed()
        return await asyncio.to_thread(self.store.load_model, session_id)

    def close(self) -> None:
        """Write what is queued, then stop the worker."""
        self._pool.shutdown(wait=True)
