"""The example agent against real ACP clients: the TypeScript SDK and acpx, over real pipes;
and every plan notification against ACP's published JSON schema."""

from __future__ import annotations

import http.server
import json
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import jsonschema
import pytest
from agent_client import AGENT, CAPS, SCRIPTED, agent_env, run_prompt, sample_project
from node_tools import ACPX, NODE_DIR, acpx_exec, node_modules, validate_published
from spec_shapes import check

README = Path(__file__).resolve().parents[2] / "docs" / "example-agent.md"
# The agent runs the whole scripted session; a slow CI machine gets generous room.
TIMEOUT = 180


def run_ts_client(project: Path, data: Path, caps: dict[str, object]) -> dict[str, object]:
    node_modules()
    env = {**agent_env(data), "ACP_CLIENT_CAPABILITIES": json.dumps(caps)}
    out = subprocess.run(
        [
            "node",
            str(NODE_DIR / "ts_client.mjs"),
            str(project),
            sys.executable,
            str(AGENT),
            *SCRIPTED,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    report: dict[str, object] = json.loads(out.stdout)
    return report


def test_typescript_sdk_client_validates_every_plan_update(tmp_path: Path) -> None:
    report = run_ts_client(sample_project(tmp_path), tmp_path / "data", {"plan": {}})
    assert report["stopReason"] == "end_turn"
    wire, validated = report["onWire"], report["validated"]
    assert isinstance(wire, list)
    assert validated == wire  # every notification passed the SDK's zod validation
    kinds = [p["update"]["sessionUpdate"] for p in wire]
    assert kinds.count("plan_update") >= 5
    assert kinds.count("plan_removed") == 1


def test_typescript_sdk_rejects_the_documents_form(tmp_path: Path) -> None:
    """The drift the spec README describes is real: `id` instead of `planId` fails the
    published schema, so the documents form goes only to clients that asked for it."""
    report = run_ts_client(sample_project(tmp_path), tmp_path / "data", {"planCapabilities": {}})
    wire, validated = report["onWire"], report["validated"]
    assert isinstance(wire, list)
    assert isinstance(validated, list)
    plans = [p for p in wire if p["update"]["sessionUpdate"].startswith("plan")]
    assert plans
    assert not any(p in validated for p in plans)


def readme_acpx_command() -> list[str]:
    """The docs' offline acpx command, with this virtualenv's `llm-plans` in place of the one
    on PATH."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    (line,) = [b.strip() for b in blocks if b.strip().startswith("acpx ")]
    words = shlex.split(line)
    agent = words.index("--agent") + 1
    program, *options = shlex.split(words[agent])
    assert program == "llm-plans"
    words[agent] = shlex.join([str(Path(sys.executable).parent / "llm-plans"), *options])
    return ["node", str(ACPX), *words[1:]]


def test_acpx_runs_the_readme_command_as_written(tmp_path: Path) -> None:
    """No terminal, no flags beyond the README's: the agent does the work and acpx exits 0."""
    node_modules()
    project = sample_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    # The README's command names no model; the offline one, named here, runs only when named.
    env = {**agent_env(tmp_path / "data"), "HOME": str(home), "LLM_PLANS_MODEL": "scripted"}
    out = subprocess.run(
        readme_acpx_command(),
        env=env,
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    text = out.stdout
    assert "[plan]" in text
    assert "- [in_progress] Read the project and find the bug" in text
    assert "- [completed] Run the tests" in text
    assert "Document the empty-list error in the README" in text
    assert "sum(values) / len(values)" in (project / "calc.py").read_text()


def test_acpx_approving_reads_only_gets_an_honest_stop(tmp_path: Path) -> None:
    """The issue's run: `--approve-reads` without a terminal declines the first write; the
    agent says so instead of claiming the fix, and acpx reports the refusal (exit code 5)."""
    node_modules()
    project = sample_project(tmp_path)
    before = (project / "calc.py").read_text()
    home = tmp_path / "home"
    home.mkdir()
    command = [w if w != "--approve-all" else "--approve-reads" for w in readme_acpx_command()]
    out = subprocess.run(
        command,
        env={**agent_env(tmp_path / "data"), "HOME": str(home), "LLM_PLANS_MODEL": "scripted"},
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert out.returncode == 5  # acpx: permission denied
    assert (project / "calc.py").read_text() == before
    assert "I stopped: I could not write calc.py." in out.stdout
    assert "- [completed] Fix mean() in calc.py" not in out.stdout
    for claim in ("Fixed", "Tests pass", "Done"):
        assert claim not in out.stdout


@pytest.mark.parametrize("form", ["schema", "legacy"])
async def test_plan_notifications_match_the_published_schema(form: str, tmp_path: Path) -> None:
    client, _ = await run_prompt(sample_project(tmp_path), tmp_path / "data", CAPS[form])
    plans = [p for p in client.raw if p["update"]["sessionUpdate"].startswith("plan")]
    assert len(plans) >= 5
    for params in plans:
        validate_published(params)


async def test_documents_form_matches_the_spec_documents(tmp_path: Path) -> None:
    client, _ = await run_prompt(sample_project(tmp_path), tmp_path / "data", CAPS["documents"])
    plans = [p for p in client.raw if p["update"]["sessionUpdate"].startswith("plan")]
    assert len(plans) >= 5
    for params in plans:
        check("documents", params)
        with pytest.raises(jsonschema.ValidationError):
            validate_published(params)


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    """A model API that refuses every request as OpenAI does a bad key (401, its error body)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def test_acpx_exits_non_zero_when_the_model_api_fails(tmp_path: Path) -> None:
    """A turn that ends because the model API failed is an error for the client: acpx shows
    the agent's message and exits non-zero, so a script can tell."""
    node_modules()
    project = sample_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {
        **agent_env(tmp_path / "data"),
        "HOME": str(home),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
    }
    env.pop("LLM_PLANS_MODEL", None)
    agent = f"{sys.executable} {AGENT} --model gpt-4.1"
    try:
        out = acpx_exec(agent, "fix the test", cwd=project, env=env, check=False)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode != 0, out.stdout + out.stderr
    assert "Model API answered HTTP 401" in out.stdout + out.stderr
