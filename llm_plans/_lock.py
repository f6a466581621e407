"""The lock of one session, and the fast failure of a session called from inside itself."""

from __future__ import annotations

import asyncio
import contextvars

from ._errors import ReentrancyError

# The sessions whose lock the running code holds, inherited by tasks it starts: a call from
# inside `send` or `on_commit` would wait for itself forever, so it fails at once instead.
_HOLDING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "llm_plans_holding", default=frozenset()
)


class SessionLock:
    """Calls on one session apply one at a time, in arrival order; a call from code that
    already holds this lock (a `send`, an `on_commit`, a task they started) raises
    ReentrancyError instead of waiting for itself."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    def check(self) -> None:
        """Raise ReentrancyError when the running code holds this lock."""
        if id(self) in _HOLDING.get():
            raise ReentrancyError(
                "a PlanSession method was called from inside this session's own send or "
                "on_commit; it would wait for itself. Schedule the call after send returns."
            )

    def busy(self) -> bool:
        """True while a call holds the lock."""
        return self._lock.locked()

    def held(self) -> Held:
        """`async with lock.held():` holds the lock, marked as held in the context."""
        self.check()
        return Held(self._lock, id(self))


class Held:
    """The session lock, marked as held in the context (a class, not a generator-based
    context manager: this runs on every call and costs a third as much)."""

    __slots__ = ("_key", "_lock", "_token")

    def __init__(self, lock: asyncio.Lock, key: int) -> None:
        self._lock = lock
        self._key = key
        self._token: contextvars.Token[frozenset[int]] | None = None

    async def __aenter__(self) -> None:
        await self._lock.acquire()
        self._token = _HOLDING.set(_HOLDING.get() | {self._key})

    async def __aexit__(self, *exc: object) -> None:
        if self._token is not None:
            _HOLDING.reset(self._token)
        self._lock.release()
