"""Each agent's transcript replayed through the proxy to a client of each form: the plans the
client gets are the golden ones and compliant with its form; every other message reaches it
byte for byte and in order; `--no-upgrade` changes nothing at all.

Transcripts (tests/proxy/transcripts/) name the agent and version they model and how they were
made. LLM_PLANS_UPDATE_GOLDEN=1 rewrites the golden files (tests/proxy/golden/) from this code:
read the diff before committing it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from client_view import check_compliant
from replay_agent import meta, records

from llm_plans._proxy.relay import Relayed, Rewriter, relay
from llm_plans._proxy.upgrade import Upgrade
from llm_plans._wire.forms import form_for

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*.ndjson"))
GOLDEN = HERE / "golden"
REPLAY = HERE.parent / "support" / "replay_agent.py"
UPDATE = os.environ.get("LLM_PLANS_UPDATE_GOLDEN") == "1"

BASE = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
CLIENTS: dict[str, dict[str, Any]] = {
    "legacy": BASE,  # Zed, Toad and acpx today
    "schema": {**BASE, "plan": {}},  # ACP v1 stable plan operations
    "subagents": {**BASE, "plan": {}, "subagents": {}},
    "documents": {**BASE, "planCapabilities": {}},  # the spec documents' draft
}
PLAN_KINDS = {"plan", "plan_update", "plan_removed", "subagent_update"}


def kind(line: bytes) -> str | None:
    """The sessionUpdate of a session/update line; None for any other line."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "session/update":
        update = message.get("params", {}).get("update", {})
        return update.get("sessionUpdate") if isinstance(update, dict) else None
    return None


def client_lines(transcript: Path, capabilities: dict[str, Any]) -> bytes:
    out = []
    for record in records(transcript):
        if record["dir"] != "client->agent":
            continue
        message = json.loads(record["line"])
        if message.get("method") == "initialize":
            message["params"]["clientCapabilities"] = capabilities
            out.append(json.dumps(message).encode())
        else:
            out.append(record["line"].encode())
    return b"".join(line + b"\n" for line in out)


def agent_lines(transcript: Path) -> list[bytes]:
    return [r["line"].encode() + b"\n" for r in records(transcript) if r["dir"] == "agent->client"]


async def replay(
    transcript: Path, data: bytes, rewriter: Rewriter, seen: Path
) -> tuple[list[bytes], int]:
    client_in, to_proxy = os.pipe()
    from_proxy, client_out = os.pipe()
    command = [sys.executable, str(REPLAY), str(transcript), str(seen)]
    task = asyncio.create_task(relay(command, rewriter, client_in=client_in, client_out=client_out))

    def write() -> None:
        with open(to_proxy, "wb") as pipe:
            pipe.write(data)

    def read() -> bytes:
        with open(from_proxy, "rb") as pipe:
            return pipe.read()

    reader = asyncio.create_task(asyncio.to_thread(read))
    await asyncio.to_thread(write)
    try:
        code = await asyncio.wait_for(task, 60)
    finally:
        os.close(client_out)
        os.close(client_in)
    return (await reader).splitlines(keepends=True), code


CASES = [(t, c) for t in TRANSCRIPTS for c in CLIENTS]


@pytest.mark.parametrize(("transcript", "client"), CASES, ids=[f"{t.stem}-{c}" for t, c in CASES])
def test_the_client_gets_the_golden_plans_and_everything_else_as_sent(
    transcript: Path, client: str, tmp_path: Path
) -> None:
    capabilities = CLIENTS[client]
    seen = tmp_path / "seen"
    sent = client_lines(transcript, capabilities)
    out, code = asyncio.run(replay(transcript, sent, Upgrade(["agent"]), seen))
    assert code == 0
    form = form_for(capabilities, 1).value
    plans = []
    for line in out:
        if kind(line) in PLAN_KINDS:
            params = json.loads(line)["params"]
            check_compliant(form, params)
            plans.append(params)
    # Everything but plans, byte for byte and in order.
    others = [line for line in agent_lines(transcript) if kind(line) not in PLAN_KINDS]
    assert [line for line in out if kind(line) not in PLAN_KINDS] == others
    # The agent read what the client sent, initialize asking for plan operations once.
    got = seen.read_bytes().splitlines(keepends=True)
    assert got[1:] == sent.splitlines(keepends=True)[1:]
    asked = json.loads(got[0])["params"]["clientCapabilities"]
    assert asked == {**capabilities, "plan": capabilities.get("plan", {})}
    golden = GOLDEN / transcript.stem / f"{client}.json"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(plans, indent=1, ensure_ascii=False) + "\n")
    assert plans == json.loads(golden.read_text()), f"{golden} differs"


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=[t.stem for t in TRANSCRIPTS])
def test_no_upgrade_relays_every_byte(transcript: Path, tmp_path: Path) -> None:
    sent = client_lines(transcript, CLIENTS["legacy"])
    out, code = asyncio.run(replay(transcript, sent, Relayed(), tmp_path / "seen"))
    assert (out, code) == (agent_lines(transcript), 0)
    assert (tmp_path / "seen").read_bytes() == sent


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=[t.stem for t in TRANSCRIPTS])
def test_each_transcript_says_what_it_models(transcript: Path) -> None:
    about = meta(transcript)
    assert {"agent", "version", "recorded", "source"} <= set(about)
    named = f"{about['agent']}-{about['version']}"  # then `.<scenario>` when there are several
    assert transcript.stem == named or transcript.stem.startswith(named + ".")
