"""Check one extra of the installed llm-plans wheel, inside a virtualenv that has only it.

    python tests/support/extras_check.py EXTRA [--root CHECKOUT]

Runs, with this interpreter, what the docs promise that extra gives: every Python block of
README.md and docs/ whose imports that extra installs (the model loops driven through
llm_plans.testing's fake API where a block defines them; a titled block, a file of a program
the page shows, imported beside its page's other files), and its examples over a real ACP
pipe with their offline scripted models (the Claude Agent SDK's against the Anthropic
stand-in whose URL is in ANTHROPIC_BASE_URL); for `agent`, `llm-plans demo` and
`llm-plans agent` over a pipe. Prints a JSON report as its last line; exits non-zero at the
first failure.

It imports nothing of the test suite: tests/e2e/test_packaging.py runs it in fresh virtualenvs,
one per extra, where only the wheel and that extra are installed. The pure parts (which
blocks, which extra a block needs) are imported by that test too.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]

# The third-party modules docs blocks import, and the extra that installs each.
MODULE_EXTRA = {
    "openai": "openai",
    "anthropic": "anthropic",
    "httpx2": "testing",
    "acp": "acp",
    "pydantic_ai": "pydantic-ai",
    "agents": "openai-agents",
    "langchain_core": "langchain",
    "langgraph": "langchain",
    "claude_agent_sdk": "claude-agent-sdk",
    "rich": "agent",
    "tenacity": "agent",
}
# Names of llm_plans that need an extra to import or to use.
PACKAGE_EXTRA = {
    "llm_plans.testing.FakeModelAPI": "testing",
    "llm_plans.testing.openai_client": "openai",
    "llm_plans.testing.anthropic_client": "anthropic",
    "llm_plans.integrations.pydantic_ai": "pydantic-ai",
    "llm_plans.integrations.openai_agents": "openai-agents",
    "llm_plans.integrations.langchain": "langchain",
    "llm_plans.integrations.claude_agent_sdk": "claude-agent-sdk",
}
# What each extra installs, by the extras' names (pyproject.toml); openai 3 and anthropic 2
# require httpx2, so either SDK's extra gives what `testing` does, and openai-agents 0.24
# requires openai 3.
INCLUDES = {
    "agent": {"agent", "openai", "anthropic", "acp", "testing"},
    "openai": {"openai", "testing"},
    "anthropic": {"anthropic", "testing"},
    "acp": {"acp"},
    "testing": {"testing"},
    "pydantic-ai": {"pydantic-ai", "acp"},
    "openai-agents": {"openai-agents", "acp", "openai", "testing"},
    "langchain": {"langchain", "acp"},
    "claude-agent-sdk": {"claude-agent-sdk", "acp"},
}
EXTRAS = tuple(INCLUDES)
# The examples each extra serves (examples/<name>.py), and the answer each ends its turn with.
EXAMPLES: dict[str, tuple[str, str | None]] = {
    "acp": ("acp_plan_agent", None),
    "pydantic-ai": ("pydantic_ai_agent", "Fixed the parser and added a regression test."),
    "openai-agents": ("openai_agents_agent", "Fixed the parser and added a regression test."),
    "langchain": ("langchain_agent", "Fixed the parser and added a regression test."),
    "claude-agent-sdk": ("claude_agent_sdk_agent", "Fixed."),
}
PLAN = json.dumps({"type": "items", "entries": [{"content": "Fix", "status": "in_progress"}]})


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


# A Python block; a titled one (```python title="agent.py") is a file of a program the page
# shows, the blocks of which are copied beside each other and run as one.
BLOCK = re.compile(r'```python(?: title="([\w.-]+\.py)")?\n(.*?)```', flags=re.S)


def blocks(root: Path) -> list[tuple[str, str]]:
    """Every Python block of the docs, once each: (where it first stands, its text)."""
    found: dict[str, str] = {}
    for path in doc_files(root):
        text = path.read_text()
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.setdefault(match.group(2), f"{path.relative_to(root)}:{line}")
    return [(where, code) for code, where in found.items()]


def page_files(page: Path) -> dict[str, str]:
    """The files a page's titled blocks make, by name."""
    return {m.group(1): m.group(2) for m in BLOCK.finditer(page.read_text()) if m.group(1)}


def title(root: Path, where: str) -> str | None:
    """The file name of the block at `where` (`page:line` of its fence), if it has one."""
    path, line = where.rsplit(":", 1)
    fence = (root / path).read_text().splitlines()[int(line) - 1]
    named = BLOCK.match(fence + "\n```")
    return named.group(1) if named else None


def local_modules(root: Path) -> set[str]:
    """The modules the docs' titled blocks make, which blocks beside them import."""
    return {Path(name).stem for path in doc_files(root) for name in page_files(path)}


def imported(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def needs(code: str, local: Collection[str] = ()) -> set[str]:
    """The extras a block's imports need; raises ValueError for a module no extra installs.
    `local`: modules other blocks of the docs make (`local_modules`), which need none."""
    extras: set[str] = set()
    for name in imported(code):
        top = name.partition(".")[0]
        if top in local:
            continue
        if name in PACKAGE_EXTRA:
            extras.add(PACKAGE_EXTRA[name])
        elif top in MODULE_EXTRA:
            extras.add(MODULE_EXTRA[top])
        elif top != "llm_plans" and top not in sys.stdlib_module_names:
            raise ValueError(f"imports {name!r}, which no extra of llm-plans installs")
    return extras


def blocks_for(extra: str, root: Path) -> list[tuple[str, str]]:
    local = local_modules(root)
    return [(w, code) for w, code in blocks(root) if needs(code, local) <= INCLUDES[extra]]


# ---- running blocks ---------------------------------------------------------------------------


async def drive_loops(namespace: dict[str, Any]) -> list[str]:
    """Run the model loops a block defines against llm_plans.testing's fake model API."""
    from llm_plans import PlanSession
    from llm_plans.testing import FakeModelAPI, RecordingSend

    driven = []
    if "openai_turn" in namespace:
        from llm_plans.testing import chat_completion, openai_client

        done = chat_completion([], "stop")
        done["choices"][0]["message"]["content"] = "Fixed."
        api = FakeModelAPI(chat_completion([("call_1", "create_plan", PLAN)]), done)
        send = RecordingSend()
        session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
        reply = await namespace["openai_turn"](openai_client(api), session, [])
        assert reply == "Fixed.", reply
        assert send.updates[-1]["sessionUpdate"] == "plan_update", send.updates
        driven.append("openai_turn")
    if "anthropic_turn" in namespace:
        from llm_plans.testing import anthropic_client, anthropic_events, sse

        api = FakeModelAPI(
            sse(anthropic_events([("toolu_1", "create_plan", PLAN)])),
            sse(anthropic_events([], stop="end_turn")),
        )
        send = RecordingSend()
        session = PlanSession(send, session_id="s", client_capabilities={"plan": {}})
        assert await namespace["anthropic_turn"](anthropic_client(api), session, []) == ""
        assert send.updates[-1]["sessionUpdate"] == "plan_update", send.updates
        driven.append("anthropic_turn")
    return driven


def run_file(name: str, files: dict[str, str], where: Path) -> dict[str, Any]:
    """Run the file `name` of a page's `files` as an imported module (not as `__main__`: an
    agent would start serving), with the others beside it to import."""
    for each, code in files.items():
        (where / each).write_text(code)
    sys.path.insert(0, str(where))
    try:
        return runpy.run_path(str(where / name), run_name=Path(name).stem)
    finally:
        sys.path.remove(str(where))
        for module in [m for m in sys.modules if f"{m}.py" in files]:
            del sys.modules[module]  # another page may make a file of the same name


def run_blocks(extra: str, root: Path) -> tuple[list[str], list[str]]:
    ran, driven = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (where, code) in enumerate(blocks_for(extra, root)):
            script = Path(tmp) / f"block_{n}.py"
            script.write_text(code)
            name = title(root, where)
            try:
                with contextlib.redirect_stdout(sys.stderr):  # stdout is for the report
                    if name is None:
                        namespace = runpy.run_path(str(script), run_name="__main__")
                    else:
                        files = page_files(root / where.rsplit(":", 1)[0])
                        (Path(tmp) / f"files_{n}").mkdir()
                        namespace = run_file(name, files, Path(tmp) / f"files_{n}")
                driven += [f"{where} {name}" for name in asyncio.run(drive_loops(namespace))]
            except BaseException as exc:
                raise SystemExit(f"[{extra}] the block at {where} failed: {exc!r}") from exc
            ran.append(where)
    return ran, driven


# ---- running examples ---------------------------------------------------------------------------


async def run_example(root: Path, name: str, answer: str | None) -> None:
    """One session and one prompt over a stdio pipe; the plans and the answer arrive."""
    import acp
    from acp.schema import TextContentBlock

    raw: list[dict[str, Any]] = []

    class Client:
        async def session_update(self, **_: Any) -> None:
            return None

        async def request_permission(self, **_: Any) -> Any:
            raise NotImplementedError

    def observe(event: Any) -> None:
        if event.message.get("method") == "session/update":
            raw.append(event.message["params"]["update"])

    async with acp.spawn_agent_process(
        cast("acp.Client", Client()),  # the SDK calls only the methods a client has
        sys.executable,
        str(root / "examples" / f"{name}.py"),
        env=dict(os.environ),
        observers=[observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        # Raw, so that the plan capability reaches the agent as a client sends it.
        await conn._conn.send_request(
            "initialize",
            {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": {"plan": {}}},
        )
        session = await conn.new_session(cwd=str(root))
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="fix it")]
        )
    kinds = [u["sessionUpdate"] for u in raw]
    assert response.stop_reason == "end_turn", response
    # The plan form: the plan shown step by step, then taken away.
    plans = [kind for kind in kinds if kind.startswith("plan")]
    assert "plan_update" in plans, kinds
    assert plans[-1] == "plan_removed", kinds
    if answer is not None:
        assert raw[-1]["content"] == {"type": "text", "text": answer}, raw[-1]


def run_demo() -> None:
    """`llm-plans demo`, as the README's first command runs it."""
    command = Path(sys.executable).parent / "llm-plans"
    out = subprocess.run(
        [str(command), "demo", "--delay", "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    for shown in ("[plan-1] 4/4 done", "[design] removed", "Turn ended: end_turn"):
        assert shown in out.stdout, out.stdout


async def serve_fake_api() -> None:
    """`FakeModelAPI` on httpx2's mock transport, with no model SDK to put on it."""
    import httpx2

    from llm_plans.testing import FakeModelAPI, chat_chunks, sse

    api = FakeModelAPI(sse(chat_chunks([("call_1", "create_plan", PLAN)])))
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(api)) as client:
        response = await client.post("https://api.test/v1/chat/completions", json={"n": 1})
    assert response.headers["content-type"] == "text/event-stream", response.headers
    assert response.text.endswith("data: [DONE]\n\n"), response.text
    assert api.requests == [{"n": 1}], api.requests


async def start_agent_command() -> None:
    """`llm-plans agent`, as acpx or Zed start it, answers `initialize` and opens a session."""
    import acp

    class Client:
        async def session_update(self, **_: Any) -> None:
            return None

    with tempfile.TemporaryDirectory() as data:
        async with acp.spawn_agent_process(
            cast("acp.Client", Client()),  # the SDK calls only the methods a client has
            str(Path(sys.executable).parent / "llm-plans"),
            "agent",
            "--model",
            "scripted",
            "--data-dir",
            data,
            env=dict(os.environ),
        ) as (conn, _process):
            init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            assert init.protocol_version == acp.PROTOCOL_VERSION, init
            session = await conn.new_session(cwd=data)
            assert session.session_id, session


def check(extra: str, root: Path) -> dict[str, Any]:
    ran, driven = run_blocks(extra, root)
    examples = []
    if extra in EXAMPLES:
        name, answer = EXAMPLES[extra]
        asyncio.run(run_example(root, name, answer))
        examples.append(name)
    if extra == "testing":
        asyncio.run(serve_fake_api())
        examples.append("FakeModelAPI")
    if extra == "agent":
        run_demo()
        asyncio.run(start_agent_command())
        examples += ["llm-plans demo", "llm-plans agent"]
    import llm_plans

    return {
        "extra": extra,
        "llm_plans": llm_plans.__file__,
        "blocks": ran,
        "driven": driven,
        "examples": examples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extra", choices=EXTRAS)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (docs, examples)")
    args = parser.parse_args()
    print(json.dumps(check(args.extra, args.root)))


if __name__ == "__main__":
    main()
