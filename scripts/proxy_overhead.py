"""What `llm-plans proxy` costs a turn: the same agent traffic read by a client directly and
through the proxy (relaying only, and upgrading), interleaved, medians over rounds.

    python scripts/proxy_overhead.py [--lines 20000] [--rounds 5]

The agent is a small Python program that writes a recorded turn's updates (message chunks,
tool cards, opencode's todowrite card with its plan) as fast as the pipe takes them; the
client is this script, reading until the agent exits. Each round runs the three routes in a
rotating order, each with an empty turn too: the table gives each route's start and stop
(the empty turn), the time relaying the turn added, per update, and as a multiple of the
direct route's. Nothing is published: run it on a quiet machine, since the proxy is a
second process on the same cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LLM_PLANS = str(Path(sys.executable).parent / "llm-plans")
INIT = {"protocolVersion": 1, "clientCapabilities": {"plan": {}}}


def traffic(lines: int) -> bytes:
    """A turn's agent side: initialize's answer, then `lines` updates in opencode's shapes,
    one todowrite card with a 4-step list in every 50."""
    todos = [{"content": f"Step {n}", "status": "pending", "priority": "medium"} for n in range(4)]
    out = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"protocolVersion": 1, "agentInfo": {"name": "OpenCode"}},
        }
    ]
    for n in range(lines):
        if n % 50 == 0:
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"call_{n}",
                "status": "in_progress",
                "title": "todowrite",
                "rawInput": {"todos": todos},
            }
            first = {"sessionUpdate": "tool_call", "toolCallId": f"call_{n}", "title": "todowrite"}
            out.append(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "s", "update": first},
                }
            )
        else:
            text = {"type": "text", "text": f"chunk {n} of the answer, about as long as a model's "}
            update = {"sessionUpdate": "agent_message_chunk", "content": text}
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": update},
            }
        )
    return b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in out)


def agent_command(path: Path) -> list[str]:
    code = (
        "import sys; sys.stdin.buffer.readline(); "
        f"sys.stdout.buffer.write(open({str(path)!r}, 'rb').read())"
    )
    return [sys.executable, "-c", code]


def timed(command: list[str]) -> tuple[float, int]:
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    start = time.perf_counter()
    out = subprocess.run(command, input=init.encode() + b"\n", capture_output=True, check=True)
    return time.perf_counter() - start, out.stdout.count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = {"empty": 0, "turn": args.lines}
    with tempfile.TemporaryDirectory() as tmp:
        agents = {}
        for size, lines in sizes.items():
            path = Path(tmp) / f"{size}.ndjson"
            path.write_bytes(traffic(lines))
            agents[size] = agent_command(path)
        routes = {
            "direct": [],
            "proxy --no-upgrade": [LLM_PLANS, "proxy", "--no-upgrade", "--"],
            "proxy (upgrading)": [LLM_PLANS, "proxy", "--"],
        }
        times: dict[tuple[str, str], list[float]] = {}
        counts: dict[str, int] = {}
        runs = [(route, size) for route in routes for size in sizes]
        for round_ in range(args.rounds):
            shift = round_ % len(runs)
            for route, size in runs[shift:] + runs[:shift]:
                seconds, lines_out = timed(routes[route] + agents[size])
                times.setdefault((route, size), []).append(seconds)
                if size == "turn":
                    counts[route] = lines_out
    median = {key: statistics.median(values) for key, values in times.items()}
    relay = {route: median[route, "turn"] - median[route, "empty"] for route in routes}
    print(f"{args.lines} updates, {args.rounds} rounds, interleaved; medians in seconds:")
    print("| route | start and stop | relaying the turn | µs per update | x direct | lines out |")
    print("| --- | --- | --- | --- | --- | --- |")
    for route in routes:
        print(
            f"| {route} | {median[route, 'empty']:.3f} | {relay[route]:.3f} | "
            f"{relay[route] / args.lines * 1e6:.1f} | {relay[route] / relay['direct']:.1f} | "
            f"{counts[route]} |"
        )


if __name__ == "__main__":
    main()
