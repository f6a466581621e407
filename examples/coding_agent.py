"""An example coding agent over ACP (stdio), planning with llm_plans.

    python examples/coding_agent.py [--model NAME] [--api openai-chat|openai-responses|anthropic]
    llm-plans agent [...]     (the same agent, from any install of llm-plans[agent])

It runs the model named with --model, with OPENAI_API_KEY or ANTHROPIC_API_KEY; a scripted
offline model drives the same loop only when named, with `--model scripted`. A missing key,
or a person at a terminal instead of an ACP client, is an error at start-up (the options
and these checks are in coding_agent_lib/cli.py). Plans reach the client
through `PlanSession` as they are written; coding tools use the client's fs and terminal
when it offers them and ask before writing or running anything. Plan state is kept in
sqlite under `--data-dir`, so `session/load` after a restart shows the same plans.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path
from typing import Any, cast

import acp
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
)
from coding_agent_lib.acp_builders import agent_info, message_text
from coding_agent_lib.cli import REFUSED, choose_backend, parse_args, refusal, resolve_api
from coding_agent_lib.models import Backend
from coding_agent_lib.retries import endpoint, trouble
from coding_agent_lib.store import DamagedSnapshot, PlanStore, Saver
from coding_agent_lib.workspace import Workspace

from llm_plans import ClientCapabilitiesRecorder, PlanSession, SkippedPlan, __version__, acp_send

# A loop that has not finished after this many model replies is stuck, not working.
MAX_REPLIES = 40
# A session/load notice names this many left-out plans, then how many more.
MAX_NAMED_SKIPPED = 10
# The result a tool call gets when the turn is cancelled before it ran or finished: every
# call needs one, or the model API refuses the conversation at the next prompt.
CANCELLED = "Cancelled: the user stopped the turn before this call finished."


class ModelAPIFailed(Exception):
    """The model API failed for good; the message is what the user was told."""


# Re-exported: the command line and model choice live in coding_agent_lib/cli.py.
__all__ = ["CodingAgent", "choose_backend", "main", "parse_args", "resolve_api"]


class CodingAgent:
    def __init__(self, args: argparse.Namespace, recorder: ClientCapabilitiesRecorder) -> None:
        self._args = args
        self._recorder = recorder
        self._store = PlanStore(Path(args.data_dir))
        self._saver = Saver(self._store)
        self._sessions: dict[str, tuple[PlanSession, Workspace, Backend]] = {}
        self._turns: dict[str, asyncio.Task[str]] = {}
        self._conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=agent_info("llm-plans-agent", __version__, "llm_plans example agent"),
        )

    def _open(
        self, session_id: str, cwd: str, model_state: dict[str, Any] | None = None
    ) -> PlanSession:
        caps = self._recorder.capabilities or {}
        send = acp_send(self._conn)

        async def send_saved(params: dict[str, Any]) -> None:
            # Commits are saved off the loop; the client hears of none not yet on disk, so
            # what it shows, a restarted agent's session/load shows too.
            await self._saver.flushed()
            await send(params)

        plans = PlanSession(
            send_saved,
            session_id=session_id,
            client_capabilities=self._recorder,  # the capabilities and the negotiated version
            workspace=cwd,
            on_commit=lambda s: self._saver.save(session_id, cwd, s.snapshot()),
        )
        workspace = Workspace(self._conn, session_id, cwd, caps)
        backend = choose_backend(self._args, cwd)
        if model_state is not None:
            backend.restore(model_state)
        self._sessions[session_id] = (plans, workspace, backend)
        return plans

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex[:16]}"
        self._open(session_id, cwd)
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        model_state = await self._saver.load_model(session_id)
        plans = self._open(session_id, cwd, model_state)
        try:
            snapshot = await self._saver.load(session_id)
            skipped = [] if snapshot is None else plans.restore(snapshot, partial=True)
        # A plan that no longer validates (its file moved out of the project) is skipped
        # above; what still raises is not a snapshot at all (damaged on disk, an unknown
        # version): the session opens without plans and the user is told why.
        except Exception as exc:
            reason = (
                str(exc) if isinstance(exc, DamagedSnapshot) else f"{type(exc).__name__}: {exc}"
            )
            self._open(session_id, cwd, model_state)  # a fresh session, not a half-restored one
            await self._say(
                session_id,
                f"The saved plans of this session could not be restored ({reason}); "
                "it continues without them.\n",
            )
            return LoadSessionResponse()
        await plans.replay()
        if skipped:
            await self._say(session_id, skipped_notice(skipped))
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        turn = asyncio.ensure_future(self._turn(session_id, text))
        self._turns[session_id] = turn
        try:
            return PromptResponse(stop_reason=await turn)
        except asyncio.CancelledError:
            if turn.cancelled():
                return PromptResponse(stop_reason="cancelled")
            raise
        except ModelAPIFailed as exc:
            # An error response, not a stop reason: the client (and acpx's exit code) can
            # tell a turn that failed from one that ended.
            raise acp.RequestError(-32603, str(exc), {"reason": "model_api_failed"}) from None
        finally:
            if self._turns.get(session_id) is turn:
                del self._turns[session_id]

    async def cancel(self, session_id: str, **_: Any) -> None:
        # Once: a second session/cancel must not interrupt the first one's clean-up.
        turn = self._turns.pop(session_id, None)
        if turn is not None:
            turn.cancel()

    async def _say(self, session_id: str, text: str) -> None:
        await self._conn.session_update(session_id, message_text(text))

    async def _turn(self, session_id: str, text: str) -> str:
        plans, workspace, backend = self._sessions[session_id]
        backend.add_user(text)

        async def say(chunk: str) -> None:
            await self._say(session_id, chunk)

        while self._store.notices:
            await say(self._store.notices.pop(0) + "\n")
        try:
            for _ in range(MAX_REPLIES):
                reply = await backend.reply(plans, say)
                # A plan the client saw in full as a preview may need no notification at its
                # commit, so send_saved alone does not order it: nothing the model does next
                # happens before its plans are on disk.
                await self._saver.flushed()
                if not reply.uses:
                    return "end_turn"
                done = dict(reply.plan_results)
                try:
                    for use in reply.uses:
                        if use.id not in done:
                            output, ok = await workspace.run(use.name, use.arguments)
                            done[use.id] = backend.result(use, output, ok)
                finally:
                    unanswered = [u for u in reply.uses if u.id not in done]
                    done.update({u.id: backend.result(u, CANCELLED, False) for u in unanswered})
                    backend.add_results([done[u.id] for u in reply.uses])
            await say(f"\nStopped after {MAX_REPLIES} model replies without finishing.")
            return "max_turn_requests"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the model API failed for good: tell the user, fail the turn
            url = endpoint(exc) or backend.endpoint
            what = trouble(exc)
            message = (
                f"{what[0].upper()}{what[1:]}: {url} failed ({type(exc).__name__}: {exc}). "
                "Check the key, model name, base URL and network, then try again."
            )
            await say(f"\n{message}")
            raise ModelAPIFailed(message) from exc
        finally:
            # A broken stream or a cancelled turn leaves no half-written plan on the client
            # (each backend aborts its own; this also catches the scripted model's).
            await plans.abort_all()
            state = backend.state()
            if state is not None:  # on disk before the prompt's answer, as the plans are
                self._saver.save_model(session_id, state)
                await self._saver.flushed()

    async def cancel_all(self) -> None:
        for session_id in list(self._turns):
            await self.cancel(session_id)


def skipped_notice(skipped: list[SkippedPlan]) -> str:
    """What the user hears about saved plans session/load left out, and why."""
    count = len(skipped)
    head = (
        "1 saved plan of this session could not be restored and was left out:"
        if count == 1
        else f"{count} saved plans of this session could not be restored and were left out:"
    )
    lines = [
        f"- {'plan ' + repr(s.id) if s.id is not None else f'plans[{s.index}]'}: {_why(s.reason)}"
        for s in skipped[:MAX_NAMED_SKIPPED]
    ]
    if count > MAX_NAMED_SKIPPED:
        lines.append(f"- and {count - MAX_NAMED_SKIPPED} more")
    return "\n".join([head, *lines]) + "\n"


def _why(reason: str) -> str:
    # A reason is the rejection a model would get ("create_plan was not applied ...", a
    # "- field: problem" line each, "Fix the errors and call create_plan again."); the
    # user needs only the problems.
    problems = [line[2:] for line in reason.splitlines() if line.startswith("- ")]
    return " ".join(problems) if problems else reason


async def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Serve ACP on stdio; `prog` names the command in messages (`llm-plans agent`)."""
    args = parse_args(argv, prog)
    problem = refusal(args, sys.stdin)
    if problem is not None:  # before speaking ACP: a client shows the agent's stderr
        print(problem, file=sys.stderr)
        return REFUSED
    recorder = ClientCapabilitiesRecorder()
    # The SDK calls only the methods an agent has; its Agent protocol lists every one.
    agent = cast("acp.Agent", CodingAgent(args, recorder))
    await acp.run_agent(agent, observers=[recorder], use_unstable_protocol=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
