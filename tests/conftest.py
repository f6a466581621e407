from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

# The helpers the tests share (tests/support/) import by their plain names.
sys.path.insert(0, str(Path(__file__).parent / "support"))

E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e/ (the example agent, the demo, the CLI, interop with real
    clients, packaging, the docs, recorded traffic) is marked `e2e`: `-m "not e2e"` runs the
    unit tests alone."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)


# Hypothesis profiles, picked by HYPOTHESIS_PROFILE: "dev" (the default) keeps a local
# `python -m pytest` quick; "ci" (set by .ci/run) runs the full counts. Tests that set their own
# max_examples (tests/test_properties.py) keep them under both; deadline and health checks come
# from here. No deadline: a call's first run warms pydantic and jiter and times vary on CI.
_PROFILE: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("dev", max_examples=50, stateful_step_count=25, **_PROFILE)
settings.register_profile("ci", max_examples=500, stateful_step_count=25, **_PROFILE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

CAPABILITIES: dict[str, dict[str, Any] | None] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": None,
}


@pytest.fixture
def send() -> RecordingSend:
    return RecordingSend()


@pytest.fixture(params=sorted(CAPABILITIES))
def form(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def session(send: RecordingSend, form: str) -> PlanSession:
    return PlanSession(send, session_id="sess_1", client_capabilities=CAPABILITIES[form])


# The example agent's parts, for tests that drive its model backends in-process.
sys.path.insert(0, str(Path(__file__).parents[1] / "examples"))
