"""What of a half-written call is final: keys once the next starts, entries but the last,
markdown up to its last complete line."""

from __future__ import annotations

from typing import Any

import pytest

from llm_plans._inflight import final_arguments, partial


@pytest.mark.parametrize(
    ("tool", "text", "expected"),
    [
        ("create_plan", '{"type": "ite', None),
        ("create_plan", '{"type": "items", "id": nu', None),
        (
            "create_plan",
            '{"type": "items", "entries": [{"content": "a"}, {"cont',
            {"type": "items", "entries": [{"content": "a"}]},
        ),
        ("create_plan", '{"type": "items", "entries": [{"content": "a"}', None),
        (
            "create_plan",
            '{"type": "markdown", "content": "# T\\n- one\\n- tw',
            {"type": "markdown", "content": "# T\n- one"},
        ),
        ("create_plan", '{"type": "file", "uri": "/tmp/pl', None),
        ("create_plan", '{"id": "x", "entries": [{"content": "a"}, {', None),
        (
            "update_plan",
            '{"id": "p", "entries": [{"content": "a"}, {"c',
            {"id": "p", "entries": [{"content": "a"}]},
        ),
        ("update_plan", '{"id": "p", "changes": [{"step": 1}, {"st', None),
        ("remove_plan", '{"id": "p"', None),
    ],
)
def test_final_arguments(tool: str, text: str, expected: dict[str, Any] | None) -> None:
    assert final_arguments(tool, partial(text)) == expected


def test_partial_of_malformed_json_is_none() -> None:
    assert partial('{"a": x') is None
