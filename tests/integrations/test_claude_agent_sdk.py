"""`llm_plans.integrations.claude_agent_sdk`: the plan tools as an in-process MCP server.

The server is driven through the `mcp` package's own client, connected in-process: the same
`tools/list` and `tools/call` requests Claude Code sends through the SDK's bridge, with the
`_meta` Claude Code adds.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest
import todo_write
from anthropic_server import ScriptedAPI, Step, serving
from claude_agent_sdk import ResultMessage, StreamEvent, ToolResultBlock, UserMessage
from client_view import ClientView, expected
from integration_pipe import run_example
from mcp import Client
from mcp.types import CallToolResult, RequestParamsMeta
from plan_kinds import items_plan
from wire_payloads import chunks

from llm_plans import ConfigurationError, PlanSession, tools
from llm_plans.integrations.claude_agent_sdk import (
    BUILTIN_PLAN_TOOLS,
    PLAN_TOOL_NAMES,
    PlanPreviews,
    plan_server,
    plan_tool_names,
)
from llm_plans.testing import RecordingSend

CREATE = {
    "type": "items",
    "entries": [
        {"content": "Reproduce", "status": "in_progress"},
        {"content": "Fix", "priority": "high"},
        {"content": "Test"},
    ],
}
UPDATE = {"id": "plan-1", "changes": [{"step": 1, "status": "completed"}]}


@pytest.fixture
def session(send: RecordingSend) -> PlanSession:
    return PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)


def connect(session: PlanSession) -> Client:
    """An MCP client of the session's plan server (entered in the test's own task, as anyio
    requires)."""
    return Client(plan_server(session)["instance"])


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert block.type == "text"
    return str(block.text)


async def call(client: Client, name: str, args: dict[str, Any], use_id: str) -> CallToolResult:
    # RequestParamsMeta is an open map (extra_items=Any), which mypy does not read yet.
    meta = cast("RequestParamsMeta", {"claudecode/toolUseId": use_id})
    return await client.call_tool(name, args, meta=meta)


def event(payload: dict[str, Any]) -> StreamEvent:
    return StreamEvent(uuid="u", session_id="cc", event=payload)


def tool_use_stream(index: int, use_id: str, name: str, arguments: str) -> list[StreamEvent]:
    block = {"type": "tool_use", "id": use_id, "name": name, "input": {}}
    events = [event({"type": "content_block_start", "index": index, "content_block": block})]
    events += [
        event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": part},
            }
        )
        for part in chunks(arguments, 7)
    ]
    return [*events, event({"type": "content_block_stop", "index": index})]


def test_the_names_the_model_sees() -> None:
    assert PLAN_TOOL_NAMES == (
        "mcp__plans__create_plan",
        "mcp__plans__update_plan",
        "mcp__plans__remove_plan",
    )
    assert plan_tool_names("work")[0] == "mcp__work__create_plan"
    assert "TodoWrite" in BUILTIN_PLAN_TOOLS


async def test_tools_are_listed_with_llm_plans_schemas_and_always_loaded(
    session: PlanSession,
) -> None:
    async with connect(session) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == list(tools.NAMES)
        for tool in listed:
            assert tool.input_schema == tools.schema(tool.name)
            assert tool.description == tools.description(tool.name)
            assert tool.meta == {"anthropic/alwaysLoad": True}


async def test_create_update_remove(session: PlanSession, send: RecordingSend) -> None:
    async with connect(session) as client:
        created = await call(client, "create_plan", CREATE, "toolu_1")
        updated = await call(client, "update_plan", UPDATE, "toolu_2")
        removed = await call(client, "remove_plan", {"id": "plan-1"}, "toolu_3")
        assert [r.is_error for r in (created, updated, removed)] == [False] * 3
        assert text(created).startswith('Created plan "plan-1"')
        assert [u["sessionUpdate"] for u in send.updates] == ["plan_update"] * 2 + ["plan_removed"]
        assert send.updates[1]["plan"]["entries"][0]["status"] == "completed"
        assert session.plans == {}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"id": "nope", "changes": [{"step": 1, "status": "completed"}]}, '"nope"'),
        ({"id": "plan-1", "changes": [{"step": 1, "status": "blocked"}]}, '"blocked"'),
        ({"id": "plan-1", "changes": '[{"step": 1, "sta'}, "changes"),
        ({"id": "plan-1", "changes": [{"step": "first"}]}, '"first"'),
    ],
)
async def test_invalid_calls_are_error_results(
    session: PlanSession,
    send: RecordingSend,
    arguments: dict[str, Any],
    named: str,
) -> None:
    async with connect(session) as client:
        await call(client, "create_plan", CREATE, "toolu_1")
        result = await call(client, "update_plan", arguments, "toolu_2")
        assert result.is_error is True
        assert text(result) == (await session.call("update_plan", arguments)).content
        assert named in text(result)
        assert len(send.updates) == 1  # nothing sent for the invalid call
        again = await call(client, "update_plan", UPDATE, "toolu_3")  # the model can go on
        assert again.is_error is False


async def test_repairs_apply(session: PlanSession) -> None:
    async with connect(session) as client:
        entries_as_text = {**CREATE, "entries": json.dumps(CREATE["entries"])}
        result = await call(client, "create_plan", entries_as_text, "toolu_1")
        assert result.is_error is False
        assert len(items_plan(session.plans["plan-1"]).entries) == 3


async def test_live_previews_apply_each_call_once(
    session: PlanSession, send: RecordingSend
) -> None:
    async with connect(session) as client:
        previews = PlanPreviews(session)
        await previews.on_message(event({"type": "message_start", "message": {}}))
        for message in tool_use_stream(1, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
            await previews.on_message(message)
        assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]
        assert session.is_streaming("toolu_1")
        result = await call(client, "create_plan", CREATE, "toolu_1")
        assert result.is_error is False
        assert list(session.plans) == ["plan-1"]  # one plan: finished, not applied again
        assert not session.is_streaming("toolu_1")


async def test_a_call_run_before_the_consumer_saw_it_is_not_previewed_later(
    session: PlanSession, send: RecordingSend
) -> None:
    async with connect(session) as client:
        previews = PlanPreviews(session)
        await call(client, "create_plan", CREATE, "toolu_1")  # the consumer lags behind
        for message in tool_use_stream(0, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
            await previews.on_message(message)
        assert list(session.plans) == ["plan-1"]
        assert not session.is_streaming("toolu_1")
        assert len(send.updates) == 1


async def test_a_streamed_call_the_tool_never_ran_is_rolled_back_on_the_next_message(
    session: PlanSession, send: RecordingSend
) -> None:
    previews = PlanPreviews(session)
    for message in tool_use_stream(0, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
        await previews.on_message(message)
    await previews.on_message(event({"type": "message_start", "message": {}}))
    assert not session.is_streaming("toolu_1")
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}


async def test_handle_understands_the_prefixed_names(session: PlanSession) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "mcp__plans__create_plan", "input": CREATE}
    result = await session.handle(use)
    assert result is not None
    assert result["is_error"] is False


def test_another_server_key_needs_its_prefix(send: RecordingSend) -> None:
    with pytest.raises(ConfigurationError, match="mcp__work__"):
        plan_server(PlanSession(send, session_id="s"), key="work")
    session = PlanSession(send, session_id="s", tool_prefixes=("", "mcp__work__"))
    assert plan_server(session, key="work")["name"] == "work"


def claude_code_env(base_url: str, home: Path) -> dict[str, str]:
    """Claude Code against the local API stand-in, with nothing else to reach."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


BAD_UPDATE = {"id": "nope", "changes": [{"step": 1, "status": "completed"}]}
SCRIPT: list[Step] = [
    [("toolu_1", "mcp__plans__create_plan", json.dumps(CREATE))],
    [("toolu_2", "mcp__plans__update_plan", json.dumps(BAD_UPDATE))],
    [("toolu_3", "mcp__plans__update_plan", json.dumps(UPDATE))],
    [("toolu_4", "mcp__plans__remove_plan", json.dumps({"id": "plan-1"}))],
    "Fixed.",
]


@pytest.mark.parametrize("caps", [{"plan": {}}, {}])
async def test_example_with_claude_code_over_an_acp_pipe(
    caps: dict[str, Any], tmp_path: Path
) -> None:
    api = ScriptedAPI("mcp__plans__create_plan", SCRIPT)
    with serving(api) as base_url:
        client, stop = await run_example(
            "claude_agent_sdk_agent", caps, env=claude_code_env(base_url, tmp_path)
        )
    assert stop == "end_turn"
    assert client.updates[-1] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Fixed."},
    }
    plan = [u for u in client.updates if u["sessionUpdate"].startswith("plan")]
    if caps:
        assert len(plan[0]["plan"]["entries"]) == 1  # a live preview from partial messages
        assert plan[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
        assert type(client.typed[-2]).__name__ == "AgentPlanRemovedUpdate"
        last_items = [u for u in plan if u["sessionUpdate"] == "plan_update"][-1]
        assert last_items["plan"]["entries"][0]["status"] == "completed"
    else:
        assert plan[-1] == {"sessionUpdate": "plan", "entries": []}
    # What Claude Code sent the model: the invalid call's result is the rejection, an error.
    results = api.tool_results()
    assert [r.get("is_error", False) for r in results] == [False, True, False, False]
    rejection = results[1]["content"]
    rejection = rejection if isinstance(rejection, str) else rejection[0]["text"]
    same_state = PlanSession(RecordingSend(), session_id="x")
    await same_state.call("create_plan", CREATE)
    assert rejection == (await same_state.call("update_plan", BAD_UPDATE)).content
    # The plan tools are offered up front (not deferred), Claude Code's own are not offered.
    offered = {t["name"]: t for t in api.requests[0]["tools"]}
    for name in PLAN_TOOL_NAMES:
        assert not offered[name].get("defer_loading")
    assert not set(BUILTIN_PLAN_TOOLS) & set(offered)


async def test_a_tool_waits_for_a_consumer_that_is_behind(
    session: PlanSession, send: RecordingSend
) -> None:
    async with connect(session) as client:
        previews = PlanPreviews(session)
        await previews.on_message(event({"type": "message_start", "message": {}}))
        # Claude Code runs the tool while the consumer has not reached the call's events yet.
        running = asyncio.create_task(call(client, "create_plan", CREATE, "toolu_1"))
        await asyncio.sleep(0.05)
        for message in tool_use_stream(0, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
            await previews.on_message(message)
        assert (await running).is_error is False
        assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]  # previewed
        assert list(session.plans) == ["plan-1"]  # and applied once


def in_query(session_id: str, messages: list[StreamEvent]) -> list[StreamEvent]:
    return [StreamEvent(uuid=m.uuid, session_id=session_id, event=m.event) for m in messages]


def entries(session: PlanSession) -> dict[str, list[str]]:
    return {i: [e.content for e in p.entries] for i, p in session.plans.items()}  # type: ignore[union-attr]


EDITED = {"type": "items", "entries": [{"content": "Reproduce"}, {"content": "Ask first"}]}


async def test_concurrent_queries_on_one_session_keep_their_streams_apart(
    session: PlanSession, send: RecordingSend
) -> None:
    # Two queries stream a plan call each, at the same content block index, interleaved.
    a = {"id": "a", **EDITED}
    b = {"id": "b", **CREATE}
    previews = PlanPreviews(session)
    streams = [
        in_query("q1", tool_use_stream(0, "toolu_a", "mcp__plans__create_plan", json.dumps(a))),
        in_query("q2", tool_use_stream(0, "toolu_b", "mcp__plans__create_plan", json.dumps(b))),
    ]
    for query in ("q1", "q2"):
        start = StreamEvent(uuid="s", session_id=query, event={"type": "message_start"})
        await previews.on_message(start)
    for pair in zip(*streams, strict=False):
        for message in pair:
            await previews.on_message(message)
    for message in streams[1][len(streams[0]) :]:
        await previews.on_message(message)
    async with connect(session) as client:
        results = [
            await call(client, "create_plan", a, "toolu_a"),
            await call(client, "create_plan", b, "toolu_b"),
        ]
    assert [r.is_error for r in results] == [False, False]
    assert entries(session) == {"a": ["Reproduce", "Ask first"], "b": ["Reproduce", "Fix", "Test"]}
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


async def test_a_pre_tool_use_hooks_updated_input_is_what_applies(
    session: PlanSession, send: RecordingSend
) -> None:
    # The model streams CREATE; a PreToolUse hook answers with updatedInput EDITED, and Claude
    # Code calls the tool with that: EDITED applies, and CREATE's previews are replaced.
    previews = PlanPreviews(session)
    await previews.on_message(event({"type": "message_start", "message": {}}))
    for message in tool_use_stream(0, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
        await previews.on_message(message)
    assert len(send.updates[-1]["plan"]["entries"]) == 3  # the streamed plan was previewed
    async with connect(session) as client:
        result = await call(client, "create_plan", EDITED, "toolu_1")
    plain = PlanSession(RecordingSend(), session_id="p")
    assert text(result) == (await plain.call("create_plan", EDITED)).content
    assert entries(session) == {"plan-1": ["Reproduce", "Ask first"]}
    assert ClientView(session.form).apply_all(send.updates).shown() == expected(session.plans)


async def test_a_denied_call_and_an_interrupted_query_take_their_previews_back(
    session: PlanSession, send: RecordingSend
) -> None:
    previews = PlanPreviews(session)
    await previews.on_message(event({"type": "message_start", "message": {}}))
    for message in tool_use_stream(0, "toolu_1", "mcp__plans__create_plan", json.dumps(CREATE)):
        await previews.on_message(message)
    assert send.updates
    # Permission denied: Claude Code answers the tool use itself, no tool runs.
    denied = ToolResultBlock(tool_use_id="toolu_1", content="denied", is_error=True)
    await previews.on_message(UserMessage(content=[denied]))
    assert send.updates[-1] == {"sessionUpdate": "plan_removed", "planId": "plan-1"}
    # Interrupted mid-stream: the query's result ends it.
    await previews.on_message(event({"type": "message_start", "message": {}}))
    stream = iter(tool_use_stream(0, "toolu_2", "mcp__plans__create_plan", json.dumps(CREATE)))
    sent = len(send.updates)
    while len(send.updates) == sent:  # up to the first step's preview
        await previews.on_message(next(stream))
    assert send.updates[-1]["sessionUpdate"] == "plan_update"
    interrupted = ResultMessage(
        subtype="error_during_execution",
        duration_ms=1,
        duration_api_ms=1,
        is_error=True,
        num_turns=1,
        session_id="cc",
    )
    await previews.on_message(interrupted)
    assert send.updates[-1]["sessionUpdate"] == "plan_removed"
    assert session.plans == {}
    assert ClientView(session.form).apply_all(send.updates).shown() == {}
    assert await session.abort_all() == []


# ---- another dialect's tools: dialect= ------------------------------------------------------


def test_the_names_the_model_sees_for_a_dialect() -> None:
    assert plan_tool_names(dialect="claude_todos") == ["mcp__plans__TodoWrite"]
    assert plan_tool_names("work", dialect="codex") == ["mcp__work__update_plan"]
    assert plan_tool_names() == list(PLAN_TOOL_NAMES)  # ours by default
    with pytest.raises(ConfigurationError, match="unknown dialect"):
        plan_tool_names(dialect="todos")


async def test_a_dialect_server_lists_its_tools_and_runs_them_through_the_session(
    send: RecordingSend,
) -> None:
    session = todo_write.todo_session(send)
    assert plan_server(session)["name"] == "plans"  # the session's one dialect by default
    server = plan_server(session, dialect="claude_todos")
    async with Client(server["instance"]) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == ["TodoWrite"]
        assert listed[0].input_schema == tools.schema("TodoWrite", dialect="claude_todos")
        assert listed[0].description == tools.description("TodoWrite", dialect="claude_todos")
        assert listed[0].meta == {"anthropic/alwaysLoad": True}

        previews = PlanPreviews(session)
        await previews.on_message(event({"type": "message_start", "message": {}}))
        streamed = todo_write.todo_write(0)
        for message in tool_use_stream(1, "toolu_1", "mcp__plans__TodoWrite", streamed):
            await previews.on_message(message)
        assert [len(u["plan"]["entries"]) for u in send.updates][:2] == [1, 2]
        assert session.is_streaming("toolu_1")
        first = await call(client, "TodoWrite", json.loads(streamed), "toolu_1")
        assert first.is_error is False
        assert not session.is_streaming("toolu_1")  # finished, not applied again

        bad = json.loads(todo_write.BAD)
        rejected = await call(client, "TodoWrite", bad, "toolu_2")
        assert rejected.is_error is True
        assert text(rejected) == (await session.call("TodoWrite", bad)).content
        assert "todos[0].status" in text(rejected)  # the dialect's own field path

        done = await call(client, "TodoWrite", json.loads(todo_write.todo_write(1)), "toolu_3")
        assert done.is_error is False
    assert list(session.plans) == ["main"]
    assert todo_write.shown(send) == todo_write.APPLIED


def test_a_dialect_the_session_does_not_take_is_a_configuration_error(
    session: PlanSession, send: RecordingSend
) -> None:
    with pytest.raises(ConfigurationError, match="does not take the dialect 'claude_todos'"):
        plan_server(session, dialect="claude_todos")
    todos = todo_write.todo_session(send, tool_prefixes=("",))
    with pytest.raises(ConfigurationError, match="mcp__plans__TodoWrite"):
        plan_server(todos)  # the server's names must resolve too
    both = PlanSession(send, session_id="b", dialects=["llm_plans", "claude_todos"])
    assert plan_server(both)["name"] == "plans"
