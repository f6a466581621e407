"""NDJSON framing that keeps every byte: a stream in, its lines out, exactly as they came."""

from __future__ import annotations

from typing import NamedTuple

MAX_PARSED_LINE = 64 * 1024 * 1024
"""The longest line the proxy reads as JSON (64 MiB). A longer one is relayed unread, piece by
piece as it arrives, so memory stays bounded whatever a peer writes."""


class Piece(NamedTuple):
    """Bytes to relay: a whole line (`whole`, newline included) the proxy may read, or a part
    of a line it relays as it is (too long to read, or cut off by the end of the stream)."""

    data: bytes
    whole: bool


class Lines:
    """Splits a byte stream into lines as chunks arrive.

    Args:
        max_line: The longest line (in bytes, its newline left out) handed out whole, however
            it was chunked; a longer one comes in pieces that are not `whole`, as they arrive.
    """

    def __init__(self, max_line: int = MAX_PARSED_LINE) -> None:
        self._max_line = max_line
        self._pending = bytearray()
        self._long = False  # inside a line too long to read: relay it as it comes

    def feed(self, chunk: bytes) -> list[Piece]:
        """The pieces `chunk` completes, in order."""
        out: list[Piece] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            part = chunk[start : end + 1]
            if self._long:
                out.append(Piece(part, False))
                self._long = False
            else:
                if self._pending:
                    self._pending += part
                    part = bytes(self._pending)
                    self._pending.clear()
                out.append(Piece(part, len(part) - 1 <= self._max_line))
            start = end + 1
        rest = chunk[start:]
        if rest:
            if self._long:
                out.append(Piece(rest, False))
            else:
                self._pending += rest
                if len(self._pending) > self._max_line:
                    out.append(Piece(bytes(self._pending), False))
                    self._pending.clear()
                    self._long = True
        return out

    def end(self) -> list[Piece]:
        """What is left when the stream ends: a last line without its newline, relayed as it
        is (a peer that dies mid-message gets its half message through, as it would direct)."""
        rest, self._pending = bytes(self._pending), bytearray()
        self._long = False
        return [Piece(rest, False)] if rest else []
