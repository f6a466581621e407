"""The examples' ACP builders (examples/coding_agent_lib/acp_builders.py) send the same JSON on
whichever ACP Python SDK is installed: 0.12 here, 1.0 in the SDK versions pass
(tests/e2e/test_acp_sdk_versions.py), which runs this file too."""

from __future__ import annotations

from typing import Any

import pytest
from acp.schema import InitializeResponse, SessionNotification
from coding_agent_lib.acp_builders import (
    agent_info,
    diff,
    location,
    message_text,
    tool_call_started,
    tool_call_updated,
    tool_text,
)


def wire(update: Any) -> Any:
    """`update` as the SDK's connection sends it in `session/update`, read back by the SDK."""
    notification = SessionNotification(session_id="s", update=update)
    sent = notification.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert SessionNotification.model_validate(sent) == notification  # a client reads it back
    return sent["update"]


def test_a_message_chunk() -> None:
    assert wire(message_text("Done.")) == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Done."},
    }


def test_a_tool_call_with_everything_it_can_start_with() -> None:
    started = tool_call_started(
        "tool_1",
        "write_file a.py",
        kind="edit",
        status="pending",
        content=[tool_text("Writing."), diff("/p/a.py", "old\n", "new\n")],
        locations=[location("/p/a.py", 3)],
        raw_input={"path": "a.py"},
    )
    assert wire(started) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "tool_1",
        "title": "write_file a.py",
        "kind": "edit",
        "status": "pending",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "Writing."}},
            {"type": "diff", "path": "/p/a.py", "oldText": "old\n", "newText": "new\n"},
        ],
        "locations": [{"path": "/p/a.py", "line": 3}],
        "rawInput": {"path": "a.py"},
    }


def test_a_tool_call_with_only_a_title() -> None:
    started = tool_call_started("tool_1", "list_files .")
    assert wire(started) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "tool_1",
        "title": "list_files .",
    }


def test_an_update_sends_only_what_changes() -> None:
    assert wire(tool_call_updated("tool_1", status="in_progress")) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "tool_1",
        "status": "in_progress",
    }
    done = tool_call_updated(
        "tool_1",
        status="completed",
        title="read_file a.py",
        content=[tool_text("x = 1\n")],
        locations=[location("/p/a.py")],
        raw_output={"lines": 1},
    )
    assert wire(done) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "tool_1",
        "status": "completed",
        "title": "read_file a.py",
        "content": [{"type": "content", "content": {"type": "text", "text": "x = 1\n"}}],
        "locations": [{"path": "/p/a.py"}],
        "rawOutput": {"lines": 1},
    }


def test_an_update_can_clear_the_shown_content() -> None:
    cleared = wire(tool_call_updated("tool_1", content=[], locations=[]))
    assert (cleared["content"], cleared["locations"]) == ([], [])


def test_a_diff_of_a_new_file_has_no_old_text() -> None:
    update = tool_call_updated("tool_1", content=[diff("/p/new.py", None, "x = 1\n")])
    assert wire(update)["content"] == [{"type": "diff", "path": "/p/new.py", "newText": "x = 1\n"}]


@pytest.mark.parametrize("title", [None, "LLM Plans"])
def test_the_agent_info_of_initialize(title: str | None) -> None:
    info = agent_info("llm-plans", "1.0", title=title)
    response = InitializeResponse(protocol_version=1, agent_info=info)
    sent = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert sent["agentInfo"] == {"name": "llm-plans", "version": "1.0"} | (
        {} if title is None else {"title": title}
    )
    assert InitializeResponse.model_validate(sent) == response
