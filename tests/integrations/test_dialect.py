"""`llm_plans.integrations._dialect`: which dialect's tools an integration offers for a session."""

from __future__ import annotations

from typing import Any

import pytest
from registry import DIALECTS, NAMES, OURS

from llm_plans import ConfigurationError, PlanSession
from llm_plans.integrations._dialect import dialect_for, names_of
from llm_plans.testing import RecordingSend


def session(send: RecordingSend, *dialects: str) -> PlanSession:
    return PlanSession(send, session_id="s", dialects=list(dialects))


def names(dialect: str) -> tuple[str, ...]:
    return (
        ("create_plan", "update_plan", "remove_plan")
        if dialect == OURS
        else tuple(t.name for t in DIALECTS[dialect].tools)
    )


def test_the_default_is_ours_as_before(send: RecordingSend) -> None:
    assert dialect_for(PlanSession(send, session_id="s"), None) == (OURS, names(OURS))
    for other in DIALECTS:
        if other != "codex":  # its update_plan is ours's name: never both on one session
            assert dialect_for(session(send, OURS, other), None)[0] == OURS


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_session_of_one_dialect_defaults_to_it(send: RecordingSend, dialect: str) -> None:
    assert dialect_for(session(send, dialect), None) == (dialect, names(dialect))
    assert dialect_for(session(send, dialect), dialect) == (dialect, names(dialect))


def test_several_dialects_without_ours_must_be_chosen_from(send: RecordingSend) -> None:
    both = session(send, "claude_todos", "claude_tasks")
    with pytest.raises(ConfigurationError) as error:
        dialect_for(both, None)
    assert str(error.value) == (
        "the session takes the dialects claude_todos, claude_tasks: pass dialect= one of them "
        "to choose whose tools the model is given"
    )
    assert dialect_for(both, "claude_tasks")[0] == "claude_tasks"


def test_a_tool_of_the_same_name_is_not_the_same_dialect(send: RecordingSend) -> None:
    # Ours and Codex's both call their tool `update_plan`; the session holds one of them.
    with pytest.raises(ConfigurationError, match="does not take the dialect 'codex'"):
        dialect_for(PlanSession(send, session_id="s"), "codex")
    with pytest.raises(ConfigurationError, match="does not take the dialect 'llm_plans'"):
        dialect_for(session(send, "codex"), OURS)
    assert dialect_for(session(send, "codex"), None) == ("codex", ("update_plan",))


@pytest.mark.parametrize("dialect", ["", "Codex", "TodoWrite", ["codex"], 3, ("llm_plans",)])
def test_an_unknown_dialect_names_the_dialects(send: RecordingSend, dialect: Any) -> None:
    for call in (lambda: dialect_for(session(send, OURS), dialect), lambda: names_of(dialect)):
        with pytest.raises(ConfigurationError) as error:
            call()
        assert f"unknown dialect {dialect!r}; use one of {', '.join(NAMES)}" == str(error.value)


def test_a_dialect_the_session_does_not_take_says_how_to_take_it(send: RecordingSend) -> None:
    with pytest.raises(ConfigurationError) as error:
        dialect_for(session(send, "claude_todos"), "cursor")
    assert str(error.value) == (
        "the session does not take the dialect 'cursor' (its plan tools: TodoWrite): create it "
        "with PlanSession(..., dialects=[..., 'cursor']), or pass dialect= one of claude_todos"
    )


@pytest.mark.parametrize("dialect", NAMES)
def test_names_of_every_dialect(dialect: str) -> None:
    assert names_of(dialect) == names(dialect)
