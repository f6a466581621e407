"""The example agent's model backends and retries, against the real SDKs on mock transports."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx2
import openai
import pytest
from coding_agent_lib.models import Anthropic, Backend, OpenAIChat, OpenAIResponses
from coding_agent_lib.retries import endpoint, is_transient, retry_after, with_retries
from hypothesis import given, settings
from hypothesis import strategies as st
from providers.test_openai import CREATE, STEPS
from tenacity import wait_none
from wire_payloads import (
    Recorder,
    anthropic_client,
    chat_stream,
    message_stream,
    openai_client,
    responses_stream,
    sse,
)

from llm_plans import PlanSession
from llm_plans.testing import (
    Broken,
    RecordingSend,
    anthropic_events,
    chat_chunk,
    client_view,
    responses_events,
)

READ = ("call_r", "read_file", '{"path": "calc.py"}')


def backends(http: Recorder) -> dict[str, Backend]:
    return {
        "chat": OpenAIChat(openai_client(http), "gpt-4.1", "system"),
        "responses": OpenAIResponses(openai_client(http), "gpt-4.1", "system"),
        "anthropic": Anthropic(anthropic_client(http), "claude-sonnet-5", "system"),
    }


def streams(kind: str) -> tuple[bytes, bytes]:
    calls = [("call_p", "create_plan", CREATE), READ]
    if kind == "chat":
        return chat_stream(calls), chat_stream([], finish="stop")
    if kind == "responses":
        return responses_stream(calls), responses_stream([])
    return message_stream(calls), message_stream([], stop="end_turn")


@pytest.mark.parametrize("kind", ["chat", "responses", "anthropic"])
async def test_backend_round_trip(kind: str) -> None:
    http = Recorder(*streams(kind))
    backend = backends(http)[kind]
    send = RecordingSend()
    plans = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    backend.add_user("Fix calc.mean")
    reply = await backend.reply(plans, on_text=_ignore)
    assert [u.name for u in reply.uses] == ["create_plan", "read_file"]
    assert list(reply.plan_results) == ["call_p"]
    assert list(plans.plans) == ["plan-1"]
    assert len(send.sent) > 1  # previews, then the final
    results = [reply.plan_results["call_p"], backend.result(reply.uses[1], "x = 1", True)]
    backend.add_results(results)
    await backend.reply(plans, on_text=_ignore)
    second = http.requests[1]
    sent = json.dumps(second)
    assert "call_r" in sent
    assert "x = 1" in sent
    assert 'Created plan \\"plan-1\\"' in sent
    names = [t.get("name") or t.get("function", {}).get("name") for t in second["tools"]]
    assert names[:3] == ["create_plan", "update_plan", "remove_plan"]
    assert "run_command" in names


async def _ignore(_text: str) -> None:
    return None


async def test_transient_errors_are_retried_honouring_retry_after() -> None:
    attempts: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        attempts.append(1)
        if len(attempts) == 1:
            return httpx2.Response(
                429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}}
            )
        if len(attempts) == 2:
            return httpx2.Response(
                529,
                json={
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": "Overloaded"},
                },
            )
        return httpx2.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    client = anthropic_client(handler)
    message = await with_retries(
        lambda: client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        ),
        wait=_zero_or_retry_after,
    )
    assert message.stop_reason == "end_turn"
    assert len(attempts) == 3


def _zero_or_retry_after(state: Any) -> float:
    asked = retry_after(state.outcome.exception())
    return 0.0 if asked is None else asked


async def test_other_errors_are_not_retried() -> None:
    attempts: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        attempts.append(1)
        return httpx2.Response(401, json={"error": {"message": "bad key"}})

    client = openai_client(handler)
    with pytest.raises(Exception, match="bad key"):
        await with_retries(
            lambda: client.chat.completions.create(model="m", messages=[]), wait=wait_none()
        )
    assert len(attempts) == 1


def test_retry_after_parsing() -> None:
    class Failure(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = httpx2.Response(429, headers=headers)

    assert retry_after(Failure({"retry-after": "3"})) == 3.0
    assert retry_after(Failure({"retry-after-ms": "1500"})) == 1.5
    assert retry_after(Failure({"retry-after": "9999"})) == 60.0
    assert retry_after(Failure({})) is None
    assert not is_transient(ValueError("x"))


async def test_each_wait_is_announced() -> None:
    attempts: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        attempts.append(1)
        if len(attempts) < 3:
            return httpx2.Response(503, json={"error": {"message": "down"}})
        return httpx2.Response(401, json={"error": {"message": "bad key"}})

    client = openai_client(handler)
    heard: list[str] = []

    async def on_retry(text: str) -> None:
        heard.append(text)

    with pytest.raises(Exception, match="bad key") as failure:
        await with_retries(
            lambda: client.chat.completions.create(model="m", messages=[]),
            wait=wait_none(),
            on_retry=on_retry,
        )
    assert heard == [
        "model API answered HTTP 503, retrying in 0 s (2/5)\n",
        "model API answered HTTP 503, retrying in 0 s (3/5)\n",
    ]
    assert endpoint(failure.value) == "https://api.openai.com/v1/chat/completions"


@pytest.mark.parametrize("kind", ["chat", "responses", "anthropic"])
async def test_a_refusal_reaches_the_model_unchanged(kind: str) -> None:
    http = Recorder(*streams(kind))
    backend = backends(http)[kind]
    plans = PlanSession(RecordingSend(), session_id="s", client_capabilities={"plan": {}})
    backend.add_user("Fix calc.mean")
    reply = await backend.reply(plans, on_text=_ignore)
    refusal = "The user declined writing calc.py; it is unchanged. Ask them how to proceed."
    backend.add_results(
        [reply.plan_results["call_p"], backend.result(reply.uses[1], refusal, False)]
    )
    await backend.reply(plans, on_text=_ignore)
    assert refusal in json.dumps(http.requests[1])
    if kind == "anthropic":
        results = http.requests[1]["messages"][-1]["content"]
        assert results[-1] == {
            "type": "tool_result",
            "tool_use_id": "call_r",
            "content": refusal,
            "is_error": True,
        }


# ---- replies that do not finish -------------------------------------------------------------

PLAN = json.dumps({**json.loads(CREATE), "id": "plan-1"})
SSE = {"content-type": "text/event-stream"}


def plan_stream(kind: str) -> bytes:
    """A reply whose one call creates plan-1."""
    calls = [("call_p", "create_plan", PLAN)]
    if kind == "chat":
        return chat_stream(calls)
    if kind == "responses":
        return responses_stream(calls)
    return message_stream(calls)


def half(body: bytes) -> int:
    """Half of a stream's events: well into the plan call's arguments."""
    return len(body.split(b"\n\n")) // 2


class StallingAPI(Recorder):
    """Serves the first `after` events of `stalled`, then nothing more, as a model API that
    stops sending; later requests get `bodies` as usual."""

    def __init__(self, stalled: bytes, after: int, *bodies: Any) -> None:
        super().__init__(*bodies)
        self.stalled: tuple[bytes, int] | None = (stalled, after)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if self.stalled is None:
            return super().__call__(request)
        body, after = self.stalled
        self.stalled = None
        self.requests.append(json.loads(request.content))
        return httpx2.Response(200, content=_stall(body, after), headers=SSE)


async def _stall(body: bytes, after: int) -> Any:
    for event in body.split(b"\n\n")[:after]:
        yield event + b"\n\n"
    await asyncio.Event().wait()


def backend_on(kind: str, handler: Any) -> Backend:
    if kind == "anthropic":
        return Anthropic(anthropic_client(handler), "claude-sonnet-5", "system")
    if kind == "responses":
        return OpenAIResponses(openai_client(handler), "gpt-4.1", "system")
    return OpenAIChat(openai_client(handler), "gpt-4.1", "system")


async def _reuse_the_id(backend: Backend, plans: PlanSession, send: RecordingSend) -> None:
    """The next reply creates plan-1 again, and it works: the aborted call holds nothing."""
    backend.add_user("plan again")
    reply = await backend.reply(plans, on_text=_ignore)
    assert '"ok": false' not in json.dumps(reply.plan_results)
    assert list(plans.plans) == ["plan-1"]
    view = client_view(send.updates)
    assert list(view) == ["plan-1"]
    assert [e["content"] for e in view["plan-1"]["entries"]] == STEPS


@pytest.mark.parametrize("kind", ["chat", "responses", "anthropic"])
async def test_a_broken_stream_takes_back_its_half_written_plan(kind: str) -> None:
    body = plan_stream(kind)
    api = Recorder(Broken(body, after=half(body)), plan_stream(kind))
    backend = backend_on(kind, api)
    send = RecordingSend()
    plans = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    backend.add_user("plan it")
    # The OpenAI SDK wraps the dropped connection in its own error; Anthropic's lets it through.
    with pytest.raises((httpx2.RemoteProtocolError, openai.APIConnectionError)):
        await backend.reply(plans, on_text=_ignore)
    assert any(u["sessionUpdate"] == "plan_update" for u in send.updates)  # a preview showed
    assert client_view(send.updates) == {}  # and was taken back
    assert dict(plans.plans) == {}
    await _reuse_the_id(backend, plans, send)


@pytest.mark.parametrize("kind", ["chat", "responses", "anthropic"])
async def test_a_cancelled_reply_takes_back_its_half_written_plan(kind: str) -> None:
    body = plan_stream(kind)
    api = StallingAPI(body, half(body), plan_stream(kind))
    backend = backend_on(kind, api)
    send = RecordingSend()
    plans = PlanSession(send, session_id="s", client_capabilities={"plan": {}}, stream_interval=0)
    backend.add_user("plan it")
    reply = asyncio.ensure_future(backend.reply(plans, on_text=_ignore))
    while not send.updates:  # the model has written part of the plan, and stalls
        await asyncio.sleep(0.001)
    reply.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reply
    assert client_view(send.updates) == {}
    assert dict(plans.plans) == {}
    await _reuse_the_id(backend, plans, send)


# ---- the calls of a reply are the ones the library told apart ---------------------------------


async def _round_trip(http: Recorder) -> tuple[Any, dict[str, Any]]:
    """A reply, results for its calls as the agent loop makes them, and the next request."""
    backend = OpenAIChat(openai_client(http), "gemini-2.5-flash", "system")
    plans = PlanSession(RecordingSend(), session_id="s", client_capabilities={"plan": {}})
    backend.add_user("Fix calc.mean")
    reply = await backend.reply(plans, on_text=_ignore)
    done = dict(reply.plan_results)
    for use in reply.uses:
        done.setdefault(use.id, backend.result(use, f"ran {use.id}", True))
    backend.add_results([done[u.id] for u in reply.uses])
    await backend.reply(plans, on_text=_ignore)
    return reply, http.requests[1]


def _sent_back(request: dict[str, Any]) -> tuple[list[tuple[str, str, str]], list[str]]:
    """The calls of the assistant message sent back, and the ids its tool results answer."""
    [assistant] = [m for m in request["messages"] if m["role"] == "assistant"]
    calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in assistant.get("tool_calls", [])
    ]
    return calls, [m["tool_call_id"] for m in request["messages"] if m["role"] == "tool"]


async def test_parallel_calls_at_index_0_with_distinct_ids_stay_apart() -> None:
    # Gemini's and Ollama's compatible endpoints: every parallel call at index 0, each whole
    # in one delta with its own id.
    calls = [("call_p", "create_plan", CREATE), READ]
    chunks = [chat_chunk({"role": "assistant", "content": None})]
    for cid, name, args in calls:
        call = {"index": 0, "id": cid, "type": "function"}
        call["function"] = {"name": name, "arguments": args}
        chunks.append(chat_chunk({"tool_calls": [call]}))
    chunks.append(chat_chunk({}, "tool_calls"))
    http = Recorder(sse(chunks), chat_stream([], finish="stop"))
    reply, request = await _round_trip(http)
    sent, answered = _sent_back(request)
    assert sent == calls
    assert answered == ["call_p", "call_r"]
    assert reply.plan_results["call_p"]["content"].startswith("Created plan")


def _call_deltas(
    number: int, call: tuple[str, str, str], style: str, cuts: list[int]
) -> list[dict[str, Any]]:
    """One call's tool call deltas: `openai` gives the id and its own index on the first delta
    only; `zero` puts every call at index 0 and repeats the id (Ollama, Gemini); `zero_first`
    puts it at index 0 with the id on the first delta only."""
    cid, name, args = call
    bounds = sorted({0, len(args), *(c % (len(args) + 1) for c in cuts)})
    parts = [args[a:b] for a, b in itertools.pairwise(bounds)]
    index = number + 1 if style == "openai" else 0
    out: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        delta: dict[str, Any] = {"index": index, "function": {"arguments": part}}
        if n == 0:
            delta.update(id=cid, type="function")
            delta["function"]["name"] = name
        elif style == "zero":
            delta["id"] = cid
        out.append(delta)
    return out


TOOLS = [
    ("create_plan", CREATE),
    ("read_file", '{"path": "calc.py"}'),
    ("search", '{"pattern": "def mean", "path": "."}'),
    ("update_plan", '{"plan_id": "plan-1", "status": "completed", "entry": 1}'),
]


@settings(max_examples=100)  # two SDK round trips each: the CI profile's 500 take 20 s
@given(
    drawn=st.lists(
        st.tuples(
            st.sampled_from(TOOLS),
            st.sampled_from(["openai", "zero", "zero_first"]),
            st.lists(st.integers(0, 200), max_size=6),
        ),
        min_size=1,
        max_size=4,
    ),
    order=st.randoms(use_true_random=False),
    per_chunk=st.integers(1, 3),
)
async def test_any_fragmentation_and_interleaving_keeps_each_call_whole(
    drawn: list[tuple[tuple[str, str], str, list[int]]], order: Any, per_chunk: int
) -> None:
    calls = [(f"call_{n}", name, args) for n, ((name, args), _, _) in enumerate(drawn)]
    # Calls keyed by their own index may interleave; those at index 0 come one after another,
    # as no server interleaves calls it cannot tell apart but by id.
    queues = [
        _call_deltas(n, call, style, cuts)
        for n, (call, (_, style, cuts)) in enumerate(zip(calls, drawn, strict=True))
    ]
    deltas: list[dict[str, Any]] = []
    started: set[int] = set()
    while any(queues):
        open_zero = [n for n in started if queues[n] and drawn[n][1] != "openai"]
        ready = open_zero or [n for n, q in enumerate(queues) if q]
        # Calls begin in order, so the order sent back is the order they were drawn.
        ready = [n for n in ready if n in started or n == len(started)]
        n = order.choice(ready)
        started.add(n)
        deltas.append(queues[n].pop(0))
    chunks = [chat_chunk({"role": "assistant", "content": None})]
    for at in range(0, len(deltas), per_chunk):
        chunks.append(chat_chunk({"tool_calls": deltas[at : at + per_chunk]}))
    chunks.append(chat_chunk({}, "tool_calls"))
    http = Recorder(sse(chunks), chat_stream([], finish="stop"))
    reply, request = await _round_trip(http)
    sent, answered = _sent_back(request)
    assert sent == calls
    assert answered == [c[0] for c in calls]
    plan_calls = [cid for cid, name, _ in calls if name.endswith("_plan")]
    assert sorted(reply.plan_results) == sorted(plan_calls)


async def test_responses_calls_only_in_the_completed_output_are_sent_back() -> None:
    # Servers that skip `output_item.done`: the adapter finishes the calls from
    # `response.completed`, so the history and the results come from there too.
    calls = [("call_p", "create_plan", CREATE), READ]
    events = [e for e in responses_events(calls) if e["type"] != "response.output_item.done"]
    http = Recorder(sse(events), responses_stream([]))
    backend = OpenAIResponses(openai_client(http), "gpt-4.1", "system")
    plans = PlanSession(RecordingSend(), session_id="s", client_capabilities={"plan": {}})
    backend.add_user("Fix calc.mean")
    reply = await backend.reply(plans, on_text=_ignore)
    assert [(u.id, u.name, u.arguments) for u in reply.uses] == calls
    results = [reply.plan_results["call_p"], backend.result(reply.uses[1], "x = 1", True)]
    backend.add_results(results)
    await backend.reply(plans, on_text=_ignore)
    items = http.requests[1]["input"]
    assert [i["call_id"] for i in items if i.get("type") == "function_call"] == ["call_p", "call_r"]
    answered = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
    assert answered == ["call_p", "call_r"]


async def test_anthropic_input_given_whole_at_the_block_start_is_the_input() -> None:
    # Gateways may send a tool use's whole input in `content_block_start`, with no deltas:
    # the adapter applies that input, so the agent runs and sends back the same.
    calls = [("call_p", "create_plan", json.loads(CREATE)), ("call_r", "read_file", {"path": "a"})]
    events = [
        e
        for e in anthropic_events([(c, n, "") for c, n, _ in calls])
        if e["type"] != "content_block_delta"
    ]
    for event in events:
        if event["type"] == "content_block_start":
            event["content_block"]["input"] = calls[event["index"]][2]
    http = Recorder(sse(events), message_stream([], stop="end_turn"))
    backend = Anthropic(anthropic_client(http), "claude-sonnet-5", "system")
    plans = PlanSession(RecordingSend(), session_id="s", client_capabilities={"plan": {}})
    backend.add_user("Fix calc.mean")
    reply = await backend.reply(plans, on_text=_ignore)
    assert [(u.id, u.name, json.loads(u.arguments)) for u in reply.uses] == calls
    assert reply.plan_results["call_p"]["content"].startswith("Created plan")
    backend.add_results([reply.plan_results["call_p"], backend.result(reply.uses[1], "x", True)])
    await backend.reply(plans, on_text=_ignore)
    sent = http.requests[1]["messages"][1]["content"]
    assert [(b["id"], b["name"], b["input"]) for b in sent] == calls
