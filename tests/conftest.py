from __future__ import annotations

import sys
from pathlib import Path

import pytest

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

sys.path.insert(0, str(Path(__file__).parent))

CAPABILITIES = {
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
