"""Plans built from validated arguments, with the limits and rules every plan must meet.

`apply` decides what a call does; this module turns the fields it settled on into a stored
plan, or into the problems that stop it (ids, the field each kind needs, sizes, locations).
Every path that writes a plan comes through here: a create, each form of update (a full
replacement of any kind, `changes` to steps) and a restored snapshot, so that anything a
session holds is something a `create_plan` call would accept, and its snapshot restores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._limits import Limits
from .._models import PlanType
from . import kept
from .plans import CONTENT, PRIORITY, STATUS, Json, Stored
from .repair import finite
from .results import Problem
from .uris import file_uri

FIELD_FOR: dict[PlanType, str] = {"items": "entries", "markdown": "content", "file": "uri"}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0 and C1 control characters, and DEL
NOT_FINITE = (
    "NaN and Infinity are not JSON numbers (1e999 is Infinity); send finite numbers or strings."
)


@dataclass(frozen=True)
class Rules:
    """What the core needs to know beyond the call itself."""

    limits: Limits = field(default_factory=Limits)
    workspace: Path | None = None
    list_id: str | None = None
    """The id of the one items plan that single-list dialects (`TodoWrite`, ...) write, when
    such a dialect is on. That plan may be empty: an empty todo list keeps its plan."""
    lists_only: bool = False
    """The session takes other dialects' tools only (not ours): nothing but its list's tools
    writes the plan at `list_id`."""
    mirror: bool = False
    """The call mirrors one another agent already ran (`PlanSession.mirror`): ids that
    agent issued (a task's number) are taken, as no model's call may set them."""
    reserved: tuple[str, ...] = ()
    """Plan id prefixes under which subagents' plans reach the client in this session (one
    that does not take subagent sessions): none of its own plans may take such an id."""
    restoring: bool = False
    """The call re-creates a plan of a snapshot (`restore`): its entries keep what the
    session kept under `_meta["llm_plans"]`, each key held to its field's rules, where a
    model's call may not set that key at all."""


def check_id(plan_id: str, limits: Limits) -> list[Problem]:
    """What is wrong with an id the model chose, if anything."""
    if not plan_id.strip():
        return [Problem("id", "must not be empty; send null to get a generated id.", plan_id)]
    if _CONTROL.search(plan_id):
        return [Problem("id", "control characters are not allowed in ids.", plan_id)]
    if plan_id != plan_id.strip():
        return [Problem("id", "no spaces at the start or end.", plan_id)]
    if len(plan_id) > limits.max_id_length:
        return [Problem("id", f"at most {limits.max_id_length} characters.", plan_id)]
    return []


def check_step_text(
    path: str, content: str, limits: Limits, *, markdown: bool = True
) -> Problem | None:
    """What is wrong with the wording of one step, wherever it comes from (an entry, a
    change's content, a todo's activeForm), if anything; `markdown` when the model can write
    a markdown plan instead (our tools can, a todo list's cannot)."""
    if len(content) > limits.max_entry_chars:
        instead = ", or use a markdown plan for detail" if markdown else ""
        return Problem(
            path,
            f"{len(content)} characters; at most {limits.max_entry_chars}. "
            f"Keep steps short{instead}.",
        )
    return None


def check_kind_fields(kind: PlanType, args: Mapping[str, Any]) -> list[Problem]:
    problems = []
    wanted = FIELD_FOR[kind]
    if args.get(wanted) is None:
        problems.append(
            Problem(wanted, f'type "{kind}" requires {wanted}; it was null or missing.')
        )
    for other_kind, other in FIELD_FOR.items():
        if other != wanted and args.get(other) is not None:
            problems.append(
                Problem(
                    other,
                    f'only used with type "{other_kind}"; for a "{kind}" plan send null.',
                    args[other],
                )
            )
    return problems


def build(
    kind: PlanType,
    plan_id: str,
    args: Mapping[str, Any],
    rules: Rules,
    problems: list[Problem],
    meta: Json | None,
    *,
    validated: bool = False,
    bounded: bool = False,
    kept_by: Literal["model", "snapshot", "session"] = "model",
    last_task: int = 0,
) -> Stored | None:
    """The plan these fields make, or None with the reasons added to `problems`.

    `validated`: the entries are new dicts from our own argument validators, whose keys come
    in ACP's order; when they already say priority and status they are kept as they are
    (`usual_items`). `bounded`: their texts are known to be within the limits.
    `kept_by`: who wrote what the entries keep under `_meta["llm_plans"]`: a model, which may
    not; a snapshot, held to each key's rules with task numbers at most `last_task` (the
    highest issued); or the session itself (a dialect's translation, checked as it is made).
    """
    limits = rules.limits
    if kind == "items" and args.get("entries") is not None:
        raw: list[Json] = args["entries"]
        usual = None
        if validated and not problems:
            usual = usual_items(plan_id, raw, rules, meta, bounded=bounded)
        if usual is not None:
            return usual
        if not raw and plan_id != rules.list_id:
            problems.append(Problem("entries", "an items plan needs at least one step.", []))
        if len(raw) > limits.max_entries:
            problems.append(
                Problem(
                    "entries",
                    f"{len(raw)} steps; at most {limits.max_entries} are accepted. "
                    "Group small steps.",
                )
            )
        longest = max(map(len, map(CONTENT, raw))) if raw else 0
        lists = plan_id == rules.list_id  # written by a todo list's tools, which have no markdown
        if longest > limits.max_entry_chars:  # a C-speed check first: this runs per step
            for index, e in enumerate(raw):
                problem = check_step_text(
                    f"entries[{index}].content", e["content"], limits, markdown=not lists
                )
                if problem is not None:
                    problems.append(problem)
        metas = [(index, e["_meta"]) for index, e in enumerate(raw) if "_meta" in e]
        if metas:  # (entries without `_meta` cost the one pass above, as ever)
            problems += [
                Problem(f"entries[{index}]._meta", NOT_FINITE)
                for index, meta in metas
                if not finite(meta)
            ]
            if kept_by == "model":
                problems += kept.refused(metas)
            elif kept_by == "snapshot":
                problems += kept.problems(raw, limits, last_task)
        if problems:
            return None
        entries = [
            {
                "content": e["content"],
                "priority": e.get("priority") or "medium",
                "status": e.get("status") or "pending",
            }
            if "_meta" not in e
            else _entry(e)
            for e in raw
        ]
        return Stored("items", plan_id, tuple(entries), meta=meta)
    if kind == "markdown" and args.get("content") is not None:
        content: str = args["content"]
        if len(content) > limits.max_markdown_chars:
            problems.append(
                Problem(
                    "content",
                    f"{len(content)} characters; at most {limits.max_markdown_chars}. "
                    "Write a shorter plan.",
                )
            )
            return None
        return None if problems else Stored("markdown", plan_id, content=content, meta=meta)
    if kind == "file" and args.get("uri") is not None:
        try:
            uri = file_uri(args["uri"], rules.workspace, limits)
        except ValueError as exc:
            problems.append(Problem("uri", str(exc), args["uri"]))
            return None
        return None if problems else Stored("file", plan_id, uri=uri, meta=meta)
    return None


def usual_items(
    plan_id: str, raw: list[Json], rules: Rules, meta: Json | None, *, bounded: bool = False
) -> Stored | None:
    """The items plan validated entries make when `build` would keep them as they are: at
    least one, within the limits, each saying priority and status and nothing else (the
    usual call, whose entries are the wire's already); None for any other, which `build`
    decides. `bounded`: the entries' texts are known to be within the limits (the one-pass
    parse checks them), and are not measured again."""
    limits = rules.limits
    # At C speed, a pass each: this runs for every step of every call.
    if (
        not raw
        or len(raw) > limits.max_entries
        or (not bounded and max(map(len, map(CONTENT, raw))) > limits.max_entry_chars)
    ):
        return None
    # Every entry says priority and status (a missing one raises KeyError, a null is falsy,
    # and every value they may take is a non-empty word): then each has at least three keys,
    # and three keys each means none has `_meta`.
    try:
        statuses = tuple(map(STATUS, raw))
        if not all(statuses) or not all(map(PRIORITY, raw)):
            return None
    except KeyError:
        return None
    if sum(map(len, raw)) != 3 * len(raw):
        return None
    return Stored("items", plan_id, tuple(raw), meta=meta, known_statuses=statuses)


def _entry(e: Json) -> Json:
    # Validated arguments carry only the keys sent; ACP wants priority and status always.
    out: Json = {
        "content": e["content"],
        "priority": e.get("priority") or "medium",
        "status": e.get("status") or "pending",
    }
    if e.get("_meta") is not None:
        out["_meta"] = e["_meta"]
    return out
