"""Loopback stand-ins for the model APIs of real coding agents, scripted to make each agent
call its plan tool once.

A real agent (opencode, Claude Code under claude-agent-acp) is a separate program that makes
its own HTTP requests: it takes a base URL, not a mock transport. These stand-ins answer it
on 127.0.0.1 in the APIs' real streamed wire formats, built by `llm_plans.testing`'s payload
builders:

- `ChatScript` and `serving_chat`: OpenAI Chat Completions (opencode's `openai-compatible`
  provider). The Anthropic side reuses `anthropic_server.ScriptedAPI` and `serving`; this
  module adds only Claude Code's script (`claude_code_script`).
- The scripts decide from each request alone: the main conversation is told which step it is
  at by the tool results it already holds; the agents' side requests (a session title) get a
  short text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from anthropic_server import ScriptedAPI

from llm_plans.testing import chat_chunk, chat_chunks, sse

OPENCODE_TODOS: dict[str, Any] = {
    "todos": [
        {"content": "Read the code", "status": "completed", "priority": "high"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        {"content": "Write docs", "status": "cancelled", "priority": "low"},
        {"content": "Run the tests", "status": "pending", "priority": "medium"},
    ]
}
"""opencode's `todowrite` arguments: every status, a cancelled step and three priorities."""

CLAUDE_TODOS: dict[str, Any] = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
}
"""Claude Code's `TodoWrite` arguments."""

PLAN_TEXT = "# Plan\n\n1. Read\n2. Fix"
"""The Markdown plan Claude Code proposes with `ExitPlanMode` in plan mode."""

FINAL_TEXT = "Done: I wrote the plan and fixed the bug."
"""The main conversation's last answer, once the plan tool's result is in."""

SIDE_TEXT = "Plan and fix the bug"
"""The answer to a request without tools (the session title opencode asks for)."""

Step = list[tuple[str, str, str]] | str
"""One answer of a script: tool calls `(id, name, JSON arguments)`, or a final text."""


# ---- OpenAI Chat Completions ----------------------------------------------------------------


def chat_text_stream(text: str, *, usage: bool = False) -> bytes:
    """A streamed chat completion that answers `text` and stops.

    Args:
        text: The assistant's whole answer.
        usage: End with the usage chunk a request with `stream_options.include_usage` gets.
    """
    chunks = [
        chat_chunk({"role": "assistant", "content": ""}),
        chat_chunk({"content": text}),
        chat_chunk({}, "stop"),
    ]
    return sse(chunks + ([_usage_chunk()] if usage else []), named=False)


def _usage_chunk() -> dict[str, Any]:
    chunk = chat_chunk({})
    chunk["choices"] = []
    chunk["usage"] = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    return chunk


class ChatScript:
    """An OpenAI Chat Completions model that plays `steps` to the main conversation.

    A request that offers `tool` is the main conversation: it gets the step numbered by the
    `role: "tool"` messages it holds (the last step once past the end). Any other request
    gets `SIDE_TEXT`. Every request is streamed, as opencode asks.

    Args:
        tool: The tool whose presence marks the main conversation.
        steps: What to answer at each step: tool calls, or a final text.
    """

    def __init__(self, tool: str, steps: list[Step]) -> None:
        self.tool = tool
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        """Every request's JSON body, in order."""

    def answer(self, body: Mapping[str, Any]) -> bytes:
        """The SSE body for one `POST /chat/completions` request with JSON `body`."""
        self.requests.append(dict(body))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        if self.tool not in tools:
            return chat_text_stream(SIDE_TEXT, usage=usage)
        done = sum(m.get("role") == "tool" for m in body.get("messages") or [])
        step = self.steps[min(done, len(self.steps) - 1)]
        if isinstance(step, str):
            return chat_text_stream(step, usage=usage)
        chunks = chat_chunks(step)
        return sse(chunks + ([_usage_chunk()] if usage else []), named=False)


def opencode_script() -> ChatScript:
    """opencode's turn: one `todowrite` call with `OPENCODE_TODOS`, then `FINAL_TEXT`."""
    call = ("call_todos", "todowrite", json.dumps(OPENCODE_TODOS))
    return ChatScript("todowrite", [[call], FINAL_TEXT])


@contextmanager
def serving_chat(api: ChatScript) -> Iterator[str]:
    """Serve `api` on a free loopback port; yields the base URL (ending in `/v1`) that an
    OpenAI-compatible client appends `/chat/completions` to. `GET /v1/models` lists one
    model, `m`; any other route is a 404."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def _send(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _not_found(self) -> None:
            error = {"error": {"message": f"no route {self.command} {self.path}"}}
            self._send(404, "application/json", json.dumps(error).encode())

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/") == "/v1/models":
                models = {"object": "list", "data": [{"id": "m", "object": "model"}]}
                self._send(200, "application/json", json.dumps(models).encode())
            else:
                self._not_found()

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.split("?")[0].rstrip("/") == "/v1/chat/completions":
                self._send(200, "text/event-stream", api.answer(body))
            else:
                self._not_found()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def opencode_config(base_url: str) -> str:
    """`OPENCODE_CONFIG_CONTENT` for a provider `fake` at `base_url` whose one model, `m`,
    calls tools; no autoupdate, no sharing."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake",
        "options": {"baseURL": base_url, "apiKey": "x"},
        "models": {
            "m": {"name": "m", "tool_call": True, "limit": {"context": 100000, "output": 4096}}
        },
    }
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": provider},
        "model": "fake/m",
        "small_model": "fake/m",
        "autoupdate": False,
        "share": "disabled",
    }
    return json.dumps(config)


# ---- Anthropic Messages (Claude Code) -------------------------------------------------------


def claude_code_script(tool: str, arguments: Mapping[str, Any]) -> ScriptedAPI:
    """Claude Code's turn: load `tool` with ToolSearch, call it with `arguments`, then say
    `FINAL_TEXT`; serve it with `anthropic_server.serving` (the base URL is
    `ANTHROPIC_BASE_URL`).

    Claude Code 2.1 defers its plan tools (`TodoWrite`, `ExitPlanMode`) behind ToolSearch: a
    deferred tool has no schema until a `select:` query loads it, and only the always-loaded
    ToolSearch marks the main conversation. Claude Code's side requests (the session title)
    offer no tools and get a short text.

    Args:
        tool: The deferred tool to call (`TodoWrite`, or `ExitPlanMode` in plan mode).
        arguments: Its input.
    """
    search = json.dumps({"query": f"select:{tool}", "max_results": 5})
    return ScriptedAPI(
        "ToolSearch",
        [
            [("toolu_search", "ToolSearch", search)],
            [("toolu_plan", tool, json.dumps(arguments))],
            FINAL_TEXT,
        ],
    )
