"""Real recorded traffic (`../shared/recorded/`, absent from a plain clone: then skipped).

Every recorded stream and body is replayed through the real SDK client on a mocked
transport, its framing kept byte for byte; only its tool calls are rewritten into plan calls
(name and arguments, the argument text split into as many fragments as the recording had).
Each plan call must get exactly one result, under the id the server sent, and the client
must end where the session is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from llm_plans import PlanSession
from llm_plans.providers import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream
from llm_plans.testing import (
    FakeModelAPI,
    RecordingSend,
    anthropic_client,
    client_view,
    openai_client,
)

ROOT = Path(
    os.environ.get("LLM_PLANS_RECORDED_DIR", Path(__file__).parents[3] / "shared" / "recorded")
)
FILES = sorted(
    p
    for p in (ROOT / "providers").rglob("*")
    if p.is_file() and p.suffix in (".json", ".txt", ".sse")
)
NAMES = ("create_plan", "mcp__plans__create_plan")  # plain, and as Claude Code names MCP tools


class Rewriter:
    """Turns each tool call met into a create_plan call with its own plan id."""

    def __init__(self) -> None:
        self.ids: list[str] = []  # the provider ids of the plan calls, in order
        self.plans: dict[Any, str] = {}  # call key -> its new argument text
        self.cuts: dict[Any, list[str]] = {}  # call key -> the fragments still to hand out

    def name(self) -> str:
        return NAMES[len(self.plans) % 2]

    def start(self, key: Any, provider_id: Any, fragments: int) -> str:
        number = len(self.plans)
        steps = [{"content": f"Step {s} of recorded call {number}"} for s in (1, 2)]
        text = json.dumps({"type": "items", "id": f"rec-{number}", "entries": steps})
        self.plans[key] = text
        self.ids.append(provider_id)
        size = -(-len(text) // max(fragments, 1))
        self.cuts[key] = [text[i : i + size] for i in range(0, len(text), size)]
        return text

    def next_fragment(self, key: Any) -> str:
        cuts = self.cuts.get(key)
        return cuts.pop(0) if cuts else ""


# ---- reading and writing the recordings ------------------------------------------------------


def load(path: Path) -> tuple[str, str | dict[str, Any]]:
    """(api, body): api is chat, responses or anthropic; body is SSE text or a JSON body."""
    text = path.read_text()
    if path.suffix == ".json":
        record = json.loads(text)
        if "response" not in record:
            return "chat", record  # a bare chat completion body (vercel-ai's fixtures)
        uri = record["request_uri"]  # a pydantic-ai cassette interaction
        api = "anthropic" if "/messages" in uri else "responses" if "/responses" in uri else "chat"
        response = record["response"]
        if "parsed_body" in response:
            return api, response["parsed_body"]
        return api, response["body"]["string"]
    if path.name.endswith(".chunks.txt"):  # one JSON chunk a line, served as data-only SSE
        lines = [line for line in text.splitlines() if line.strip()]
        first = json.loads(lines[0]).get("type", "")
        api = "responses" if first.startswith("response.") else "chat"
        return api, "".join(f"data: {line}\n\n" for line in lines)
    return ("anthropic" if "event: message_start" in text else "chat"), text


def events(text: str) -> list[Any]:
    return [
        json.loads(line[5:])
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    ]


def rewrite_sse(text: str, rewrite: Any) -> str:
    """Each `data:` line's JSON rewritten; every other byte of the framing kept."""
    out = []
    for line in text.split("\n"):
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            line = "data: " + json.dumps(rewrite(json.loads(line[5:])))
        out.append(line)
    return "\n".join(out)


# ---- per API: which fragments belong to which call -------------------------------------------


def chat_stream(text: str, r: Rewriter) -> str:
    counts: list[int] = []
    for chunk in events(text):  # a delta with a name starts a call; the rest continue it
        for choice in chunk.get("choices") or []:
            for delta in (choice.get("delta") or {}).get("tool_calls") or []:
                function = delta.get("function") or {}
                if function.get("name"):
                    counts.append(0)
                if function.get("arguments"):
                    counts[-1] += 1
    seen = iter(range(len(counts)))
    current: list[int] = []

    def one(chunk: dict[str, Any]) -> dict[str, Any]:
        for choice in chunk.get("choices") or []:
            for delta in (choice.get("delta") or {}).get("tool_calls") or []:
                function = delta.get("function") or {}
                if function.get("name"):
                    current.append(next(seen))
                    function["name"] = r.name()
                    r.start(current[-1], delta.get("id"), counts[current[-1]])
                if function.get("arguments"):
                    function["arguments"] = r.next_fragment(current[-1])
        return chunk

    return rewrite_sse(text, one)


def responses_stream(text: str, r: Rewriter) -> str:
    counts: dict[str, int] = {}
    for event in events(text):
        if event.get("type") == "response.function_call_arguments.delta" and event.get("delta"):
            counts[event["item_id"]] = counts.get(event["item_id"], 0) + 1

    def item(it: dict[str, Any]) -> None:
        if it.get("type") != "function_call":
            return
        if it["id"] not in r.plans:
            it["name"] = r.name()
            r.start(it["id"], it.get("call_id"), counts.get(it["id"], 0))
        it["name"] = NAMES[list(r.plans).index(it["id"]) % 2]
        if it.get("arguments"):
            it["arguments"] = r.plans[it["id"]]

    def one(event: dict[str, Any]) -> dict[str, Any]:
        kind = event.get("type")
        if "item" in event:
            item(event["item"])
        elif kind == "response.function_call_arguments.delta" and event.get("delta"):
            event["delta"] = r.next_fragment(event["item_id"])
        elif kind == "response.function_call_arguments.done":
            event["arguments"] = r.plans[event["item_id"]]
        for it in (event.get("response") or {}).get("output") or []:
            item(it)
        return event

    return rewrite_sse(text, one)


def anthropic_stream(text: str, r: Rewriter) -> str:
    counts: dict[int, int] = {}
    for event in events(text):
        delta = event.get("delta") or {}
        if delta.get("type") == "input_json_delta" and delta.get("partial_json"):
            counts[event["index"]] = counts.get(event["index"], 0) + 1

    def one(event: dict[str, Any]) -> dict[str, Any]:
        block = event.get("content_block") or {}
        delta = event.get("delta") or {}
        if block.get("type") == "tool_use":
            block["name"] = r.name()
            r.start(event["index"], block["id"], counts.get(event["index"], 0))
        elif delta.get("partial_json") and event["index"] in r.plans:
            delta["partial_json"] = r.next_fragment(event["index"])
        return event

    return rewrite_sse(text, one)


def calls_in_body(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    if api == "chat":
        return [c for ch in body["choices"] for c in ch["message"].get("tool_calls") or []]
    if api == "responses":
        return [i for i in body["output"] if i.get("type") == "function_call"]
    return [b for b in body["content"] if b.get("type") == "tool_use"]


def rewrite_body(api: str, body: dict[str, Any], r: Rewriter) -> None:
    for n, call in enumerate(calls_in_body(api, body)):
        provider_id = call.get("call_id" if api == "responses" else "id")
        text = r.start(n, provider_id, 1)
        if api == "chat":
            call["function"].update(name=NAMES[n % 2], arguments=text)
        elif api == "responses":
            call.update(name=NAMES[n % 2], arguments=text)
        else:
            call.update(name=NAMES[n % 2], input=json.loads(text))


# ---- the replay ---------------------------------------------------------------------------


RESULT_ID = {"chat": "tool_call_id", "responses": "call_id", "anthropic": "tool_use_id"}


async def replay_stream(api: str, text: str, session: PlanSession) -> list[dict[str, Any]]:
    api_server = FakeModelAPI(text.encode())
    if api == "anthropic":
        client = anthropic_client(api_server)
        stream: Any = await client.messages.create(
            model="m", max_tokens=99, messages=[], stream=True
        )
        adapter: Any = AnthropicStream(session)
    else:
        openai = openai_client(api_server)
        if api == "chat":
            stream = await openai.chat.completions.create(model="m", messages=[], stream=True)
            adapter = OpenAIChatStream(session)
        else:
            stream = await openai.responses.create(model="m", input="x", stream=True)
            adapter = OpenAIResponsesStream(session)
    async with adapter:
        async for event in stream:
            await adapter.on_event(event)
        return await adapter.finish()  # type: ignore[no-any-return]


async def replay_body(api: str, body: dict[str, Any], session: PlanSession) -> list[Any]:
    api_server = FakeModelAPI(body)
    if api == "anthropic":
        message = await anthropic_client(api_server).messages.create(
            model="m", max_tokens=99, messages=[]
        )
        calls: list[Any] = list(message.content)
    elif api == "responses":
        calls = list(
            (await openai_client(api_server).responses.create(model="m", input="x")).output
        )
    else:
        completion = await openai_client(api_server).chat.completions.create(model="m", messages=[])
        calls = [c for ch in completion.choices for c in ch.message.tool_calls or []]
    return [r for r in [await session.handle(c) for c in calls] if r is not None]


@pytest.mark.skipif(
    not FILES,
    reason="the recorded model API traffic is kept outside this repository and CI provides it; "
    "set LLM_PLANS_RECORDED_DIR to a folder of it to replay it here",
)
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT / "providers")))
async def test_recorded_traffic(path: Path) -> None:
    api, body = load(path)
    r = Rewriter()
    send = RecordingSend()
    session = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    if isinstance(body, str):
        rewrite = {"chat": chat_stream, "responses": responses_stream}.get(api, anthropic_stream)
        results = await replay_stream(api, rewrite(body, r), session)
    else:
        rewrite_body(api, body, r)
        results = await replay_body(api, body, session)
    assert r.ids, "the recording has no tool call"
    assert [result[RESULT_ID[api]] for result in results] == r.ids
    outputs = [result.get("content", result.get("output")) for result in results]
    assert all(o is not None and o.startswith('Created plan "rec-') for o in outputs), outputs
    assert list(session.plans) == [f"rec-{n}" for n in range(len(r.ids))]
    shown = {
        k: v.model_dump(mode="json", by_alias=True, exclude_none=True)
        for k, v in session.plans.items()
    }
    assert client_view(send.updates) == shown
