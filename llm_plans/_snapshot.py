"""A session's plans as JSON-ready data, and back, checked as strictly as a model's calls."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._apply import Rejected, apply
from ._book import AnyPlan, Book
from ._builder import Rules
from ._errors import ConfigurationError
from ._models import Plan

_PLAN: TypeAdapter[AnyPlan] = TypeAdapter(Plan)
VERSION = 1


def dump(book: Book) -> dict[str, Any]:
    """The book as JSON-ready data."""
    return {
        "version": VERSION,
        "next_number": book.next_number,
        "plans": [
            _PLAN.dump_python(p.model, mode="json", by_alias=True, exclude_none=True)
            for p in book.plans.values()
        ],
    }


def load(snapshot: Mapping[str, Any], rules: Rules) -> Book:
    """The book a `dump` describes; ConfigurationError naming every problem otherwise.

    Each plan is re-created through the core as a `create_plan` call would be, so ids,
    limits and file locations (inside the workspace) hold for restored plans too.
    """
    if not isinstance(snapshot, Mapping) or snapshot.get("version") != VERSION:
        version = snapshot.get("version") if isinstance(snapshot, Mapping) else snapshot
        raise ConfigurationError(f"unsupported snapshot version {version!r}; expected {VERSION}")
    number = snapshot.get("next_number")
    plans = snapshot.get("plans")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise ConfigurationError(f"snapshot next_number must be a positive integer; got {number!r}")
    if not isinstance(plans, list):
        raise ConfigurationError("snapshot plans must be a list")
    book = Book()
    problems = []
    for index, raw in enumerate(plans):
        try:
            plan = _PLAN.validate_python(raw)
        except ValidationError as exc:
            problems.append(f"plans[{index}]: {exc.errors(include_url=False)[0]['msg']}")
            continue
        outcome = apply(book, "create_plan", _as_call(plan), rules)
        if isinstance(outcome, Rejected):
            problems.append(f"plans[{index}] ({plan.id!r}): {outcome.text}")
            continue
        book = outcome.book
        if plan.meta is not None:
            try:
                json.dumps(plan.meta, allow_nan=False)
            except (ValueError, TypeError, RecursionError) as exc:
                problems.append(f"plans[{index}] ({plan.id!r}): _meta is not strict JSON ({exc})")
                continue
            with_meta = dataclasses.replace(book.plans[plan.id], meta=plan.meta)
            book = Book({**book.plans, plan.id: with_meta}, book.next_number)
    if problems:
        raise ConfigurationError("invalid snapshot:\n" + "\n".join(problems))
    return Book(book.plans, max(number, book.next_number))


def _as_call(plan: AnyPlan) -> dict[str, Any]:
    # Python mode keeps a NaN a NaN, so the call's strict checks see it (JSON mode would
    # quietly turn it into null).
    call: dict[str, Any] = _PLAN.dump_python(plan, by_alias=True, exclude_none=True)
    call.pop("_meta", None)
    return call
