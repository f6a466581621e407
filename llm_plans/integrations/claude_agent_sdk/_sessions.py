"""Which Claude Code session a hook comes from: the first one seen keeps the session's own
plans, each other one gets a key its plan ids are made with."""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

# Claude Code's session ids are UUIDs: the first 8 hex digits name a session as its
# transcript file does, short enough to leave room for a subagent's id in a plan id.
_UUID = re.compile(r"([0-9a-fA-F]{8})-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
KEY_CHARS = 8


class Entered(NamedTuple):
    """A hook's Claude session, as the mirror needs it."""

    key: str | None
    """What its plan ids are made with; None for the first session (the session's own)."""
    new: bool
    """Not seen before: its list will need room among the session's plans."""
    forgotten: list[str]
    """The keys of sessions no longer kept apart, to make room for it: their plans go."""


class Sessions:
    """The Claude Code sessions seen, by a digest of their `session_id` (a huge one is not
    kept): the first, and at most `kept` others, least recently active first."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self.first: str | None = None
        self.others: dict[str, str] = {}  # digest -> key

    def enter(self, session_id: object) -> Entered | None:
        """Where `session_id`'s calls go, None for a hook input with no session id, which
        could be any session's."""
        digest = _digest(session_id)
        if digest is None:
            return None
        if self.first is None or digest == self.first:
            new = self.first is None
            self.first = digest
            return Entered(None, new, [])
        key = self.others.pop(digest, None)
        new = key is None
        if key is None:
            key = self._new_key(session_id, digest)
        self.others[digest] = key  # the most recently active last
        forgotten: list[str] = []
        while len(self.others) > self.kept:
            forgotten.append(self.others.pop(next(iter(self.others))))
        return Entered(key, new, forgotten)

    def least_recent(self) -> list[str]:
        """The keys of the other sessions, the least recently active first."""
        return list(self.others.values())

    def find(self, session_id: object) -> tuple[str | None] | None:
        """`(key,)` of a session seen before (`(None,)` for the first), else None."""
        digest = _digest(session_id)
        if digest is None:
            return None
        if digest == self.first:
            return (None,)
        key = self.others.get(digest)
        return None if key is None else (key,)

    def _new_key(self, session_id: object, digest: str) -> str:
        # Two sessions never share a key (a hostile id may be made to look like another's):
        # the UUID's first digits, else slices of the digest, else a number no key has.
        taken = set(self.others.values())
        uuid = _UUID.fullmatch(session_id) if isinstance(session_id, str) else None
        candidates = [uuid.group(1).lower()] if uuid else []
        candidates += [digest[at : at + KEY_CHARS] for at in range(0, len(digest), KEY_CHARS)]
        for key in candidates:
            if key not in taken:
                return key
        return next(str(n) for n in range(len(taken) + 1) if str(n) not in taken)


def _digest(session_id: object) -> str | None:
    if not isinstance(session_id, str) or not session_id:
        return None
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
