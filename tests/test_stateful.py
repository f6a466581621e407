"""A state machine of a whole session: plain and streamed calls, broken pipes, failing commits.

Each run drives one `PlanSession` (in one of the five wire forms) through up to 25 steps of
valid, repairable and hostile calls, streamed calls fed fragment by fragment, aborts, a send
that fails and heals, an `on_commit` that raises, and `replay()`. Beside it runs a reference
model: a dict of plans changed only by what accepted calls mean. After every step:

- every notification sent so far is compliant for the form (`client_view.check_compliant`);
- `session.plans` equals the reference model, in creation order;
- when no stream is in flight and the client heard everything since the last successful call
  or replay, what a client shows (rebuilt from every notification) equals `session.plans`.

And per step: a rejected call changes neither `plans` nor `snapshot()` and sends nothing; an
accepted one commits once, before the client hears; a finished stream ends exactly as the same
text sent to `call()` on a clone of the session (`restore(snapshot())`) would.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from client_view import (
    ClientView,
    as_shown,
    check_compliant,
    expected,
    legacy_list,
    reduce_plan,
)
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from strategies import (
    as_sent,
    create_args,
    fragments,
    hostile,
    remove_args,
    repairable,
    strictly_json,
    update_args,
)

from llm_plans import Limits, PlanSession, StreamError, ToolResult, WireForm
from llm_plans.testing import RecordingSend

CAPABILITIES: dict[str, dict[str, Any] | None] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": None,
}
# v2 by the protocol version the client negotiated.
FORM_ARGS: dict[str, dict[str, Any]] = {
    "v2": {"client_capabilities": {"plan": {}}, "protocol_version": 2},
}
MAX_PLANS = Limits().max_plans
GENERATED = re.compile(r"plan-(\d+)")
MAX_STREAMS = 3
VALID = ("valid", "repairable")  # labels of calls that must be accepted when their meaning is


class CommitFailed(Exception):
    """What the test's `on_commit` raises when armed (a full disk, a locked database)."""


class Call:
    """A tool call as sent, and what it means: `base` are the valid arguments it stands for
    (None when it has no known meaning); `must_reject` when no reading of it is sound."""

    def __init__(
        self, tool: str, arguments: Any, base: dict[str, Any] | None, must_reject: bool, label: str
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.base = base
        self.must_reject = must_reject
        self.label = label

    def __repr__(self) -> str:
        # Hostile arguments run to 600 KiB; a failing example should stay readable.
        shown = repr(self.arguments)
        if len(shown) > 240:
            shown = f"{shown[:200]}...<{len(shown)} chars>...{shown[-30:]}"
        return f"Call({self.tool}, {shown}, label={self.label!r})"


@dataclass
class Stream:
    call: Call
    parts: list[Any] = field(repr=False)
    fed: int = 0

    def fed_text(self) -> Any:
        return self.parts[0][:0].join(self.parts[: self.fed])


def _reduced(plans: Any) -> dict[str, Any]:
    return expected(plans)


def _entry(e: dict[str, Any]) -> dict[str, str]:
    return {
        "content": e["content"],
        "priority": e.get("priority") or "medium",
        "status": e.get("status") or "pending",
    }


def _plan_from(kind: str, args: dict[str, Any]) -> dict[str, Any]:
    if kind == "items":
        return {"type": "items", "entries": [_entry(e) for e in args["entries"]]}
    if kind == "markdown":
        return {"type": "markdown", "content": args["content"]}
    uri = args["uri"]
    return {"type": "file", "uri": uri if uri.startswith("file://") else "file://" + uri}


_FIELD_KIND = {"entries": "items", "content": "markdown", "uri": "file"}


def meaning(
    tool: str, args: dict[str, Any], model: dict[str, Any]
) -> tuple[str | None, dict[str, Any] | None] | None:
    """What valid `args` do to `model`: (plan id or None for a generated one, the plan after,
    or None when removed); None when the call must be rejected in this state."""
    plan_id = args.get("id")
    if tool == "create_plan":
        if (plan_id is not None and plan_id in model) or len(model) >= MAX_PLANS:
            return None
        return plan_id, _plan_from(args["type"], args)
    if plan_id not in model:
        return None
    if tool == "remove_plan":
        return plan_id, None
    if args.get("changes") is not None:
        if model[plan_id]["type"] != "items":
            return None  # changes edit items plans only
        entries = [dict(e) for e in model[plan_id]["entries"]]
        if any(not 1 <= c["step"] <= len(entries) for c in args["changes"]):
            return None
        for change in args["changes"]:
            step = entries[change["step"] - 1]
            for key in ("status", "priority", "content"):
                if change.get(key) is not None:
                    step[key] = change[key]
        return plan_id, {"type": "items", "entries": entries}
    kind = args.get("type") or next(_FIELD_KIND[f] for f in _FIELD_KIND if args.get(f) is not None)
    return plan_id, _plan_from(kind, args)


def _free_number(model: dict[str, Any], start: int) -> int:
    number = start
    while f"plan-{number}" in model:
        number += 1
    return number


class PlanMachine(RuleBasedStateMachine):
    form = "documents"

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.send = RecordingSend()
        self.attempts = 0
        self.failed = 0
        self.violations: list[str] = []
        self.model: dict[str, dict[str, Any]] = {}
        self.streams: dict[str, Stream] = {}
        self.synced = True
        self.commit_armed = False
        self.commit_raised = False
        self.commits: list[tuple[int, dict[str, Any]]] = []
        self.last_call: Call | None = None
        self.generated: set[str] = set()  # every id the session generated so far
        self.session: PlanSession | None = None

    # ---- plumbing ---------------------------------------------------------------------------

    @initialize(interval=st.sampled_from([0.0, 3600.0]))
    def start(self, interval: float) -> None:
        # 0: every complete step is previewed at once; 3600: one preview, then coalesced until
        # the call ends (no timer fires within a run, so runs stay deterministic).
        self.session = PlanSession(
            self._send,
            session_id="sess_machine",
            stream_interval=interval,
            **FORM_ARGS.get(self.form, {"client_capabilities": CAPABILITIES.get(self.form)}),
            on_commit=self._on_commit,
        )
        assert self.session.form is WireForm(self.form)

    def teardown(self) -> None:
        self.loop.close()

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    @property
    def s(self) -> PlanSession:
        assert self.session is not None
        return self.session

    async def _send(self, params: dict[str, Any]) -> None:
        self.attempts += 1
        try:
            check_compliant(self.form, params)
        except Exception as exc:
            self.violations.append(f"{type(exc).__name__}: {exc}; params {params!r:.400}")
        try:
            await self.send(params)
        except BaseException as exc:
            self.failed += 1
            if self.send.fail_with is None:
                self.violations.append(f"send raised {exc!r}: params are not plain JSON")
            raise

    def _on_commit(self, session: PlanSession) -> None:
        self.commits.append((len(self.send.sent), session.snapshot()))
        if self.commit_armed:
            self.commit_armed = False
            self.commit_raised = True
            raise CommitFailed("disk full")

    # ---- what to send -----------------------------------------------------------------------

    def calls(self) -> st.SearchStrategy[Call]:
        return _calls(tuple(self.model.items()))

    # ---- the outcome of one call ------------------------------------------------------------

    def settle(
        self,
        call: Call,
        result: ToolResult,
        before: dict[str, Any],
        before_model: dict[str, Any],
        *,
        exact_ids: bool,
    ) -> None:
        """Check an accepted or rejected call against what it means; move the model on."""
        assert isinstance(result, ToolResult)
        assert result.content, "a result always has a text for the model"
        known = None if call.base is None else meaning(call.tool, call.base, before_model)
        event(f"{call.label} {call.tool}: {'accepted' if result.ok else 'rejected'}")
        if not result.ok:
            assert not (call.label in VALID and known is not None), (
                f"rejected a valid {call.label} call {call.arguments!r:.300}: {result.content}"
            )
            assert self.s.snapshot() == before, "a rejected call changed the session"
            return
        assert not call.must_reject, (
            f"accepted a {call.label} call that must be rejected: {call.arguments!r:.300}"
        )
        assert result.tool == call.tool
        model = dict(before_model)
        if call.base is None:
            # No known meaning: it may only change the plan it names.
            plan = self.s.plans.get(result.plan_id or "")
            if plan is None:
                model.pop(result.plan_id or "", None)
            else:
                model[plan.id] = reduce_plan(plan)
        else:
            assert known is not None, (
                f"accepted {call.arguments!r:.300}, which must be rejected in this state"
            )
            plan_id, plan_after = known
            if plan_id is None:
                assert result.plan_id is not None
                assert GENERATED.fullmatch(result.plan_id), result.plan_id
                assert result.plan_id not in before_model, "a generated id is a fresh id"
                assert result.plan_id not in self.generated, "a generated id is never reused"
                self.generated.add(result.plan_id)
                if exact_ids:
                    number = _free_number(before_model, before["next_number"])
                    assert result.plan_id == f"plan-{number}"
                plan_id = result.plan_id
            assert result.plan_id == plan_id
            assert plan_id is not None
            if plan_after is None:
                del model[plan_id]
            else:
                model[plan_id] = plan_after
        self.model = model

    def _commits_since(self, count: int, sent_before: int) -> None:
        """An accepted call committed once, with the new state, before the client heard."""
        assert len(self.commits) == count + 1, "on_commit runs once per accepted call"
        sent_at_commit, snapshot = self.commits[-1]
        assert snapshot == self.s.snapshot(), "on_commit saw the state after the call"
        assert sent_at_commit == sent_before, "on_commit runs before the client hears"

    def _commit_failed(
        self, call: Call, result: ToolResult, before: dict[str, Any], before_model: dict[str, Any]
    ) -> None:
        """on_commit raised and the call still returned: accepted as it means (the change
        stands), or rejected with nothing changed (rolled back); the client may lag either way."""
        if result.ok:
            self.settle(call, result, before, before_model, exact_ids=not self.streams)
        else:
            assert self.s.snapshot() == before, (
                "a call rejected after on_commit failed left a change"
            )
        self.synced = False

    def _lenient(self, before_model: dict[str, Any]) -> None:
        """After an on_commit that raised: the call applied completely or not at all."""
        after = _reduced(self.s.plans)
        changed = {i for i in set(after) | set(before_model) if after.get(i) != before_model.get(i)}
        assert len(changed) <= 1, f"a failed commit changed {sorted(changed)}"
        self.model = after
        self.synced = False  # the client may not have heard it; a later call must resync

    # ---- rules: plain calls ------------------------------------------------------------------

    @rule(data=st.data())
    def call(self, data: st.DataObject) -> None:
        self._plain(data.draw(self.calls(), label="call"))

    @precondition(lambda self: self.send.fail_with is None)
    @rule(data=st.data())
    def call_through_a_glitch(self, data: st.DataObject) -> None:
        """One call while the pipe is down, healed right after (a short outage)."""
        self.send.fail_with = ConnectionError("connection reset")
        try:
            self._plain(data.draw(self.calls(), label="call"))
        finally:
            self.send.fail_with = None

    @precondition(lambda self: self.last_call is not None)
    @rule()
    def repeat_last_call(self) -> None:
        """The model sends its last call again (a retry after a glitch, or a slip)."""
        assert self.last_call is not None
        self._plain(self.last_call)

    def _plain(self, call: Call) -> None:
        self.last_call = call
        before, before_model = self.s.snapshot(), dict(self.model)
        plans_before = dict(self.s.plans)
        attempts, failed, commits = self.attempts, self.failed, len(self.commits)
        sent_before, synced = len(self.send.sent), self.synced
        kept = copy.deepcopy(call.arguments)
        self.commit_raised = False
        try:
            result = self.run(self.s.call(call.tool, call.arguments))
        except CommitFailed:
            assert self.commit_raised
            self._lenient(before_model)
            return
        assert repr(call.arguments) == repr(kept), "the session changed the caller's arguments"
        if self.commit_raised:
            self._commit_failed(call, result, before, before_model)
            return
        self.settle(call, result, before, before_model, exact_ids=not self.streams)
        if not result.ok:
            assert dict(self.s.plans) == plans_before
            if synced:
                # (A client that missed something may be sent it now; otherwise nothing.)
                assert self.attempts == attempts, "a rejected call sent something"
            assert len(self.commits) == commits, "on_commit ran for a rejected call"
            return
        self._commits_since(commits, sent_before)
        if self.failed > failed:
            self.synced = False
            assert result.content != self._healthy_text(call, before)
        elif self.send.fail_with is None:
            self.synced = True

    def _healthy_text(self, call: Call, before: dict[str, Any]) -> str:
        """The result text the same call gets on a clone of the session whose client hears."""
        return self._shadow(before).run_call(self, call.tool, call.arguments).content

    def _shadow(self, snapshot: dict[str, Any]) -> _Shadow:
        return _Shadow(self.form, snapshot)

    # ---- rules: streamed calls ---------------------------------------------------------------

    @precondition(lambda self: len(self.streams) < MAX_STREAMS)
    @rule(data=st.data(), as_bytes=st.booleans(), ascii_=st.booleans())
    def start_stream(self, data: st.DataObject, as_bytes: bool, ascii_: bool) -> None:
        # Mostly valid calls: what a finished stream must match is most telling for them.
        families = ("valid", "valid", "repairable", "hostile")
        call = data.draw(_calls(tuple(self.model.items()), families), label="call")
        text = call.arguments
        if isinstance(text, dict):
            if not strictly_json(text):
                # NaN or a surrogate in a dict has no exact JSON text: stream its nearest text
                # and judge it by the shadow call alone.
                call = Call(call.tool, text, None, False, call.label)
            text = json.dumps(text, ensure_ascii=ascii_)
        if as_bytes and isinstance(text, str):
            with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate stays text
                text = text.encode("utf-8")
        parts = data.draw(fragments(text), label="fragments") if text else [text]
        # A small pool of ids, so a finished or aborted call's id comes back for a new call.
        free = [f"call-{n}" for n in range(1, MAX_STREAMS + 2) if f"call-{n}" not in self.streams]
        call_id = data.draw(st.sampled_from(free), label="call_id")
        stream = Stream(Call(call.tool, text, call.base, call.must_reject, call.label), parts)
        self.streams[call_id] = stream
        self._feed(call_id, stream)

    def _feed(self, call_id: str, stream: Stream) -> None:
        failed = self.failed
        self.run(self.s.feed(call_id, stream.call.tool, stream.parts[stream.fed]))
        stream.fed += 1
        assert self.s.is_streaming(call_id)
        if self.failed > failed:
            self.synced = False

    @precondition(lambda self: any(s.fed < len(s.parts) for s in self.streams.values()))
    @rule(data=st.data())
    def feed(self, data: st.DataObject) -> None:
        open_ = sorted(i for i, s in self.streams.items() if s.fed < len(s.parts))
        call_id = data.draw(st.sampled_from(open_), label="call_id")
        self._feed(call_id, self.streams[call_id])

    @precondition(lambda self: any(s.fed < len(s.parts) for s in self.streams.values()))
    @rule(data=st.data())
    def feed_rest(self, data: st.DataObject) -> None:
        """Feed every fragment left of one stream, one feed() each."""
        open_ = sorted(i for i, s in self.streams.items() if s.fed < len(s.parts))
        call_id = data.draw(st.sampled_from(open_), label="call_id")
        stream = self.streams[call_id]
        while stream.fed < len(stream.parts):
            self._feed(call_id, stream)

    @precondition(lambda self: self.streams)
    @rule(data=st.data(), truncated=st.sampled_from([False, False, False, True]))
    def finish(self, data: st.DataObject, truncated: bool) -> None:
        call_id = data.draw(st.sampled_from(sorted(self.streams)), label="call_id")
        stream = self.streams[call_id]
        if stream.fed < len(stream.parts) and data.draw(st.booleans(), label="feed the rest"):
            while stream.fed < len(stream.parts):
                self._feed(call_id, stream)
        complete = stream.fed == len(stream.parts)
        text = stream.fed_text()
        before, before_model = self.s.snapshot(), dict(self.model)
        failed, commits, sent_before = self.failed, len(self.commits), len(self.send.sent)
        shadow = None if truncated else self._shadow(before)
        twin = None if shadow is None else shadow.run_call(self, stream.call.tool, text)
        self.commit_raised = False
        try:
            result = self.run(self.s.finish(call_id, truncated=truncated))
        except CommitFailed:
            assert self.commit_raised
            if not self.s.is_streaming(call_id):
                del self.streams[call_id]
            self._lenient(before_model)
            return
        assert not self.s.is_streaming(call_id), "a finished call is no longer in flight"
        del self.streams[call_id]
        if self.failed > failed:
            self.synced = False
        commit_failed = self.commit_raised
        if commit_failed:
            self.synced = False
            if not result.ok:  # rolled back because it could not be saved: nothing changed
                assert self.s.snapshot() == before
                return
        event(f"stream finished {'truncated' if truncated else 'in full' if complete else 'early'}")
        if truncated:
            assert not result.ok, "a call cut off by the token limit is rejected"
            assert self.s.snapshot() == before
            assert len(self.commits) == commits
            return
        assert shadow is not None
        assert twin is not None
        # The same text sent to call() on a clone of the session: same outcome, same change.
        assert result.ok == twin.ok, (
            f"streamed {result.ok} but call() {twin.ok} for {text!r:.300}:\n"
            f"streamed: {result.content}\ncall(): {twin.content}"
        )
        wanted_plans, wanted_text = _reduced(shadow.session.plans), twin.content
        if result.ok and result.plan_id != twin.plan_id:
            # A streamed create without an id may keep the id its previews showed.
            assert stream.call.tool == "create_plan"
            assert GENERATED.fullmatch(result.plan_id or ""), (result.plan_id, twin.plan_id)
            assert GENERATED.fullmatch(twin.plan_id or ""), (result.plan_id, twin.plan_id)
            assert result.plan_id not in before_model
            wanted_plans = {
                (result.plan_id if k == twin.plan_id else k): v for k, v in wanted_plans.items()
            }
            wanted_text = wanted_text.replace(f'"{twin.plan_id}"', f'"{result.plan_id}"')
        assert _reduced(self.s.plans) == wanted_plans
        assert list(self.s.plans) == list(wanted_plans)
        if self.failed == failed and not commit_failed:
            assert result.content == wanted_text
        base = stream.call.base if complete else None
        must_reject = stream.call.must_reject and complete
        call = Call(stream.call.tool, text, base, must_reject, stream.call.label)
        self.settle(call, result, before, before_model, exact_ids=False)
        if commit_failed:
            return
        if result.ok:
            self._commits_since(commits, sent_before)
            if self.failed == failed and self.send.fail_with is None:
                self.synced = True
        else:
            assert len(self.commits) == commits

    @precondition(lambda self: self.streams)
    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(sorted(self.streams)), label="call_id")
        before, failed = self.s.snapshot(), self.failed
        assert self.run(self.s.abort(call_id)) is True
        del self.streams[call_id]
        assert not self.s.is_streaming(call_id)
        assert self.s.snapshot() == before, "an aborted call changed the session"
        if self.failed > failed:
            self.synced = False

    @rule()
    def unknown_call_id(self) -> None:
        """Aborting or finishing a call that is not in flight is a no-op or a StreamError."""
        before, attempts = self.s.snapshot(), self.attempts
        assert self.run(self.s.abort("no-such-call")) is False
        with pytest.raises(StreamError):
            self.run(self.s.finish("no-such-call"))
        assert self.s.snapshot() == before
        assert self.attempts == attempts

    @rule()
    def abort_all(self) -> None:
        before, failed = self.s.snapshot(), self.failed
        aborted = self.run(self.s.abort_all())
        assert sorted(aborted) == sorted(self.streams)
        assert not any(self.s.is_streaming(i) for i in self.streams)
        self.streams.clear()
        assert self.s.snapshot() == before
        if self.failed > failed:
            self.synced = False

    # ---- rules: faults and restarts ----------------------------------------------------------

    @precondition(lambda self: self.send.fail_with is None)
    @rule()
    def break_pipe(self) -> None:
        self.send.fail_with = ConnectionError("broken pipe")

    @precondition(lambda self: self.send.fail_with is not None)
    @rule()
    def heal_pipe(self) -> None:
        self.send.fail_with = None

    @rule()
    def arm_commit_failure(self) -> None:
        self.commit_armed = True

    @rule()
    def replay(self) -> None:
        before, failed, sent = self.s.snapshot(), self.failed, len(self.send.sent)
        try:
            self.run(self.s.replay())
        except ConnectionError:
            assert self.send.fail_with is not None, "replay raised with a healthy pipe"
        assert self.s.snapshot() == before
        if self.failed > failed:
            self.synced = False
        elif self.send.fail_with is None:
            self.synced = True  # whatever the client missed, replay shows it everything
            if not self.streams:
                # As after session/load: a client that hears only the replay shows every plan.
                fresh = ClientView(self.form).apply_all(self.send.updates[sent:])
                self._assert_shows(fresh)

    def _assert_shows(self, view: ClientView) -> None:
        """`view` shows exactly `session.plans` (no stream in flight)."""
        if self.form != "legacy":
            assert view.shown() == as_shown(self.s.plans, self.form), "the client shows other plans"
            return
        legacy = ClientView(self.form)
        legacy.apply(self.s.legacy_update())
        assert view.shown_entries() == legacy.shown_entries(), "the client shows another list"
        shown = as_shown(self.s.plans, self.form)
        if all(p["type"] == "items" for p in shown.values()):
            flat = legacy_list(shown)
            assert view.shown_entries() == flat, "the legacy list is not every plan's entries"
        else:
            assert len(view.shown_entries()) >= len(self.model), "a plan shows no entry"

    # ---- invariants --------------------------------------------------------------------------

    @invariant()
    def notifications_are_compliant(self) -> None:
        assert not self.violations, self.violations[0]

    @invariant()
    def plans_are_the_model(self) -> None:
        if self.session is None:
            return
        assert _reduced(self.s.plans) == self.model
        assert list(self.s.plans) == list(self.model), "plans keep their creation order"
        for call_id in self.streams:
            assert self.s.is_streaming(call_id)

    @invariant()
    def client_shows_the_plans(self) -> None:
        if self.session is None or self.streams or not self.synced:
            return
        if self.send.fail_with is not None:
            return
        event("client view compared")
        self._assert_shows(ClientView(self.form).apply_all(self.send.updates))


@st.composite
def _calls(
    draw: st.DrawFn,
    model: tuple[tuple[str, dict[str, Any]], ...],
    families: tuple[str, ...] = ("valid", "repairable", "hostile"),
) -> Call:
    """A valid, repairable or hostile call for a session holding the plans of `model`."""
    existing = tuple(i for i, _ in model)
    family = draw(st.sampled_from(families))
    if family == "hostile":
        h = draw(hostile(existing))
        return Call(h.tool, h.arguments, h.base, h.must_reject, h.label)
    tools = ["create_plan", "update_plan", "remove_plan"] if existing else ["create_plan"]
    tool = draw(st.sampled_from(tools))
    if tool == "create_plan":
        args = draw(create_args())
    else:
        plan_id, plan = draw(st.sampled_from(model))
        steps = len(plan["entries"]) if plan["type"] == "items" else 0
        if tool == "remove_plan":
            args = draw(remove_args(plan_id))
        elif draw(st.integers(0, 3)) == 0:
            args = _restated(plan_id, plan)
        else:
            args = draw(update_args(plan_id, steps))
    sent = draw(as_sent(args) if family == "valid" else repairable(args))
    return Call(tool, sent, args, False, family)


def _restated(plan_id: str, plan: dict[str, Any]) -> dict[str, Any]:
    """An update that sends the plan as it is (full-list tools do this on every call)."""
    field = {"items": "entries", "markdown": "content", "file": "uri"}[plan["type"]]
    value = plan[field]
    if field == "entries":
        value = [dict(e) for e in value]
    return {"id": plan_id, field: value}


class _Shadow:
    """A fresh session restored from a snapshot, whose client always hears."""

    def __init__(self, form: str, snapshot: dict[str, Any]) -> None:
        self.session = PlanSession(RecordingSend(), session_id="sess_shadow", form=form)
        self.session.restore(snapshot)

    def run_call(self, machine: PlanMachine, tool: str, arguments: Any) -> ToolResult:
        result: ToolResult = machine.run(self.session.call(tool, arguments))
        return result


# Up to 25 steps an example; the first bug found is the one reported (shrinking several at
# once costs minutes).
STEPS = settings(stateful_step_count=25, report_multiple_bugs=False)


class DocumentsForm(PlanMachine):
    form = "documents"


class SchemaForm(PlanMachine):
    form = "schema"


class LegacyForm(PlanMachine):
    form = "legacy"


TestDocumentsForm = DocumentsForm.TestCase
TestDocumentsForm.settings = STEPS
TestSchemaForm = SchemaForm.TestCase
TestSchemaForm.settings = STEPS
TestLegacyForm = LegacyForm.TestCase
TestLegacyForm.settings = STEPS


class V2Form(PlanMachine):
    form = "v2"


TestV2Form = V2Form.TestCase
TestV2Form.settings = STEPS
