"""The example coding agent against the official ACP Python SDK's client side."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp
import coding_agent
import pytest
from acp.schema import AllowedOutcome, RequestPermissionResponse
from agent_client import (
    AGENT,
    CAPS,
    Client,
    agent_env,
    connected,
    prompt_block,
    run_prompt,
    sample_project,
)
from agent_pipe import piped
from coding_agent_lib import retries
from coding_agent_lib.models import Backend, OnText, OpenAIChat, Reply, ToolUse
from spec_shapes import check
from wire_payloads import chat_stream

import llm_plans
from llm_plans import ClientCapabilitiesRecorder, PlanSession
from llm_plans.testing import Broken, FakeModelAPI, client_view, openai_client


@pytest.mark.parametrize("form", sorted(CAPS))
async def test_a_prompt_in_every_capability_form(form: str, tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client, stop = await run_prompt(project, tmp_path / "data", CAPS[form])
    assert stop == "end_turn"
    for params in client.raw:
        if params["update"]["sessionUpdate"].startswith("plan"):
            check(form, params)
    updates = client.plan_updates
    if form == "legacy":
        assert {u["sessionUpdate"] for u in updates} == {"plan"}
        final = [e["content"] for e in updates[-1]["entries"]]
        assert final[:4] == [
            "Read the project and find the bug",
            "Fix mean() in calc.py",
            "Add a regression test",
            "Run the tests",
        ]
        assert "Divide by `len(values)`" not in final  # the design note was removed
    else:
        key = "id" if form == "documents" else "planId"
        kinds = {u["sessionUpdate"] for u in updates}
        assert kinds == {"plan_update", "plan_removed"}
        removed = [u[key] for u in updates if u["sessionUpdate"] == "plan_removed"]
        assert removed == ["design"]
        plans = {u["plan"][key] for u in updates if u["sessionUpdate"] == "plan_update"}
        assert plans == {"plan-1", "design", "follow-ups"}
        last_work = [u for u in updates if u.get("plan", {}).get(key) == "plan-1"][-1]
        assert {e["status"] for e in last_work["plan"]["entries"]} == {"completed"}
    # real work happened, through the client's fs, after asking
    assert "return sum(values) / len(values)" in (project / "calc.py").read_text()
    assert (project / "test_calc.py").exists()
    assert client.permissions == [
        "Write calc.py",
        "Write test_calc.py",
        "Run `python test_calc.py`",
    ]
    typed_kinds = [getattr(u, "session_update", "") for u in client.typed]
    assert "tool_call" in typed_kinds
    assert "tool_call_update" in typed_kinds
    assert "agent_message_chunk" in typed_kinds


async def test_initialize_names_the_agent_and_writes_carry_their_diff(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    before = (project / "calc.py").read_text()
    client = Client()
    async with connected(client, project, agent_env(tmp_path / "data"), {}) as (conn, _, init):
        assert init["agentInfo"] == {
            "name": "llm-plans-agent",
            "title": "llm_plans example agent",
            "version": llm_plans.__version__,
        }
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix it"))
    writes = [
        p["update"]
        for p in client.raw
        if p["update"]["sessionUpdate"] == "tool_call" and p["update"]["title"] == "Write calc.py"
    ]
    [write] = writes
    path = str(project / "calc.py")
    [shown] = write["content"]
    assert shown["type"] == "diff"
    assert shown["path"] == path
    assert shown["oldText"] == before
    assert shown["newText"] == (project / "calc.py").read_text()
    assert write["locations"] == [{"path": path}]


async def test_plans_stream_while_the_model_writes(tmp_path: Path) -> None:
    client, _ = await run_prompt(sample_project(tmp_path), tmp_path / "data", CAPS["schema"])
    first = client.plan_updates[0]
    assert 0 < len(first["plan"]["entries"]) < 4  # shown before the call was complete


async def test_cancel_stops_the_turn(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client = Client()
    env = {**agent_env(tmp_path / "data"), "LLM_PLANS_SCRIPT_DELAY": "0.05"}
    async with connected(client, project, env, {"plan": {}}) as (conn, _process, _init):
        session = await conn.new_session(cwd=str(project))
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
        )
        while not client.plan_updates:  # the scripted model is writing plan-1
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(turn, 5)
        assert response.stop_reason == "cancelled"
        assert "return sum(values) / (len(values) - 1)" in (project / "calc.py").read_text()
        # the half-written plan-1 is taken back, and the next turn can create it again
        assert client_view(client.plan_updates) == {}
        again = await conn.prompt(session_id=session.session_id, prompt=prompt_block("go"))
    assert again.stop_reason == "end_turn"
    assert {e["status"] for e in _last_plan(client, "plan-1")} == {"completed"}


def _last_plan(client: Client, plan_id: str) -> list[dict[str, str]]:
    updates = [u for u in client.plan_updates if u.get("plan", {}).get("planId") == plan_id]
    entries: list[dict[str, str]] = updates[-1]["plan"]["entries"]
    return entries


def _final_message(client: Client) -> str:
    """What the agent said after its last tool call."""
    kinds = [getattr(u, "session_update", "") for u in client.typed]
    last_tool = max(i for i, kind in enumerate(kinds) if kind.startswith("tool_call"))
    return "".join(
        u.content.text
        for u in client.typed[last_tool + 1 :]
        if getattr(u, "session_update", "") == "agent_message_chunk"
    )


# Words the scripted model uses only once the work behind them was done.
SUCCESS_CLAIMS = ("Fixed", "Tests pass", "Done")


async def test_declined_permissions_leave_nothing_claimed(tmp_path: Path) -> None:
    """acpx --approve-reads without a terminal declines every write: the agent must not say
    it fixed anything, nor mark undone steps completed."""
    project = sample_project(tmp_path)
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    client, stop = await run_prompt(project, tmp_path / "data", CAPS["schema"], approve=False)
    assert stop == "end_turn"
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before  # nothing written
    assert client.permissions == ["Write calc.py"]  # it stopped at the first refusal
    statuses = [e["status"] for e in _last_plan(client, "plan-1")]
    assert statuses == ["completed", "in_progress", "pending", "pending"]
    failed = [u for u in client.typed if getattr(u, "status", None) == "failed"]
    assert len(failed) == 1  # the declined write, reported as a failed tool call
    said = client.said
    assert not any(claim in said for claim in SUCCESS_CLAIMS), said
    final = _final_message(client)
    assert final.startswith("I stopped: I could not write calc.py.\n")
    assert "declined" in final
    assert "step 2, 'Fix mean() in calc.py', is still in progress and the steps" in final
    assert "--approve-all" in final


class LyingClient(Client):
    """Reports writes of calc.py as done without doing them, so the tests then fail."""

    async def write_text_file(self, path: str, content: str, **kwargs: Any) -> Any:
        if Path(path).name == "calc.py":
            return await super().write_text_file(path, Path(path).read_text(), **kwargs)
        return await super().write_text_file(path, content, **kwargs)


async def test_a_failed_command_stops_the_plan_where_it_failed(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client = LyingClient()
    async with connected(client, project, agent_env(tmp_path / "data"), {"plan": {}}) as (
        conn,
        _process,
        _init,
    ):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix"))
    assert response.stop_reason == "end_turn"
    statuses = [e["status"] for e in _last_plan(client, "plan-1")]
    assert statuses == ["completed", "completed", "completed", "in_progress"]
    said = client.said
    assert "Tests pass" not in said
    assert "Done" not in said
    assert "I stopped: `python test_calc.py` did not succeed." in said
    assert "> exit code 1" in said
    assert "AssertionError" in said  # the command's own output, quoted
    assert "step 4, 'Run the tests', is still in progress." in said
    assert "follow-ups" not in {u.get("plan", {}).get("planId") for u in client.plan_updates}


@pytest.mark.parametrize(
    ("flags", "variable"),
    [
        (["--model", "gpt-4.1"], "OPENAI_API_KEY"),
        (["--api", "anthropic"], "ANTHROPIC_API_KEY"),
        (["--api", "openai-responses", "--model", "gpt-4.1"], "OPENAI_API_KEY"),
    ],
)
def test_a_named_model_without_its_key_fails_at_start_up(
    flags: list[str], variable: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, str(AGENT), *flags],
        env=agent_env(tmp_path / "data"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert f"needs {variable}" in done.stderr
    assert "which is not set" in done.stderr
    assert "--model scripted" in done.stderr
    assert done.stdout == ""  # nothing on the ACP channel


@pytest.mark.parametrize(
    ("flags", "keys", "api"),
    [
        (["--model", "scripted"], {}, "scripted"),
        (["--model", "scripted"], {"OPENAI_API_KEY": "k"}, "scripted"),
        ([], {"ANTHROPIC_API_KEY": "k"}, "anthropic"),
        ([], {"OPENAI_API_KEY": "k"}, "openai-chat"),
        (["--api", "openai-responses"], {"OPENAI_API_KEY": "k"}, "openai-responses"),
    ],
)
def test_which_model_runs(
    flags: list[str], keys: dict[str, str], api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LLM_PLANS_MODEL", "LLM_PLANS_API"):
        monkeypatch.delenv(name, raising=False)
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    assert coding_agent.resolve_api(coding_agent.parse_args(flags)) == api


class Conn:
    """The agent side's connection, in-process: records what the agent says."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    @property
    def said(self) -> str:
        return "".join(u.content.text for u in self.updates if hasattr(u, "content"))


def _closed_port() -> int:
    with socket.socket() as probe:  # bound then closed: connecting is refused at once
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_an_unreachable_api_is_announced_while_retrying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(retries, "_backoff", lambda _state: 0.0)  # keep the test fast
    args = coding_agent.parse_args(["--model", "gpt-4.1", "--data-dir", str(tmp_path / "data")])
    agent = coding_agent.CodingAgent(args, ClientCapabilitiesRecorder())
    conn = Conn()
    agent.on_connect(conn)
    session = await agent.new_session(cwd=str(tmp_path))
    with pytest.raises(acp.RequestError) as failed:
        await agent.prompt(session.session_id, prompt_block("hi"))
    said = conn.said
    assert str(failed.value) in said  # the error the client gets is what the user was told
    notices = [line for line in said.splitlines() if "retrying" in line]
    assert notices == [f"model API unreachable, retrying in 0 s ({n}/5)" for n in range(2, 6)]
    assert f"Model API unreachable: {base_url}/chat/completions failed" in said


async def test_after_a_refusal_the_next_prompt_retries_the_step(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client = Client(approve=False)
    async with connected(client, project, agent_env(tmp_path / "data"), {"plan": {}}) as (
        conn,
        _process,
        _init,
    ):
        session = await conn.new_session(cwd=str(project))
        await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix"))
        assert "I stopped" in client.said
        client.approve = True
        stopped_at = len(client.typed)
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block("go on"))
        second = "".join(
            u.content.text
            for u in client.typed[stopped_at:]
            if getattr(u, "session_update", "") == "agent_message_chunk"
        )
        assert response.stop_reason == "end_turn"
        assert second.startswith("Trying step 2 again: Fix mean() in calc.py.\n")
        assert "Done" in second
        assert {e["status"] for e in _last_plan(client, "plan-1")} == {"completed"}
        assert "return sum(values) / len(values)" in (project / "calc.py").read_text()
        # a finished run: the script ran once, the next prompt leaves its plans as they are
        finished = client_view(client.plan_updates)
        await conn.prompt(session_id=session.session_id, prompt=prompt_block("again"))
    removed = [u["planId"] for u in client.plan_updates if u["sessionUpdate"] == "plan_removed"]
    assert removed == ["design"]
    assert client_view(client.plan_updates) == finished
    assert "Starting over." not in client.said


# ---- a turn's life: failing, cancelled -------------------------------------------------------

PLAN = json.dumps(
    {
        "type": "items",
        "id": "plan-1",
        "entries": [
            {"content": f"Step {n} of the work", "priority": None, "status": None}
            for n in range(1, 6)
        ],
        "content": None,
        "uri": None,
    }
)


def _plan_then_broken() -> Broken:
    """A chat reply that writes half of create_plan(plan-1), then the connection drops."""
    body = chat_stream([("call_p", "create_plan", PLAN)])
    return Broken(body, after=len(body.split(b"\n\n")) // 2)


async def test_a_model_api_failure_answers_the_prompt_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client gets a JSON-RPC error it can act on (acpx exits non-zero), the user the
    same words, and the half-written plan is gone from the client's view."""
    api = FakeModelAPI(_plan_then_broken())
    client = Client()
    backend = lambda: OpenAIChat(openai_client(api), "gpt-4.1", "system")  # noqa: E731
    async with piped(client, tmp_path / "data", backend, monkeypatch) as (conn, agent):
        session = await conn.new_session(cwd=str(tmp_path))
        with pytest.raises(acp.RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=prompt_block("plan"))
        plans = agent._sessions[session.session_id][0]
    assert failed.value.code == -32603
    assert str(failed.value).startswith("Model API unreachable: https://api.openai.com/v1/")
    assert "Check the key, model name, base URL and network" in str(failed.value)
    assert str(failed.value) in client.said
    assert any(u["sessionUpdate"] == "plan_update" for u in client.plan_updates)
    assert client_view(client.plan_updates) == {}
    assert dict(plans.plans) == {}


class Stalling(Backend):
    """A model that writes part of a plan (or asks for a command) and then stalls until the
    turn is cancelled; asked again, it creates the plan whole and stops."""

    def __init__(self, first: str) -> None:
        self.first = first
        self.replies = 0
        self.results: list[Any] = []
        self.answers: list[dict[str, Any]] = []

    def add_user(self, text: str) -> None:
        pass

    async def reply(self, plans: PlanSession, on_text: OnText) -> Reply:
        self.replies += 1
        if self.replies == 1 and self.first == "plan":
            await plans.feed("call_1", "create_plan", PLAN[: len(PLAN) * 2 // 3])
            await asyncio.Event().wait()
        if self.replies == 1:
            command = json.dumps({"command": "echo $$ > shell.pid; sleep 1000"})
            return Reply([ToolUse("call_c", "run_command", command)])
        self.results.append(await plans.call("create_plan", PLAN))
        return Reply()

    def result(self, use: ToolUse, text: str, ok: bool) -> dict[str, Any]:
        return {"id": use.id, "text": text, "ok": ok}

    def add_results(self, results: list[dict[str, Any]]) -> None:
        self.answers += results


async def test_a_cancelled_turn_takes_back_its_half_written_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Stalling("plan")
    client = Client()
    async with piped(client, tmp_path / "data", lambda: model, monkeypatch) as (conn, agent):
        session = await conn.new_session(cwd=str(tmp_path))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=prompt_block("go")))
        while not client.plan_updates:  # the client shows part of plan-1
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        assert (await turn).stop_reason == "cancelled"
        plans = agent._sessions[sid][0]
        assert client_view(client.plan_updates) == {}
        assert dict(plans.plans) == {}
        # the next turn creates plan-1 again: the cancelled call holds nothing
        assert (await conn.prompt(session_id=sid, prompt=prompt_block("go"))).stop_reason == (
            "end_turn"
        )
    assert model.results[0].ok, model.results[0].content
    assert list(client_view(client.plan_updates)) == ["plan-1"]


async def test_a_cancelled_turn_kills_its_command_and_answers_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = Stalling("command")
    client = Client()
    async with piped(client, tmp_path / "data", lambda: model, monkeypatch) as (conn, _agent):
        session = await conn.new_session(cwd=str(tmp_path))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=prompt_block("go")))
        pid_file = tmp_path / "shell.pid"
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        await conn.cancel(session_id=sid)  # twice: the second must not cut the first short
        assert (await turn).stop_reason == "cancelled"
    shell = int(pid_file.read_text())
    assert await _until_gone(shell)
    # the model's conversation stays valid: its call got an answer
    assert model.answers == [{"id": "call_c", "text": coding_agent.CANCELLED, "ok": False}]
    assert client.permissions == ["Run `echo $$ > shell.pid; sleep 1000`"]


async def test_a_cancelled_chat_turn_leaves_a_conversation_the_api_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI refuses a conversation with a tool call that has no tool message: the next
    prompt's request carries the cancelled call's answer."""
    command = json.dumps({"command": "echo $$ > shell.pid; sleep 1000"})
    api = FakeModelAPI(
        chat_stream([("call_c", "run_command", command)]),
        chat_stream([], finish="stop"),
    )
    client = Client()
    backend = lambda: OpenAIChat(openai_client(api), "gpt-4.1", "system")  # noqa: E731
    async with piped(client, tmp_path / "data", backend, monkeypatch) as (conn, _agent):
        session = await conn.new_session(cwd=str(tmp_path))
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=prompt_block("go")))
        pid_file = tmp_path / "shell.pid"
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.01)
        await conn.cancel(session_id=sid)
        assert (await turn).stop_reason == "cancelled"
        await conn.prompt(session_id=sid, prompt=prompt_block("go on"))
    messages = api.requests[1]["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "call_c",
        "content": coding_agent.CANCELLED,
    }
    assert await _until_gone(int(pid_file.read_text()))


async def _until_gone(pid: int) -> bool:
    """Whether the process exits (a zombie has); a SIGKILL lands when the kernel next runs
    the process, so this looks again for a while before saying it did not."""
    for _ in range(3000):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        await asyncio.sleep(0.01)
    return False


class AlwaysClient(Client):
    """Answers every permission request with the agent's "Always allow" option."""

    async def request_permission(
        self, options: list[Any], tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call.title)
        option = next(o for o in options if o.kind == "allow_always")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )


async def test_allow_always_asks_once_per_kind_of_tool(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    client = AlwaysClient()
    async with connected(client, project, agent_env(tmp_path / "data"), {"plan": {}}) as (
        conn,
        _process,
        _init,
    ):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix"))
    assert response.stop_reason == "end_turn"
    # two writes and a command: the second write is not asked about
    assert client.permissions == ["Write calc.py", "Run `python test_calc.py`"]
    assert (project / "test_calc.py").exists()
