"""What the session keeps under an entry's `_meta["llm_plans"]`, and the rule each key meets.

That key is the session's, not the model's: the dialects write it (a Claude task's number,
a todo's `activeForm`, a dialect's own status) through the core, our tools refuse it in what
a model sends (`refused`), and a restored snapshot's is held to the rules of the field each
key stands for (`problems`). So a snapshot brings in nothing a call could not have made: no
task number reused or never issued, no text longer than a client is promised to show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .._limits import Limits
from .plans import META_KEY, Json
from .results import KEPT_BY_SESSION, Problem, shown

_NUMBER = re.compile(r"[1-9][0-9]*")
OWN_STATUSES = frozenset({"blocked"})
"""The dialects' own status words an entry keeps beside ACP's status (`blocked`: pending)."""


def refused(metas: Iterable[tuple[int, Any]]) -> list[Problem]:
    """A problem for each of a model's entries that sets `_meta["llm_plans"]`, given the
    `_meta` of each entry that has one, by its index."""
    return [
        Problem(f"entries[{index}]._meta.{META_KEY}", KEPT_BY_SESSION, meta[META_KEY])
        for index, meta in metas
        if isinstance(meta, Mapping) and META_KEY in meta
    ]


def problems(entries: Sequence[Json], limits: Limits, last_task: int) -> list[Problem]:
    """What is wrong with what `entries` (one list, as a snapshot holds it) keep under
    `_meta["llm_plans"]`: each key by its field's rules, task numbers at most `last_task`
    (the highest the session issued) and each used once in the list."""
    found: list[Problem] = []
    numbered: dict[str, int] = {}
    for index, e in enumerate(entries):
        meta = e.get("_meta")
        if not isinstance(meta, Mapping) or META_KEY not in meta:
            continue
        path = f"entries[{index}]._meta.{META_KEY}"
        kept = meta[META_KEY]
        if not isinstance(kept, Mapping):
            found.append(Problem(path, "must be an object of the keys the session keeps.", kept))
            continue
        unknown = [key for key in kept if key not in _RULES]
        if unknown:  # one problem, however many keys: a snapshot may hold any number
            found.append(
                Problem(
                    path,
                    f"keys the session does not keep: {', '.join(map(shown, unknown))}. It "
                    f"keeps {', '.join(_RULES)}.",
                )
            )
        for key, value in kept.items():
            rule = _RULES.get(key)
            if rule is not None and (message := rule(value, limits, last_task)) is not None:
                found.append(Problem(f"{path}.{key}", message, value))
        number = kept.get("taskId")
        if isinstance(number, str):
            if number in numbered:
                found.append(
                    Problem(
                        f"{path}.taskId",
                        f"entries[{numbered[number]}] has this task number; a number names "
                        "one task of a list.",
                        number,
                    )
                )
            numbered.setdefault(number, index)
    return found


def _text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return "must be a string."
    if len(value) > limit:
        return f"{len(value)} characters; at most {limit}, as a step's text."
    return None


def _step_text(value: Any, limits: Limits, last_task: int) -> str | None:
    return _text(value, limits.max_entry_chars)


def _todo_id(value: Any, limits: Limits, last_task: int) -> str | None:
    # A todo list's own id: Cursor's are held to an id's length, TodoWrite's to a step's.
    return _text(value, max(limits.max_entry_chars, limits.max_id_length))


def _task_number(value: Any, limits: Limits, last_task: int) -> str | None:
    if not isinstance(value, str) or not _NUMBER.fullmatch(value):
        return 'must be a task number: decimal digits such as "4", no leading zero.'
    # Measured first: last_task is below 10**max_id_length, and int() of thousands of digits
    # is slow (past 4,300, refused).
    if len(value) > limits.max_id_length or _higher(value, last_task):
        return "higher than every task number the session issued (its last_task)."
    return None


def _higher(digits: str, last_task: int) -> bool:
    try:
        return int(digits) > last_task
    except ValueError:  # more digits than Python reads (a max_id_length in the thousands)
        return True


def _task_numbers(value: Any, limits: Limits, last_task: int) -> str | None:
    if not isinstance(value, list):
        return "must be a list of task numbers."
    for number in value:
        message = _task_number(number, limits, last_task)
        if message is not None:
            return f"{shown(number)} in it: {message}"
    if len(set(value)) != len(value):
        return "names a task more than once."
    return None


def _metadata(value: Any, limits: Limits, last_task: int) -> str | None:
    if not isinstance(value, dict):
        return "must be a JSON object."
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return "must be JSON."
    if size > limits.max_entry_chars:
        return f"{size} characters as JSON; at most {limits.max_entry_chars} are kept with a task."
    return None


def _own_status(value: Any, limits: Limits, last_task: int) -> str | None:
    if not isinstance(value, str) or value not in OWN_STATUSES:
        return f"accepted values: {', '.join(sorted(OWN_STATUSES))}."
    return None


_RULES: dict[str, Callable[[Any, Limits, int], str | None]] = {
    "taskId": _task_number,
    "activeForm": _step_text,
    "description": _step_text,
    "owner": _step_text,
    "id": _todo_id,
    "status": _own_status,
    "blocks": _task_numbers,
    "blockedBy": _task_numbers,
    "metadata": _metadata,
}
"""Every key the dialects keep, and its field's rule."""
