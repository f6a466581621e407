"""The legacy list: bounded per plan, cached per plan, and never past the workspace."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from llm_plans import Limits, PlanSession
from llm_plans._core.plans import Stored
from llm_plans._wire.flatten import Flattener, read_plan_file
from llm_plans.testing import RecordingSend


async def test_markdown_plans_contribute_a_bounded_list() -> None:
    send = RecordingSend()
    limits = Limits(max_entries=50, max_entry_chars=40)
    session = PlanSession(send, session_id="s", limits=limits)
    content = "".join(f"- [ ] step {n} " + "x" * 60 + "\n" for n in range(500))
    for _ in range(3):
        assert (await session.call("create_plan", {"type": "markdown", "content": content})).ok
    entries = send.updates[-1]["entries"]
    assert len(entries) == 3 * 50
    assert all(len(e["content"]) <= 40 for e in entries)
    assert entries[49]["content"] == "... 451 more steps in plan plan-1"


def test_unchanged_plans_are_not_flattened_or_read_again(tmp_path: Path) -> None:
    reads: list[str] = []

    def counting(uri: str) -> str | None:
        reads.append(uri)
        return read_plan_file(uri)

    plan_file = tmp_path / "plan.md"
    plan_file.write_text("- [ ] one\n- [x] two\n")
    flattener = Flattener(Limits(), tmp_path, counting)
    plan = Stored("file", "f", uri=plan_file.as_uri())
    first = flattener.entries([plan])
    assert flattener.entries([plan]) == first
    assert len(reads) == 1
    plan_file.write_text("- [ ] one\n- [x] two\n- [ ] three\n")
    assert len(flattener.entries([plan])) == 3  # changed: read again
    assert len(reads) == 2


async def test_a_file_swapped_for_a_symlink_out_of_the_workspace_is_not_read(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "secret.md"
    workspace.mkdir()
    outside.write_text("- [ ] the secret\n")
    plan_file = workspace / "plan.md"
    plan_file.write_text("- [ ] fine\n")
    send = RecordingSend()
    session = PlanSession(send, session_id="s", workspace=workspace)
    assert (await session.call("create_plan", {"type": "file", "uri": str(plan_file)})).ok
    assert send.updates[-1]["entries"][0]["content"] == "fine"
    plan_file.unlink()
    os.symlink(outside, plan_file)
    await session.call("create_plan", {"type": "items", "entries": ["next"]})
    contents = [e["content"] for e in send.updates[-1]["entries"]]
    assert "the secret" not in contents
    assert contents == [f"Plan file: {plan_file}", "[plan-2] next"]


async def test_labels_name_plans_briefly_and_read_headings_only() -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s")
    assert (await session.call("create_plan", {"type": "items", "entries": ["first"]})).ok
    fenced = "```\n#include <x>\n```\n# Real heading\n- [ ] a"
    assert (await session.call("create_plan", {"type": "markdown", "content": fenced})).ok
    long = "# " + "H" * 300 + "\n- [ ] b"
    assert (await session.call("create_plan", {"type": "markdown", "content": long})).ok
    same = {"type": "items", "id": "Run tests", "entries": ["Run tests"]}
    assert (await session.call("create_plan", same)).ok
    contents = [e["content"] for e in send.updates[-1]["entries"]]
    assert contents[1] == "[Real heading] a"
    assert contents[2] == "[" + "H" * 37 + "...] b"
    assert contents[3] == "[Run tests] Run tests"  # a step that is its plan's id says so


@pytest.mark.parametrize("reader", ["raises", "huge"])
async def test_a_custom_reader_that_fails_or_floods_leaves_the_file_unread(reader: str) -> None:
    def read(uri: str) -> str:
        if reader == "raises":
            raise OSError("the client went away")
        return "- [ ] x\n" * 200_000  # 1.6 MB

    for form in ("legacy", "schema"):
        send = RecordingSend()
        session = PlanSession(send, session_id="s", form=form, read_text=read)
        plan = {"type": "file", "id": "f", "uri": "file:///w/plan.md"}
        assert (await session.call("create_plan", plan)).ok
        assert (await session.call("create_plan", {"type": "items", "entries": ["y"]})).ok
        text = json.dumps(send.updates)
        assert "Plan file: /w/plan.md" in text
        assert len(text) < 10_000
