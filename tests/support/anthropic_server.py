"""A local stand-in for the Anthropic Messages API, for tools that make their own requests.

Claude Code (which the Claude Agent SDK runs) is a separate program: it cannot take a mock
transport, but it takes `ANTHROPIC_BASE_URL`. This server answers on 127.0.0.1 with streamed
Messages responses in the API's real wire format (built by `wire.message_stream`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from wire_payloads import message, message_stream, sse

Step = list[tuple[str, str, str]] | str  # tool uses (id, name, JSON input), or final text


EMPTY_TEXT = {"type": "text", "text": ""}


def text_stream(text: str) -> bytes:
    start = message([])
    start.update(content=[], stop_reason=None)
    return sse(
        [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            {"type": "message_stop"},
        ],
        named=True,
    )


class ScriptedAPI:
    """Answers the n-th request that offers `tool` with the n-th step (by tool results so far);
    any other request (Claude Code's own side queries) gets a short text."""

    def __init__(self, tool: str, steps: list[Step]) -> None:
        self.tool = tool
        self.steps = steps
        self.requests: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> bytes:
        if self.tool not in [t.get("name") for t in body.get("tools", [])]:
            return text_stream("ok")
        self.requests.append(body)
        done = sum(
            block.get("type") == "tool_result"
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for block in m["content"]
        )
        step = self.steps[min(done, len(self.steps) - 1)]
        return text_stream(step) if isinstance(step, str) else message_stream(step)

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool results of the last request, in order."""
        return [
            block
            for m in self.requests[-1]["messages"]
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if block.get("type") == "tool_result"
        ]


@contextmanager
def serving(api: ScriptedAPI) -> Iterator[str]:
    """Serve `api` on a free local port; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.startswith("/v1/messages") and "count_tokens" not in self.path:
                payload, kind = api.answer(body), "text/event-stream"
            else:
                payload, kind = json.dumps({"input_tokens": 10}).encode(), "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
