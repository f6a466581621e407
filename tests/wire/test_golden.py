"""Every JSON example of the spec is produced exactly, by the tool calls that should produce it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spec_examples import spec_dir, spec_examples
from spec_shapes import check, check_sdk_round_trip

from llm_plans import PlanSession
from llm_plans.testing import RecordingSend

GOLDEN = Path(__file__).parents[1] / "golden"
CAPS: dict[str, dict[str, Any]] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": {},
}
# How a session comes to each form: v1's from the client's capabilities, v2 from the version
# it negotiated.
SESSION_ARGS: dict[str, dict[str, Any]] = {
    **{form: {"client_capabilities": caps} for form, caps in CAPS.items()},
    "v2": {"protocol_version": 2},
}
V1_SDK_FORMS = ("legacy", "schema")  # the forms the official Python SDK's models know

# The plan files of the golden scenarios, read through `read_text=` (as a client's file system
# would serve them) so that the golden files do not depend on this machine's /tmp. Local
# reading under the workspace rules is tested in tests/test_wire_files.py.
DESIGN_URI = "file:///work%20space/docs/pl%C3%A4n.md"
DESIGN_V1 = "# Design\n\n- [x] Read the parser\n- [ ] Fix the off-by-one\n"
DESIGN_V2 = DESIGN_V1.replace("- [ ] Fix", "- [x] Fix") + "- [ ] Add a regression test\n"

ANALYZE = {"content": "Analyze the existing codebase structure", "priority": "high"}
IDENTIFY = {"content": "Identify components that need refactoring", "priority": "high"}
TESTS = {"content": "Create unit tests for critical functions", "priority": "medium"}
CIRCULAR = {"content": "Fix circular dependency in auth module", "priority": "high"}
STEPS_MD = "## Steps\n- [ ] Refactor module\n- [ ] Add tests"

CREATE_THREE = ("create_plan", {"type": "items", "entries": [ANALYZE, IDENTIFY, TESTS]})
PROGRESS = (
    "update_plan",
    {
        "id": "plan-1",
        "changes": [{"step": 1, "status": "completed"}, {"step": 2, "status": "in_progress"}],
    },
)

# What the session keeps under `_meta["llm_plans"]` (Claude's `activeForm`) no model's call
# may set: it comes from a snapshot, restored and then shown with `replay()`.
RESTORED_CANCELLED = (
    "restore",
    {
        "version": 1,
        "next_number": 2,
        "plans": [
            {
                "type": "items",
                "id": "plan-1",
                "entries": [
                    {**ANALYZE, "status": "completed"},
                    {
                        **IDENTIFY,
                        "status": "in_progress",
                        "_meta": {
                            "llm_plans": {"activeForm": "Identifying components to refactor"}
                        },
                    },
                    {**CIRCULAR, "status": "cancelled"},
                    TESTS,
                ],
            }
        ],
    },
)

# golden file (relative to tests/golden) -> the tool calls whose last notification it is
SCENARIOS: dict[str, list[tuple[str, Any]]] = {
    "legacy/create.json": [CREATE_THREE],
    "legacy/update.json": [CREATE_THREE, PROGRESS],
    "legacy/add_task.json": [
        CREATE_THREE,
        PROGRESS,
        (
            "update_plan",
            {
                "id": "plan-1",
                "entries": [
                    {**ANALYZE, "status": "completed"},
                    {**IDENTIFY, "status": "completed"},
                    {**CIRCULAR, "status": "in_progress"},
                    TESTS,
                ],
            },
        ),
    ],
    # Every plan's steps but the first plan's say which plan they are of: a markdown plan's
    # first heading, else its id (after `Cancelled: ` in a cancelled step).
    "legacy/three_plans.json": [
        CREATE_THREE,
        (
            "create_plan",
            {
                "type": "markdown",
                "id": "notes",
                "content": "# Design note\n- [x] The divisor is off by one\n- [ ] Check mean",
            },
        ),
        (
            "create_plan",
            {
                "type": "items",
                "id": "cleanup",
                "entries": [{"content": "Try the old parser", "status": "cancelled"}, "Tidy up"],
            },
        ),
    ],
    "legacy/step_1.json": [
        ("create_plan", '{"type": "items", "entries": [{"content": "Step 1", "priority": "high"}]}')
    ],
    "items_plan_1.json": [("create_plan", {"type": "items", "id": None, "entries": [ANALYZE]})],
    "items_step_1.json": [
        (
            "create_plan",
            {
                "type": "items",
                "id": "plan-1",
                "entries": [{"content": "Step 1", "priority": "high", "status": "pending"}],
            },
        )
    ],
    "markdown_implementation_plan.json": [
        ("create_plan", {"type": "markdown", "id": "implementation-plan", "content": STEPS_MD})
    ],
    "markdown_plan_1.json": [("create_plan", {"type": "markdown", "content": STEPS_MD})],
    "file_design_doc.json": [
        ("create_plan", {"type": "file", "id": "design-doc", "uri": "/tmp/plan.md"})
    ],
    "removed_plan_1.json": [
        ("create_plan", {"type": "markdown", "content": STEPS_MD}),
        ("remove_plan", '{"id": "plan-1"}'),
    ],
    # A cancelled step, and a step in progress with Claude's wording of it (`activeForm`).
    "items_cancelled.json": [RESTORED_CANCELLED],
    "legacy/cancelled.json": [RESTORED_CANCELLED],
    # The stable forms send a file plan as a markdown plan of its file's text, with its path:
    # a file that cannot be read shows the line that names it.
    "file_missing.json": [
        ("create_plan", {"type": "file", "id": "design-doc", "uri": "/nonexistent/plan.md"})
    ],
    "file_readable.json": [("create_plan", {"type": "file", "id": "design", "uri": DESIGN_URI})],
    # The file changed on disk between two calls: the next accepted call (another plan's)
    # re-sends it, after that call's own update.
    "file_edited.json": [
        ("create_plan", {"type": "file", "id": "design", "uri": DESIGN_URI}),
        ("edit", DESIGN_V2),
        ("create_plan", {"type": "items", "id": "tasks", "entries": [TESTS]}),
    ],
    # One id, another type: one plan_update replaces the plan (no removal in between).
    "type_change.json": [
        CREATE_THREE,
        ("update_plan", {"id": "plan-1", "type": "markdown", "content": STEPS_MD}),
    ],
}
# The scenarios whose last call sends two notifications: the call's own, then the file plan
# it re-read.
EXTRA_SENDS = {"file_edited.json": 1}


def golden_files() -> list[str]:
    return sorted(str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*.json"))


def scenario_for(name: str) -> tuple[str, list[tuple[str, Any]]]:
    form, _, base = name.partition("/")
    return form, SCENARIOS[name if form == "legacy" else base]


def load(name: str) -> dict[str, Any]:
    golden: dict[str, Any] = json.loads((GOLDEN / name).read_text())
    return golden


def test_every_golden_file_has_a_scenario() -> None:
    for name in golden_files():
        form, base = name.split("/")
        assert (name if form == "legacy" else base) in SCENARIOS, f"unregistered: {name}"


def test_every_spec_example_is_a_golden_file() -> None:
    """Cross-check against the spec documents, where they are (see spec_examples)."""
    goldens = [load(n)["update"] for n in golden_files()]
    examples = spec_examples(spec_dir())
    assert len(examples) >= 14  # the five spec files hold 14 examples (10 distinct)
    for source, example in examples:
        assert example in goldens, f"{source}: no golden file for {example}"


async def run_scenario(
    form: str, calls: list[tuple[str, Any]], session_args: dict[str, Any] | None = None
) -> RecordingSend:
    """The notifications of `calls` on a session of `form` (or made with `session_args`); an
    `("edit", text)` step rewrites the scenarios' plan file in between."""
    files = {DESIGN_URI: DESIGN_V1}
    send = RecordingSend()
    args = SESSION_ARGS[form] if session_args is None else session_args
    session = PlanSession(send, session_id="sess_abc123def456", read_text=files.get, **args)
    for tool, arguments in calls:
        if tool == "edit":
            files[DESIGN_URI] = arguments
            continue
        if tool == "restore":  # a snapshot's plans, then shown as one notification each
            assert session.restore(arguments) == []
            await session.replay()
            continue
        result = await session.call(tool, arguments)
        assert result.ok, result.content
    return send


@pytest.mark.parametrize("name", golden_files())
async def test_output_equals_golden(name: str) -> None:
    form, calls = scenario_for(name)
    send = await run_scenario(form, calls)
    steps = [call for call in calls if call[0] != "edit"]
    extra = EXTRA_SENDS.get(name.split("/")[-1], 0)
    assert len(send.sent) == len(steps) + extra  # one notification per successful call
    expected = (GOLDEN / name).read_text()
    assert json.dumps(send.sent[-1], indent=2) + "\n" == expected  # key order too


@pytest.mark.parametrize("name", [n.split("/")[1] for n in golden_files() if n.startswith("v2/")])
async def test_v2_unstable_sends_what_v2_sends(name: str) -> None:
    """The deprecated "v2-unstable" form is v2, warning once when the session is made."""
    with pytest.warns(DeprecationWarning, match='"v2"') as warned:
        unstable = await run_scenario("v2", SCENARIOS[name], {"form": "v2-unstable"})
    assert len(warned) == 1
    assert unstable.sent == (await run_scenario("v2", SCENARIOS[name])).sent


@pytest.mark.parametrize("name", golden_files())
def test_golden_is_compliant_for_its_form(name: str) -> None:
    """Each golden file passes its form's schema (v2's: the TS SDK's, plan by plan)."""
    check(name.split("/")[0], load(name))


@pytest.mark.parametrize("name", [n for n in golden_files() if n.split("/")[0] in V1_SDK_FORMS])
def test_golden_round_trips_through_the_acp_sdk(name: str) -> None:
    """The stable v1 and legacy forms are what the official SDK parses and writes (but for a
    markdown plan's `path`, which its models drop)."""
    check_sdk_round_trip(load(name))


def test_the_stable_forms_send_no_file_plan() -> None:
    """Stable ACP has no `file` type and no `uri`: only the spec documents' draft sends them."""
    for name in golden_files():
        plan = load(name)["update"].get("plan", {})
        if name.startswith(("schema/", "v2/")):
            assert plan.get("type") != "file", name
            assert "uri" not in plan, name


def test_ci_runs_the_spec_cross_check() -> None:
    """CI names the spec folder, so a missing folder fails there instead of skipping."""
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert 'export LLM_PLANS_SPEC_DIR="${LLM_PLANS_SPEC_DIR:-$PWD/../shared/spec}"' in ci
