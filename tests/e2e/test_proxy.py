"""`llm-plans proxy` as a client starts it: the installed command, in front of a replayed
agent (tests/support/replay_agent.py), driven by real ACP clients over real pipes: the
TypeScript SDK's client, which validates every notification it receives, and acpx, which
shows the legacy list as Zed and Toad do."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from node_tools import NODE_DIR, acpx_exec, node_modules
from replay_agent import records

ROOT = Path(__file__).resolve().parents[2]
# The transcripts whose client does what these clients do (initialize, session/new, one
# prompt, answering what the agent asks), not those that set a mode first.
TRANSCRIPTS = [
    t
    for t in sorted((ROOT / "tests" / "proxy" / "transcripts").glob("*.ndjson"))
    if {json.loads(r["line"]).get("method") for r in records(t) if r["dir"] == "client->agent"}
    <= {"initialize", "session/new", "session/prompt", None}
]
REPLAY = ROOT / "tests" / "support" / "replay_agent.py"
LLM_PLANS = str(Path(sys.executable).parent / "llm-plans")
TIMEOUT = 180
PLAN_KINDS = ("plan", "plan_update", "plan_removed", "subagent_update")


def proxied(transcript: Path) -> list[str]:
    return [LLM_PLANS, "proxy", "--", sys.executable, str(REPLAY), str(transcript)]


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=[t.stem for t in TRANSCRIPTS])
@pytest.mark.parametrize("caps", [{}, {"plan": {}}], ids=["legacy", "plan"])
def test_the_typescript_sdk_client_takes_every_notification(
    transcript: Path, caps: dict[str, Any], tmp_path: Path
) -> None:
    node_modules()
    out = subprocess.run(
        ["node", str(NODE_DIR / "ts_client.mjs"), str(tmp_path), *proxied(transcript)],
        env={
            "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
            "ACP_CLIENT_CAPABILITIES": json.dumps(caps),
        },
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["stopReason"] == "end_turn"
    assert report["validated"] == report["onWire"]  # the SDK took every one
    kinds = [p["update"]["sessionUpdate"] for p in report["onWire"]]
    assert any(kind in PLAN_KINDS for kind in kinds)
    if not caps:
        assert not {"plan_update", "plan_removed"} & set(kinds)


def test_acpx_shows_opencode_plan_through_the_proxy(tmp_path: Path) -> None:
    node_modules()
    (transcript,) = [t for t in TRANSCRIPTS if t.stem.startswith("opencode-")]
    agent = shlex.join(proxied(transcript))
    out = acpx_exec(
        agent,
        "Plan and fix the bug",
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert "[plan]" in out.stdout
    # Without the proxy, acpx shows no plan at all: opencode sends none.
    direct = acpx_exec(
        shlex.join([sys.executable, str(REPLAY), str(transcript)]),
        "Plan and fix the bug",
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert "[plan]" not in direct.stdout
