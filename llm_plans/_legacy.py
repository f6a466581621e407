"""Flatten markdown and file plans into the entries of ACP's legacy `plan` update."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ._models import FilePlan, ItemsPlan, MarkdownPlan, PlanEntry, Status

# The legacy fallback reads a file plan to show its steps; a bigger file is not a plan a
# client should render as a checklist, so it is shown as one entry instead.
MAX_PLAN_FILE_BYTES = 1024 * 1024

_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[( |x|X)\]\s+(?P<text>\S.*)$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s*#{1,6}\s*")

ReadText = Callable[[str], "str | None"]


def markdown_entries(text: str) -> list[PlanEntry]:
    """The list items of a Markdown text as entries; checked boxes are completed."""
    entries = []
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        box = _CHECKBOX.match(line)
        if box:
            status: Status = "pending" if box.group(1) == " " else "completed"
            entries.append(PlanEntry(content=box.group("text").strip(), status=status))
            continue
        item = _ITEM.match(line)
        if item:
            entries.append(PlanEntry(content=item.group("text").strip()))
    return entries


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
    if path is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_PLAN_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def plan_entries(
    plan: ItemsPlan | MarkdownPlan | FilePlan, read_text: ReadText = read_plan_file
) -> Iterable[PlanEntry]:
    """What one plan contributes to the legacy list."""
    if isinstance(plan, ItemsPlan):
        return plan.entries
    if isinstance(plan, MarkdownPlan):
        return markdown_entries(plan.content) or [PlanEntry(content=headline(plan.content))]
    text = read_text(plan.uri)
    entries = markdown_entries(text) if text is not None else []
    if entries:
        return entries
    path = local_path(plan.uri)
    return [PlanEntry(content=f"Plan file: {path if path is not None else plan.uri}")]
