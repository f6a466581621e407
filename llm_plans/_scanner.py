"""Which parts of a streamed tool call's JSON arguments are final, found in one linear pass."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Collection
from typing import Any

import jiter

# jiter parses whole documents only (its partial mode re-reads the text from the start on every
# call), so the pass that finds where each piece ends is written here. `re` skips strings,
# whitespace and numbers in C; the Python loop runs once per structural character, per `\n`
# escape of a text value and per fragment.
_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"[-+.0-9A-Za-z]*")
_STRING = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
# A text value's `\n` escapes end its lines, so the scan of one stops at each of them too.
_TEXT = re.compile(r'[^"\\]*(?:\\[^n][^"\\]*)*', re.DOTALL)
_CONTAINER = re.compile(r'[^"\[\]{}]*')
_SURROGATE = re.compile("[\ud800-\udfff]")
# Only a number with an exponent or over 308 digits can decode to an infinite float, so only a
# piece holding one is searched for infinities.
_MAYBE_HUGE = re.compile(r"[0-9][eE]|[0-9]{309}")

_MAX_DEPTH = 64
"""Plan arguments nest four levels deep; 64 is far beyond any real call and below jiter's own
limit (about 200), so deep nesting is one clear failure rather than jiter's."""

_MERGE = 32
"""Streamed fragments are often a few characters long: every 32 kept are joined into one, so
the text kept for a long piece costs about its own size, not an object per fragment."""

# Where the scan stands in the grammar of the arguments object.
_OPEN = 0  # before its `{`
_FIRST_KEY = 1  # after `{`: a key or `}`
_KEY = 2  # after `,`: a key
_COLON = 3
_VALUE = 4
_AFTER_VALUE = 5  # `,` or `}`
_FIRST_ITEM = 6  # after a list value's `[`: an element or `]`
_ITEM = 7  # after `,` in a list value: an element
_AFTER_ITEM = 8  # `,` or `]`
_CLOSED = 9

# What the scan is inside of.
_BETWEEN = 0  # nothing: at whitespace or a structural character
_IN_STRING = 1  # a key, or a string value or element
_IN_SCALAR = 2  # a number or literal value or element
_IN_CONTAINER = 3  # an object or array value or element, outside its strings
_IN_NESTED_STRING = 4  # a string inside such an object or array


class _Broken(Exception):
    """The arguments cannot be a JSON object: the scanner stops."""


class _Fragments:
    """The fed text still needed, kept as it came in and joined only to cut a piece out."""

    def __init__(self) -> None:
        self._parts: deque[tuple[int, str]] = deque()
        self._loose = 0
        """How many of the last parts are fragments as fed, not yet merged."""
        self.end = 0
        """The offset just after the text fed so far."""
        self.copied = 0
        """Characters copied by merging and cutting, to show in tests that it is linear."""

    def append(self, fragment: str) -> None:
        parts = self._parts
        parts.append((self.end, fragment))
        self.end += len(fragment)
        self._loose += 1
        if self._loose == _MERGE:
            # Each character is merged once at most: merged parts are never merged again.
            loose = [parts.pop() for _ in range(_MERGE)][::-1]
            merged = "".join(part for _, part in loose)
            parts.append((loose[0][0], merged))
            self.copied += len(merged)
            self._loose = 0

    def drop(self, offset: int) -> None:
        """Forget the fragments that end at or before `offset`."""
        parts = self._parts
        while parts and parts[0][0] + len(parts[0][1]) <= offset:
            parts.popleft()
        self._loose = min(self._loose, len(parts))

    def clear(self) -> None:
        self._parts.clear()
        self._loose = 0

    def cut(self, start: int, stop: int) -> str:
        """The text from `start` to `stop`; everything before `start` has been dropped."""
        pieces = []
        for at, part in self._parts:
            if at >= stop:
                break
            pieces.append(part[max(start - at, 0) : stop - at])
        piece = "".join(pieces)
        self.copied += len(piece)
        return piece


class ArgumentScanner:
    """Follows one tool call's JSON arguments as they stream in; tells which parts are final.

    Example:
        >>> scanner = ArgumentScanner()
        >>> scanner.feed('{"id": "p", "entries": [{"content": "a"}, {"con')
        True
        >>> scanner.final()
        {'id': 'p', 'entries': [{'content': 'a'}]}
    """

    def __init__(
        self,
        *,
        list_keys: Collection[str] = ("entries", "changes"),
        text_keys: Collection[str] = ("content",),
    ) -> None:
        self._list_keys = frozenset(list_keys)
        self._text_keys = frozenset(text_keys)
        self._fragments = _Fragments()
        self._broken = False
        self._state = _OPEN
        self._mode = _BETWEEN
        self._escape = False
        """A string's `\\` ended the last fragment: the next character is escaped."""
        self._depth = 0
        """How deep the scan is inside the object or array value (or element) it is in."""
        self._mark = -1
        """Where the piece being scanned starts (for a text value: its first undecoded
        character); -1 between pieces, when no fed text is needed any more."""
        self._key = ""
        self._keys: set[str] = set()
        self._values: dict[str, Any] = {}
        """The complete values, decoded, in the order their keys arrived."""
        self._items: list[Any] | None = None
        """The complete elements of the list value being scanned, if any."""
        self._text = False
        """The string being scanned is a text value: its complete lines are final."""
        self._newline = -1
        """Where the last `\\n` escape of the text value starts, or -1."""
        self._decoded_to = -1
        """Where the `\\n` escape ending `_lines` starts, or -1 when no line is decoded."""
        self._lines: str | None = None
        """The text value's decoded complete lines up to `_decoded_to`."""
        self._new = False
        """Something became final during the current `feed`."""
        self._fed = 0
        """How many characters were fed, broken or not."""
        self._steps = 0
        """Iterations of the scan loop, to show in tests (without a clock) that it is linear."""

    @property
    def broken(self) -> bool:
        """The text cannot be a JSON object of arguments.

        A syntax error, a value that is not an object, a duplicated top-level key, an
        undecodable piece, nesting deeper than 64 levels or a non-finite number. Once
        broken, `final()` returns None for good and `feed` only counts what it is given.
        """
        return self._broken

    @property
    def complete(self) -> bool:
        """The top-level object has closed (only whitespace may follow); never once broken."""
        return self._state == _CLOSED and not self._broken

    def feed(self, fragment: str) -> bool:
        """Scan a fragment. True when something new became final with it (see `final()`).

        False when it broke the scanner, or left `final()` as it was.
        """
        self._fed += len(fragment)
        if self._broken or not fragment:
            return False
        self._new = False
        try:
            if _SURROGATE.search(fragment):
                raise _Broken  # it could never be encoded, so never decoded
            start = self._fragments.end
            self._fragments.append(fragment)
            self._scan(fragment, start)
        except _Broken:
            self._break()
            return False
        if self._mark < 0:
            self._fragments.clear()
        return self._new

    def final(self) -> dict[str, Any] | None:
        """The final parts so far, as a dict in the order the keys arrived; None when broken.

        - Every top-level key whose value is complete, with its decoded value. A string,
          object or array is complete at its closing quote, brace or bracket; a number or
          literal at the first character after it (whitespace, `,` or `}`).
        - A key of `list_keys` whose array is still open: the list of its complete elements,
          each complete as a value is; absent until the first one is.
        - A key of `text_keys` whose string is still open: its decoded text up to its last
          complete line (everything before its last `\\n` escape, without that newline);
          absent until a line is complete.

        A key whose value has not started, or is an incomplete scalar or object, is absent.
        """
        if self._broken:
            return None
        final = dict(self._values)
        if self._items:
            final[self._key] = list(self._items)
        elif self._text and self._newline >= 0:
            try:
                final[self._key] = self._complete_lines()
            except _Broken:
                self._break()
                return None
        return final

    def _complete_lines(self) -> str:
        """The open text value up to its last complete line, decoding only lines new since."""
        if self._decoded_to != self._newline:
            lines = self._decode_text(self._fragments.cut(self._mark, self._newline))
            self._lines = lines if self._lines is None else f"{self._lines}\n{lines}"
            self._decoded_to = self._newline
            self._mark = self._newline + 2
            self._fragments.drop(self._mark)
        assert self._lines is not None  # a line is decoded once a `\n` escape was seen
        return self._lines

    def _break(self) -> None:
        self._broken = True
        self._fragments.clear()
        self._values.clear()
        self._items = None
        self._lines = None

    def _scan(self, text: str, base: int) -> None:
        """Scan `text`, the fragment that starts at offset `base` of the arguments."""
        at, end = 0, len(text)
        while at < end:
            self._steps += 1
            mode = self._mode
            if mode == _BETWEEN:
                at = _skip(_SPACE, text, at)
                if at < end:
                    self._structural(text[at], base + at)
                    at += 1
            elif mode in (_IN_STRING, _IN_NESTED_STRING):
                if self._escape:
                    self._escape = False
                    if self._text and text[at] == "n":
                        self._newline_at(base + at - 1)
                    at += 1
                    continue
                at = _skip(_TEXT if self._text else _STRING, text, at)
                if at == end:
                    break
                if text[at] == "\\":
                    if at + 1 == end:
                        self._escape = True
                    else:  # the only escape `_TEXT` stops at
                        self._newline_at(base + at)
                    at += 2
                elif mode == _IN_NESTED_STRING:
                    self._mode = _IN_CONTAINER
                    at += 1
                else:
                    at += 1
                    self._string_done(base + at)
            elif mode == _IN_SCALAR:
                at = _skip(_SCALAR, text, at)
                if at < end:
                    self._piece_done(base + at)
            else:
                at = _skip(_CONTAINER, text, at)
                if at < end:
                    bracket = text[at]
                    at += 1
                    if bracket == '"':
                        self._mode = _IN_NESTED_STRING
                    elif bracket in "[{":
                        self._nest()
                    else:
                        self._depth -= 1
                        if self._depth == 0:
                            self._piece_done(base + at)

    def _structural(self, char: str, offset: int) -> None:
        """Take a character outside any piece: punctuation, or the start of a piece."""
        state = self._state
        if state in (_FIRST_KEY, _KEY):
            if char == '"':
                self._begin(offset, _IN_STRING)
            elif char == "}" and state == _FIRST_KEY:
                self._state = _CLOSED
            else:
                raise _Broken
        elif state in (_VALUE, _ITEM, _FIRST_ITEM):
            if char == "]" and state == _FIRST_ITEM:
                self._list_done()
            elif char == "[" and state == _VALUE and self._key in self._list_keys:
                self._items = []
                self._state = _FIRST_ITEM
            elif char == '"':
                self._begin(offset, _IN_STRING)
                if state == _VALUE and self._key in self._text_keys:
                    self._text = True
                    self._mark = offset + 1  # decoded as lines, so without the quotes
            elif char in "[{":
                self._begin(offset, _IN_CONTAINER)
                self._nest()
            elif _skip(_SCALAR, char, 0):
                self._begin(offset, _IN_SCALAR)
            else:
                raise _Broken
        elif state == _AFTER_VALUE and char in ",}":
            self._state = _KEY if char == "," else _CLOSED
        elif state == _AFTER_ITEM and char in ",]":
            if char == ",":
                self._state = _ITEM
            else:
                self._list_done()
        elif state == _COLON and char == ":":
            self._state = _VALUE
        elif state == _OPEN and char == "{":
            self._state = _FIRST_KEY
        else:
            raise _Broken

    def _begin(self, offset: int, mode: int) -> None:
        self._mark = offset
        self._mode = mode
        self._fragments.drop(offset)

    def _nest(self) -> None:
        self._depth += 1
        outer = 2 if self._items is not None else 1  # the arguments, and the list value
        if outer + self._depth > _MAX_DEPTH:
            raise _Broken

    def _newline_at(self, offset: int) -> None:
        self._newline = offset
        self._new = True

    def _string_done(self, stop: int) -> None:
        if not self._text:
            self._piece_done(stop)
            return
        rest = self._decode_text(self._fragments.cut(self._mark, stop - 1))
        self._text = False
        self._newline = self._decoded_to = -1
        lines, self._lines = self._lines, None
        self._piece_done(stop, rest if lines is None else f"{lines}\n{rest}")

    def _piece_done(self, stop: int, *decoded: Any) -> None:
        """The piece from `_mark` to `stop` is complete: decode it (unless `decoded`)."""
        value = decoded[0] if decoded else _decode(self._fragments.cut(self._mark, stop))
        self._fragments.drop(stop)
        self._mark = -1
        self._mode = _BETWEEN
        state = self._state
        if state in (_FIRST_KEY, _KEY):
            if value in self._keys:
                raise _Broken
            self._keys.add(value)
            self._key = value
            self._state = _COLON
        elif state == _VALUE:
            self._values[self._key] = value
            self._state = _AFTER_VALUE
            self._new = True
        else:
            assert self._items is not None
            self._items.append(value)
            self._state = _AFTER_ITEM
            self._new = True

    def _list_done(self) -> None:
        assert self._items is not None
        if not self._items:
            self._new = True  # the key shows only now
        self._values[self._key] = self._items
        self._items = None
        self._state = _AFTER_VALUE

    def _decode_text(self, raw: str) -> str:
        """Decode part of a text value's string: a run of whole characters and escapes."""
        value = _decode(f'"{raw}"')
        assert isinstance(value, str)
        return value


def _skip(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where the run of `pattern` from `at` ends (every pattern here matches an empty run)."""
    match = pattern.match(text, at)
    assert match is not None
    return match.end()


def _decode(piece: str) -> Any:
    """A complete JSON value, decoded; a value JSON does not allow breaks the scanner."""
    try:
        value = jiter.from_json(
            piece.encode("utf-8"), allow_inf_nan=False, catch_duplicate_keys=True
        )
    except ValueError:  # UnicodeEncodeError included
        raise _Broken from None
    if _MAYBE_HUGE.search(piece) and not _finite(value):
        raise _Broken
    return value


def _finite(value: Any) -> bool:
    """No float in `value` is infinite (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True
