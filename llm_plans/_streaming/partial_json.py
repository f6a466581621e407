"""How far a streamed tool call's JSON arguments are final, found in one linear pass.

The pass only tracks structure: strings, nesting, and where the last final piece ends (a
top-level value, an element of a list value, a line of a text value). The final parts
themselves are decoded when a preview asks for them, with jiter. The elements of the first
list value (a plan's `entries`, a todo list) are decoded once each: a preview parses the
elements that became final since the last one, and the rest of the prefix with that list
left empty, so a long plan's previews cost what is new, not the whole text again. JSON
decodes an array element by element, so this is the whole prefix's decode, element for
element (tests/streaming/test_partial_json.py checks it against one parse of the closed prefix).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import jiter

# Outside strings only these characters matter; inside, only the quote and the backslash.
_PLAIN = re.compile(r'[^"\\{}\[\],:]+')
_SPACE = re.compile(r"[ \t\n\r]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IN_STRING = re.compile(r'[^"\\]+')
# Inside a container whose insides do not matter (a step object, a nested value), whole
# strings and everything but brackets are skipped in one match.
# (Written as an unrolled loop: the alternation form costs four times as much in `re`.)
_SKIP = re.compile(r'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*', re.DOTALL)
# A list's elements that are flat objects (a plan's steps: no brackets inside), a run of
# them in one match: each would take the pass three turns (`{`, its insides, `}`) and a
# turn for the comma, and end in the same state (the last one final, `done`).
_FLAT = r"[ \t\n\r]*\{" + _SKIP.pattern + r"\}"
_FIRST_FLAT = re.compile(_FLAT + r"(?:[ \t\n\r]*," + _FLAT + ")*", re.DOTALL)
_MORE_FLAT = re.compile(r"(?:[ \t\n\r]*," + _FLAT + ")+", re.DOTALL)

_MAX_DEPTH = 64
"""Plan arguments nest four levels deep; deeper is not a plan, and stops the previews."""

# What a string being scanned is.
_KEY, _VALUE, _ELEMENT, _INNER = range(4)


class FinalPrefix:
    """Follows one tool call's JSON arguments as they stream in; tells which parts are final.

    Example:
        >>> prefix = FinalPrefix()
        >>> prefix.feed('{"id": "p", "entries": [{"content": "a"}, {"con')
        True
        >>> prefix.final()
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
        self._parts: list[str] = []
        self._length = 0
        self.broken = False
        self._closed = False
        self._depth = 0
        self._list_depth = 0  # the depth inside the array of a list key, 0 when not in one
        self._expect_key = True
        self._key = ""
        self._keys: set[str] = set()
        self._string: int | None = None  # what the open string is, None outside strings
        self._escape = False
        self._key_text: list[str] = []
        self._final_at = 0
        self._closers = ""
        self._done = False  # the value (or list element) just scanned is complete
        self._cached: tuple[int, dict[str, Any] | None] | None = None
        # The first list value: where its elements start (after `[`), where the last
        # complete one ends, where its `]` is; the elements decoded so far, and up to where.
        self._list_key = ""
        self._list_open = -1
        self._in_list = False
        self._element_end = -1
        self._list_close = -1
        self._elements: list[Any] = []
        self._decoded_to = -1
        self._before_list: Any = None
        self.steps = 0
        """Turns of the scanning loop so far: linear in the text (the tests count them)."""
        self.text_elements = 0
        """Elements of list values that were strings (steps sent as text), complete so far."""
        self._structured = False  # an element of a list value was an object or an array

    def feed(self, text: str) -> bool:
        """Scan a fragment; True when something new became final with it."""
        if self.broken or not text:
            return False
        before = self._final_at
        if not text.isascii() and _SURROGATE.search(text):
            self.broken = True  # a lone surrogate can never be encoded: not a JSON text
            return False
        self._parts.append(text)
        base, self._length = self._length, self._length + len(text)
        self._scan(text, base)
        return self._final_at != before and not self.broken

    @property
    def commas_may_end_steps(self) -> bool:
        """Whether a `,` still to come may end a list element that is a string (a step sent
        as text, which no `}` or `]` ends): not once a list's elements are objects or
        arrays, once the first list has closed, or while a text value streams."""
        return not (
            self._structured
            or self._list_close >= 0
            or self.broken
            or (self._string == _VALUE and self._key in self._text_keys)
        )

    @property
    def complete(self) -> bool:
        """The arguments object has closed (nothing but whitespace followed) and is JSON."""
        return self._closed and self.final() is not None

    def final(self) -> dict[str, Any] | None:
        """The final parts so far, decoded (`{}` before any); None when the text is broken.

        Every top-level key whose value is complete, with that value; a list key's complete
        elements while its array is open; a text key's complete lines while its string is.
        The first list's elements are decoded once and the same objects come back from every
        later call: read them, never change them (repairs and validation make copies).
        """
        if self.broken:
            return None
        if self._final_at == 0:
            return {}
        if self._cached is not None and self._cached[0] == self._final_at:
            return self._cached[1]
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]  # joined when asked, which is rarely
        text, final_at = self._parts[0], self._final_at
        start = self._list_open
        try:
            if start < 0 or final_at < start:  # no element of the list is final yet
                value = _decode(text[:final_at] + self._closers)
            else:
                end = self._list_close if self._list_close >= 0 else self._element_end
                self._decode_elements(text, end)
                # The rest of the prefix with the list empty: `[` at `start`, its `]` (or
                # the closers, while it is open) after `end`. While the list is open that is
                # what stood before it, decoded once.
                if self._list_close >= 0:
                    value = _decode(text[:start] + text[end:final_at] + self._closers)
                else:
                    if self._before_list is None:
                        self._before_list = _decode(text[:start] + "]}")
                    value = self._before_list
                    if isinstance(value, dict):
                        value = dict(value)
                if isinstance(value, dict):
                    value[self._list_key] = list(self._elements)
        except (ValueError, UnicodeEncodeError):
            self.broken = True
            return None
        result = value if isinstance(value, dict) else None
        if result is None:
            self.broken = True
        self._cached = (final_at, result)
        return result

    def grown(self, had: list[Any]) -> list[Any] | None:
        """The first list's elements after those the caller `had` (the first ones `final()`
        gave, the same objects), when the list grew by them and nothing else became final:
        the list still open, an element the last final piece. A caller that had elements
        of it had every field before the list too, so `final()` now gives what it had with
        these elements after them. None otherwise: the caller had none of its elements,
        nothing new, the list closed, the text broken."""
        count = len(had)
        if count < 1 or self.broken or not self._in_list or self._final_at != self._element_end:
            return None
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        try:
            self._decode_elements(self._parts[0], self._element_end)
        except (ValueError, UnicodeEncodeError):
            self.broken = True
            return None
        elements = self._elements
        if len(elements) <= count or elements[count - 1] is not had[-1]:
            return None
        return elements[count:]

    def _decode_elements(self, text: str, end: int) -> None:
        """Decode the list's elements between the last decoded one and `end` (an element's
        end, or the list's `]`). The piece starts right after an element (or the `[`): as
        an array after a `null` element it is valid exactly when it is within the whole."""
        if end <= self._decoded_to:
            return
        if self._decoded_to < 0:
            self._elements = _decode("[" + text[self._list_open : end] + "]")
            if not self._elements and end != self._list_close:
                raise ValueError("a comma before the list's first element")  # `[,`
        else:
            self._elements += _decode("[null" + text[self._decoded_to : end] + "]")[1:]
        self._decoded_to = end

    # ---- the pass ---------------------------------------------------------------------------

    def _scan(self, text: str, base: int) -> None:
        at, end = 0, len(text)
        while at < end and not self.broken:
            self.steps += 1
            if self._depth == 0:
                # Outside the object only whitespace may stand, and one `{` before it.
                at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
                if at < end:
                    if self._closed or text[at] != "{":
                        self.broken = True
                        return
                    self._depth = 1
                    at += 1
                continue
            if self._string is not None:
                at = self._in_string(text, at, base)
                continue
            if self._list_depth and self._depth == 2:
                # A comma counts only after an element (before one, it ends an empty one).
                run = (_MORE_FLAT if self._done else _FIRST_FLAT).match(text, at)
                if run is not None:
                    at = run.end()
                    self._final(base + at, "]}")
                    self._done = self._structured = True
                    continue
            if self._depth >= (3 if self._list_depth else 2):
                at = _SKIP.match(text, at).end()  # type: ignore[union-attr]
                if at == end:
                    break
            else:
                match = _PLAIN.match(text, at)
                if match is not None:
                    at = match.end()
                    if at == end:
                        break
            self._structural(text[at], base + at)
            at += 1

    def _in_string(self, text: str, at: int, base: int) -> int:
        if self._escape:
            self._escape = False
            if text[at] == "n" and self._string == _VALUE and self._key in self._text_keys:
                self._final(base + at - 1, '"}')  # the line before this newline is complete
            if self._string == _KEY:
                self._key_text.append(text[at])
            return at + 1
        match = _IN_STRING.match(text, at)
        stop = match.end() if match is not None else at
        if self._string == _KEY:
            self._key_text.append(text[at:stop])
        if stop == len(text):
            return stop
        if text[stop] == "\\":
            self._escape = True
            if self._string == _KEY:
                self._key_text.append("\\")
            return stop + 1
        self._string_done(base + stop + 1)
        return stop + 1

    def _string_done(self, after: int) -> None:
        role, self._string = self._string, None
        if role == _KEY:
            try:
                key = jiter.from_json(('"' + "".join(self._key_text) + '"').encode("utf-8"))
            except (ValueError, UnicodeEncodeError):
                self.broken = True
                return
            if key in self._keys:
                self.broken = True  # a duplicated key: which value counts is anyone's guess
                return
            self._keys.add(key)
            self._key = key
        elif role == _VALUE:
            self._final(after, "}")
            self._done = True
        elif role == _ELEMENT:
            self._final(after, "]}")
            self._done = True
            self.text_elements += 1

    def _structural(self, char: str, offset: int) -> None:
        depth = self._depth
        if char == '"':
            if depth == 1:
                self._string = _KEY if self._expect_key else _VALUE
                if self._expect_key:
                    self._key_text = []
            elif depth == 2 and self._list_depth == 2:
                self._string = _ELEMENT
            else:
                self._string = _INNER
        elif char in "{[":
            self._depth = depth + 1
            if depth == 2 and self._list_depth == 2:
                self._structured = True
            if self._depth > _MAX_DEPTH:
                self.broken = True
            elif depth == 1 and char == "[" and self._key in self._list_keys:
                self._list_depth = 2
                if self._list_open < 0:
                    self._list_key, self._list_open, self._in_list = self._key, offset + 1, True
        elif char in "}]":
            self._depth = depth - 1
            if self._depth < 0:
                self.broken = True
            elif self._depth == 0:
                self._closed = True
                self._final(offset + 1, "")
            elif self._depth == 1:
                if self._in_list:
                    self._list_close, self._in_list = offset, False
                self._list_depth = 0
                self._final(offset + 1, "}")
                self._done = True
            elif self._depth == 2 and self._list_depth == 2:
                self._final(offset + 1, "]}")
                self._done = True
        elif char == ",":
            if depth == 1:
                self._expect_key = True
                if not self._done:
                    self._final(offset, "}")  # a number or literal value ends here
            elif depth == 2 and self._list_depth == 2 and not self._done:
                self._final(offset, "]}")
            self._done = False
        elif char == ":" and depth == 1:
            self._expect_key = False
            self._done = False

    def _final(self, at: int, closers: str) -> None:
        self._final_at = at
        self._closers = closers
        if self._in_list and closers == "]}":
            self._element_end = at


def _decode(text: str) -> Any:
    return jiter.from_json(text.encode("utf-8"), allow_inf_nan=False, catch_duplicate_keys=True)
