"""What the list dialects share: an entry in ACP's shape, a full replacement that keeps what
the session knew of each item, and problem paths in a dialect's own terms.

A dialect module owns its tools' argument shapes (the definition the model reads and the
validator, which also takes the variants models send), and turns a validated call into the
session's plans through the core's own writers (`_core.apply.write_list`), so every dialect
is held to the rules, limits and guarantees `create_plan` is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._core.plans import META_KEY, Json, Stored, extra_of, meta_with


def entry(
    content: str,
    status: str,
    extra: Mapping[str, Any] | None = None,
    priority: str = "medium",
) -> Json:
    """An ACP entry keeping `extra` under `_meta["llm_plans"]`, values that are None left
    out. Its priority is medium unless the dialect's call gave one (opencode's and Vibe's
    todos have priorities; most dialects have none)."""
    out: Json = {"content": content, "priority": priority, "status": status}
    kept = {k: v for k, v in (extra or {}).items() if v is not None}
    if kept:
        out["_meta"] = {META_KEY: kept}
    return out


RESTATED = frozenset({"status", "activeForm", "id"})
"""What a list dialect's every call says of an item, present or not (`carried` drops the
old value when the new call leaves it out): its own status word, `activeForm`, the id a
todo list gives its items. A task's number, description and owner are only ever said by the
task tools."""


def carried(
    current: Stored | None, entries: list[Json], *, priority_sent: bool = False
) -> list[Json]:
    """A full replacement's entries, keeping the priority and `_meta` of each current entry
    whose text is unchanged (the first one with that text, each used once).

    `priority_sent`: the call says every entry's priority (opencode's and Vibe's todos carry
    one, which the model restates in each call), so the new entry's wins over the kept one.

    Under `_meta["llm_plans"]`, what every call restates (`RESTATED`) is the new entry's;
    what only the task tools say (a task's number, description and owner) is kept unless the
    new entry says otherwise, so a TodoWrite restating a task keeps the number TaskUpdate
    knows it by.
    """
    if current is None or not current.entries:
        return entries
    by_text: dict[str, list[Json]] = {}
    for old in current.entries:
        by_text.setdefault(old["content"], []).append(old)
    out = []
    for new in entries:
        olds = by_text.get(new["content"])
        if not olds:
            out.append(new)
            continue
        old = olds.pop(0)
        priority = new["priority"] if priority_sent else old["priority"]
        merged: Json = {"content": new["content"], "priority": priority}
        merged["status"] = new["status"]
        kept = {k: v for k, v in extra_of(old).items() if k not in RESTATED}
        kept.update(extra_of(new))
        meta = meta_with(old.get("_meta"), kept)
        if meta:
            merged["_meta"] = meta
        out.append(merged)
    return out


def renamer(field_name: str) -> Callable[[str], str]:
    """Maps the core's problem paths (`entries[2].content`) to a dialect's (`todos[2].content`)."""

    def rename(path: str) -> str:
        return field_name + path[len("entries") :] if path.startswith("entries") else path

    return rename
