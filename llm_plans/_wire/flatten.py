"""Flatten plans into the entries of ACP's legacy `plan` update, bounded and cached per plan,
and read file plans for the stable forms.

An items plan contributes its entries as v1 shows them (`forms.shown_entries`); a markdown
plan its list items (`- [x]` completed, other items pending), or its first line when it has
none; a file plan the list items of its file. The stable forms (`schema`, `v2`), which have no
file plans, send a file plan as a markdown plan of its file's whole text. Either way the file
is read again only when it changed, and checked against the workspace at every read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .._core.plans import Json, Stored
from .._core.uris import resolved_inside
from .._limits import Limits
from .forms import CANCELLED_PREFIX, Document, WireForm, shown_entries

# The legacy fallback reads a file plan to show its steps; a bigger file is not a plan a
# client should render as a checklist, so it is shown as one entry instead.
MAX_PLAN_FILE_BYTES = 1024 * 1024

_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[( |x|X)\]\s+(?P<text>\S.*)$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s*#{1,6}\s*")

ReadText = Callable[[str], "str | None"]


def markdown_items(text: str) -> list[tuple[str, str]]:
    """The list items of a Markdown text as (status, text); checked boxes are completed."""
    items = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        box = _CHECKBOX.match(line)
        if box:
            items.append(("pending" if box.group(1) == " " else "completed", box.group("text")))
            continue
        item = _ITEM.match(line)
        if item:
            items.append(("pending", item.group("text")))
    return items


def may_hold_items(text: str) -> bool:
    """False when no line of `text` can be a list item, wherever it stands (in a fence or
    not): then `text` adds nothing to what `markdown_items` finds in a text it ends."""
    return any(map(_ITEM.match, text.splitlines()))


def headline(text: str) -> str:
    """The first non-empty line of a Markdown text, without heading marks."""
    for line in text.splitlines():
        stripped = _HEADING.sub("", line).strip()
        if stripped:
            return stripped
    return text.strip()


def local_path(uri: str) -> Path | None:
    """The local path a `file:` URI names, or None for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


def read_plan_file(uri: str) -> str | None:
    """The text of a local plan file, or None if it is not one we can read."""
    path = local_path(uri)
    return None if path is None else read_local(path)


def read_local(path: Path) -> str | None:
    """The UTF-8 text of a regular file of at most `MAX_PLAN_FILE_BYTES`, or None.

    Checked on the open file, not the path: a file swapped for a pipe between a check and
    the read cannot block, and one that grows meanwhile is read only up to the bound."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            data = file.read(MAX_PLAN_FILE_BYTES + 1)
        if len(data) > MAX_PLAN_FILE_BYTES:
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


# A label names a plan; a longer heading would crowd out the step's own text.
MAX_LABEL_CHARS = 40
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>\S.*?)\s*#*\s*$")


def label_of(plan: Stored) -> str:
    """What a plan's steps are labelled with in the legacy list: a markdown plan's first
    heading (outside code fences), else the plan's id; at most `MAX_LABEL_CHARS`."""
    label = plan.id
    if plan.type == "markdown":
        in_fence = False
        for line in plan.content.splitlines():
            if _FENCE.match(line):
                in_fence = not in_fence
                continue
            heading = None if in_fence else _HEADING_LINE.match(line)
            if heading:
                label = heading.group("text")
                break
    return label if len(label) <= MAX_LABEL_CHARS else label[: MAX_LABEL_CHARS - 3] + "..."


def _tag(label: str) -> str:
    return f"[{label}] "


def carries_label(content: str, label: str) -> bool:
    """Whether a step's text starts as `labeled` makes it start for `label`."""
    tag = _tag(label)
    return content.startswith(tag) or content.startswith(CANCELLED_PREFIX + tag)


def labeled(steps: Iterable[Json], label: str, max_chars: int) -> tuple[Json, ...]:
    """`steps` with `[label] ` before each text (after `Cancelled: ` in a step that reads as
    cancelled), each text cut to `max_chars` with `...`."""
    tag = _tag(label)
    out = []
    for step in steps:
        content = step["content"]
        if step["status"] == "completed" and content.startswith(CANCELLED_PREFIX):
            content = CANCELLED_PREFIX + tag + content[len(CANCELLED_PREFIX) :]
        else:
            content = tag + content
        if len(content) > max_chars:
            content = content[: max_chars - 3] + "..."
        out.append({**step, "content": content})
    return tuple(out)


def _bounded_read(read_text: ReadText, uri: str) -> str | None:
    """What a custom reader (a client's file system) gives for `uri`, held to the bound a
    local file is: a reader that fails, or gives more than `MAX_PLAN_FILE_BYTES` or not text,
    leaves the file unreadable, never the session broken."""
    try:
        text = read_text(uri)
    except Exception:
        return None
    if not isinstance(text, str):
        return None
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: no client can be sent it
        return None
    return text if size <= MAX_PLAN_FILE_BYTES else None


def _unreadable(uri: str) -> str:
    """What a file plan shows for a file that cannot be read: the one line naming it."""
    path = local_path(uri)
    return f"Plan file: {path if path is not None else uri}"


@dataclass(frozen=True)
class _Cached:
    key: object
    entries: tuple[Json, ...]


@dataclass(frozen=True)
class _Read:
    key: object
    document: Document


class Flattener:
    """What each plan contributes to the legacy list, and what a file plan's file holds,
    remembered until the plan or its file changes: an unchanged markdown or file plan is not
    parsed or read again."""

    def __init__(self, limits: Limits, workspace: Path | None, read_text: ReadText) -> None:
        self._limits = limits
        self._workspace = workspace
        self._read_text = read_text
        self._cache: dict[str, _Cached] = {}
        self._documents: dict[str, _Read] = {}
        self._labeled: dict[str, _Cached] = {}

    def entries(self, plans: Iterable[Stored], previews: Iterable[Stored] = ()) -> list[Json]:
        """The legacy list for `plans` in creation order, with the plans that streams in flight
        are writing (`previews`) shown in place of, or after, the plans they change."""
        shown = {plan.id: plan for plan in plans}
        for plan in previews:
            if plan.type == "markdown" and not markdown_items(plan.content):
                continue  # its heading would flash as a step while its list is still coming
            shown[plan.id] = plan
        out: list[Json] = []
        for number, plan in enumerate(shown.values()):
            # Every plan's steps but the first plan's say which plan they belong to.
            out += self.steps(plan) if number == 0 else self.labeled(plan)
        self.retain(shown)
        return out

    def labeled(self, plan: Stored) -> tuple[Json, ...]:
        """One plan's steps with its label before each (`[label] text`), remembered as its
        steps are."""
        steps = self.steps(plan)
        cached = self._labeled.get(plan.id)
        if cached is not None and cached.key is steps:
            return cached.entries
        label = label_of(plan)
        if plan.type == "markdown" and not markdown_items(plan.content):
            # Shown by its headline alone: a step that is its heading says whose it is.
            entries = steps if [s["content"] for s in steps] == [label] else None
        else:
            entries = None
        if entries is None:
            entries = labeled(steps, label, self._limits.max_entry_chars)
        self._labeled[plan.id] = _Cached(steps, entries)
        return entries

    def steps(self, plan: Stored) -> tuple[Json, ...]:
        """What one plan contributes to the legacy list."""
        if plan.type == "items":
            cached = self._cache.get(plan.id)
            if cached is not None and cached.key is plan:
                return cached.entries
            entries = shown_entries(plan, WireForm.LEGACY, self._limits.max_entry_chars)
            if entries is not plan.entries:  # rendered (a cancelled step, an activeForm)
                self._cache[plan.id] = _Cached(plan, entries)
            return entries
        key: object = plan if plan.type == "markdown" else self._file_key(plan.uri)
        cached = self._cache.get(plan.id)
        if cached is not None and key is not None and (cached.key is key or cached.key == key):
            return cached.entries
        entries = self._flatten(plan, key)
        self._cache[plan.id] = _Cached(key, entries)
        return entries

    @property
    def max_chars(self) -> int:
        """The most characters a step's text shows with (`Limits.max_entry_chars`)."""
        return self._limits.max_entry_chars

    def document(self, plan: Stored) -> Document:
        """A file plan as the stable forms send it: its file's whole text (or the line the
        legacy list shows for a file it cannot read) and the file's absolute path."""
        key = self._file_key(plan.uri)
        cached = self._documents.get(plan.id)
        # The URI too: two links to one file are two paths.
        if cached is not None and key is not None and cached.key == (plan.uri, key):
            return cached.document
        path = local_path(plan.uri)
        text = self._file_text(plan, key)
        document = Document(
            text if text is not None else _unreadable(plan.uri),
            None if path is None else str(path),
        )
        self._documents[plan.id] = _Read((plan.uri, key), document)
        return document

    def retain(self, ids: Iterable[str]) -> None:
        """Forget what was worked out for plans other than `ids` (removed ones)."""
        for cache in (self._cache, self._documents, self._labeled):
            for stale in set(cache).difference(ids):
                del cache[stale]

    def _flatten(self, plan: Stored, key: object) -> tuple[Json, ...]:
        if plan.type == "markdown":
            items = markdown_items(plan.content)
            return self._bounded(items, plan.id) or (
                self._entry("pending", headline(plan.content)),
            )
        text = self._file_text(plan, key)
        entries = self._bounded(markdown_items(text), plan.id) if text is not None else ()
        return entries or (self._entry("pending", _unreadable(plan.uri)),)

    def _file_text(self, plan: Stored, key: object) -> str | None:
        # `key` is `_file_key(plan.uri)`: None unless the file is a readable local file inside
        # the workspace. A custom reader (the client's file system) checks the same path.
        if self._read_text is not read_plan_file:
            path = local_path(plan.uri)
            if path is None or resolved_inside(path, self._workspace, self._limits) is not None:
                return _bounded_read(self._read_text, plan.uri)
            return None
        if isinstance(key, tuple):
            return read_local(Path(key[0]))  # the checked real path, not the link
        return None

    def _file_key(self, uri: str) -> object:
        # The file as it is now: a changed, replaced or re-linked file gets a new key. None
        # when it is not a readable local file inside the workspace.
        # Checked at every read: a file swapped for a symlink after the plan was accepted
        # must not show another file's contents.
        path = local_path(uri)
        real = None if path is None else resolved_inside(path, self._workspace, self._limits)
        if real is None:
            return None
        try:
            stat = os.stat(real)
        except (OSError, ValueError):
            return None
        return (str(real), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)

    def _bounded(self, items: list[tuple[str, str]], plan_id: str) -> tuple[Json, ...]:
        limit = self._limits.max_entries
        entries = [self._entry(status, text) for status, text in items[:limit]]
        if len(items) > limit:
            # The last slot says what was left out rather than silently dropping it.
            entries[-1] = self._entry(
                "pending", f"... {len(items) - limit + 1} more steps in plan {plan_id}"
            )
        return tuple(entries)

    def _entry(self, status: str, text: str) -> Json:
        text = text.strip() or "(empty)"
        if len(text) > self._limits.max_entry_chars:
            text = text[: self._limits.max_entry_chars - 3] + "..."
        return {"content": text, "priority": "medium", "status": status}
