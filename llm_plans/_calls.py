"""Compatibility shim while `_session` moves to `llm_plans.providers.parse`; delete after."""

from __future__ import annotations

from typing import Any

from .providers import ProviderCall, parse

parse_call = parse


def native_result(call: ProviderCall, content: str, ok: bool) -> dict[str, Any]:
    """The tool result for `call` in its provider's native shape."""
    return call.result(content, ok)
