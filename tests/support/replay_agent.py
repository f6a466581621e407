"""A fake ACP agent that replays a transcript: `python replay_agent.py TRANSCRIPT [SEEN]`.

A transcript (tests/proxy/transcripts/) holds one JSON record per line: a `meta` record naming
the agent, its version and how the transcript was made, then every JSON-RPC line of one
session in the order it passed, each as `{"dir": "client->agent" | "agent->client", "line":
<the raw line>}`.

The replay writes the agent's lines in that order. Before each line the client sent, it
reads from stdin until the client sends the same method (or, for a client's answer, any
response), so its answers follow the client's requests as the real agent's did. It answers a
request the transcript does not have with a JSON-RPC "method not found" error, and gives its
responses the ids the client used, so a real client (acpx, the ACP SDKs) can drive it. Lines
go out byte for byte as recorded wherever the ids agree. SEEN, when given, gets every line it
read. At the end of the transcript it reads stdin to its end and exits 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, BinaryIO


def records(path: Path) -> list[dict[str, Any]]:
    """The transcript's line records, in order (its meta record left out)."""
    lines = path.read_text().splitlines()
    return [r for r in map(json.loads, lines) if "dir" in r]


def meta(path: Path) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(path.read_text().splitlines()[0])["meta"]
    return first


def _key(request_id: object) -> str:
    return json.dumps(request_id)


def _write(out: BinaryIO, data: bytes) -> None:
    out.write(data + b"\n")
    out.flush()


def main(path: Path, seen: Path | None) -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    log = seen.open("wb") if seen else None
    ids: dict[str, Any] = {}  # a request's id in the transcript: the client's id for it
    for record in records(path):
        message = json.loads(record["line"])
        if record["dir"] == "agent->client":
            if "method" not in message and _key(message.get("id")) in ids:
                client_id = ids[_key(message["id"])]
                if client_id != message["id"]:
                    _write(stdout, json.dumps({**message, "id": client_id}).encode())
                    continue
            _write(stdout, record["line"].encode())
            continue
        want = message.get("method")  # None: the client's answer to a request of ours
        while True:
            line = stdin.readline()
            if not line:
                return 0
            if log:
                log.write(line)
                log.flush()
            try:
                got = json.loads(line)
            except ValueError:
                continue
            if not isinstance(got, dict):
                continue
            if got.get("method") == want if want else ("id" in got and "method" not in got):
                break
            if "method" in got and "id" in got:  # a request this transcript does not have
                error = {"code": -32601, "message": f"not in the transcript: {got['method']}"}
                _write(
                    stdout, json.dumps({"jsonrpc": "2.0", "id": got["id"], "error": error}).encode()
                )
        if want and "id" in message:
            ids[_key(message["id"])] = got.get("id")
    while stdin.read(65536):
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None))
