"""The relay over real pipes: every byte in order both ways, whatever the lines hold; the
agent's exit, crash or half-written message reaches the client as it would direct; a client
that stops reading holds up nothing it does not read."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_plans._proxy.relay import Relayed, Rewriter, exit_code, relay
from llm_plans._proxy.upgrade import Upgrade

ECHO = [
    sys.executable,
    "-c",
    "import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)",
]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def through(
    command: list[str], data: bytes, rewriter: Rewriter | None = None
) -> tuple[bytes, int]:
    """What a client that writes `data` and then closes its end reads, and the proxy's code."""
    client_in, to_proxy = os.pipe()
    from_proxy, client_out = os.pipe()
    task = asyncio.create_task(
        relay(command, rewriter or Relayed(), client_in=client_in, client_out=client_out)
    )

    def write() -> None:
        with open(to_proxy, "wb") as pipe:
            pipe.write(data)

    def read() -> bytes:
        with open(from_proxy, "rb") as pipe:
            return pipe.read()

    writer = asyncio.to_thread(write)
    reader = asyncio.create_task(asyncio.to_thread(read))
    await writer
    try:
        code = await asyncio.wait_for(task, 60)
    finally:
        os.close(client_out)  # the reader ends even when the relay failed
        os.close(client_in)
    return await reader, code


LINE = st.one_of(
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")),
    st.builds(
        lambda i, m, p: json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode(),
        st.one_of(st.integers(), st.text(max_size=5)),
        st.sampled_from(["session/prompt", "session/cancel", "session/update", "fs/read"]),
        st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3),
    ),
)


@settings(max_examples=25)
@given(st.lists(LINE, max_size=30), st.booleans(), st.booleans())
def test_every_byte_in_order_through_an_echoing_agent(
    lines: list[bytes], upgrade: bool, last_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    rewriter = Upgrade(ECHO) if upgrade else Relayed()
    out, code = asyncio.run(through(ECHO, data, rewriter))
    assert (out, code) == (data, 0)


def test_ten_megabyte_lines_pass_both_ways_unchanged() -> None:
    text = "x" * (10 * 1024 * 1024)
    update = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "text": text}}
    big = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": update}).encode()
    data = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n' + big + b"\n" + big
    out, code = asyncio.run(through(ECHO, data, Upgrade(ECHO)))
    # The client's initialize gains `plan: {}` on its way to the agent (which echoes it).
    assert out.endswith(b"\n" + big + b"\n" + big)
    assert code == 0
    assert json.loads(out.split(b"\n")[0])["params"]["clientCapabilities"] == {"plan": {}}


def test_an_agent_that_dies_mid_message_leaves_the_client_its_half_and_its_code() -> None:
    half = b'{"jsonrpc":"2.0","id":1,"result":{"stopRea'
    code = f"import sys; sys.stdout.buffer.write({half!r}); sys.stdout.flush(); sys.exit(3)"
    out, status = asyncio.run(through(python(code), b"", Upgrade(["x"])))
    assert (out, status) == (half, 3)


def test_an_agent_killed_by_a_signal_ends_the_proxy_as_a_shell_says() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    assert asyncio.run(through(python(code), b""))[1] == 128 + signal.SIGKILL
    assert exit_code(-15) == 143
    assert exit_code(0) == 0
    assert exit_code(2) == 2


def test_garbage_from_the_agent_passes_as_it_came() -> None:
    garbage = b"\xff\xfe not json \x00\n[[[[[[[[[[" + b"[" * 100_000 + b'\n{"method":1}\n'
    code = f"import sys; sys.stdout.buffer.write({garbage!r})"
    out, status = asyncio.run(through(python(code), b"", Upgrade(["x"])))
    assert (out, status) == (garbage, 0)


def test_a_command_that_is_not_there_is_127() -> None:
    assert asyncio.run(through(["/nonexistent/agent"], b""))[1] == 127


def test_a_client_that_stops_reading_does_not_hold_up_what_it_sends(tmp_path: Path) -> None:
    """The agent floods the client, which reads nothing; the client's next line still gets
    through to the agent, which records it and exits."""
    seen = tmp_path / "seen"
    code = f"""
import sys, threading
def flood():
    try:
        while True:
            line = b'{{"jsonrpc":"2.0","method":"x","params":"' + b"y" * 65536
            sys.stdout.buffer.write(line + b'"}}\\n')
    except Exception:
        pass
threading.Thread(target=flood, daemon=True).start()
line = sys.stdin.buffer.readline()
open({str(seen)!r}, "wb").write(line)
import os; os._exit(0)
"""

    async def scenario() -> bytes:
        client_in, to_proxy = os.pipe()
        from_proxy, client_out = os.pipe()
        task = asyncio.create_task(
            relay(python(code), Upgrade(["x"]), client_in=client_in, client_out=client_out)
        )
        os.write(to_proxy, b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}\n')
        for _ in range(600):
            if seen.exists() and seen.read_bytes():
                break
            await asyncio.sleep(0.05)
        got = seen.read_bytes() if seen.exists() else b""
        os.close(from_proxy)  # the client goes away: the proxy's writes fail and are dropped
        os.close(to_proxy)
        await asyncio.wait_for(task, 60)
        os.close(client_in)
        os.close(client_out)
        return got

    assert asyncio.run(scenario()) == b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}\n'


@pytest.mark.parametrize("rewriter", [Relayed(), Upgrade(["x"])], ids=["relayed", "upgrade"])
def test_interleaved_requests_cancellation_and_permissions_pass_in_order(
    rewriter: Rewriter, tmp_path: Path
) -> None:
    """A turn with requests both ways, a permission round trip and a cancellation mid-turn:
    each side reads exactly what the other wrote, in its order."""
    agent_lines = [
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
        {
            "jsonrpc": "2.0",
            "id": "p1",
            "method": "session/request_permission",
            "params": {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": []},
        },
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": "r1",
            "method": "fs/read_text_file",
            "params": {"sessionId": "s", "path": "/a"},
        },
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}},
    ]
    client_lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {"plan": {}}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": []},
        },
        {"jsonrpc": "2.0", "id": "p1", "result": {"outcome": {"outcome": "cancelled"}}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": "r1", "error": {"code": -32002, "message": "no"}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}},
    ]
    to_agent = b"".join(json.dumps(m).encode() + b"\n" for m in client_lines)
    from_agent = b"".join(json.dumps(m).encode() + b"\n" for m in agent_lines)
    # The agent answers after reading everything, and records what it read in a file.
    seen_at = tmp_path / "seen"
    code = (
        "import sys; data = sys.stdin.buffer.read(); "
        f"sys.stdout.buffer.write({from_agent!r}); open({str(seen_at)!r}, 'wb').write(data)"
    )
    out, status = asyncio.run(through(python(code), to_agent, rewriter))
    assert (out, status) == (from_agent, 0)
    assert seen_at.read_bytes() == to_agent  # the client takes plans: initialize unchanged


def test_a_program_that_cannot_run_is_126(tmp_path: Path) -> None:
    program = tmp_path / "not-a-program"
    program.write_bytes(b"\x7fELF garbage")
    program.chmod(0o755)
    assert asyncio.run(through([str(program)], b""))[1] == 126


def test_an_agent_that_does_not_read_holds_the_client_back_as_a_pipe_would() -> None:
    """What the client writes waits in the proxy only up to a bound: past it, the client's
    writes block, as they would on a pipe to the agent itself."""
    sleeper = python("import time; time.sleep(6)")

    async def scenario() -> int:
        client_in, to_proxy = os.pipe()
        from_proxy, client_out = os.pipe()
        task = asyncio.create_task(
            relay(sleeper, Relayed(), client_in=client_in, client_out=client_out)
        )
        written = 0
        line = b'{"jsonrpc":"2.0","method":"x","params":"' + b"y" * 1000 + b'"}\n'
        os.set_blocking(to_proxy, False)
        deadline = asyncio.get_running_loop().time() + 5
        while asyncio.get_running_loop().time() < deadline and written < 400 * 1024 * 1024:
            try:
                written += os.write(to_proxy, line * 64)
            except BlockingIOError:
                await asyncio.sleep(0.05)
        os.close(to_proxy)
        assert await asyncio.wait_for(task, 60) == 0  # the agent exits in its own time
        for fd in (from_proxy, client_in, client_out):
            os.close(fd)
        return written

    assert asyncio.run(scenario()) < 200 * 1024 * 1024
