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
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
)
from coding_agent_lib.cli import REFUSED, choose_backend, parse_args, refusal, resolve_api
from coding_agent_lib.models import Backend
from coding_agent_lib.retries import endpoint, trouble
from coding_agent_lib.store import DamagedSnapshot, PlanStore
from coding_agent_lib.workspace import Workspace

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send

# A loop that has not finished after this many model replies is stuck, not working.
MAX_REPLIES = 40


# Re-exported: the command line and model choice live in coding_agent_lib/cli.py.
__all__ = ["CodingAgent", "choose_backend", "main", "parse_args", "resolve_api"]


class CodingAgent:
    def __init__(self, args: argparse.Namespace, recorder: ClientCapabilitiesRecorder) -> None:
        self._args = args
        self._recorder = recorder
        self._store = PlanStore(Path(args.data_dir))
        self._sessions: dict[str, tuple[PlanSession, Workspace, Backend]] = {}
        self._turns: dict[str, asyncio.Task[str]] = {}
        self._conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
        )

    def _open(self, session_id: str, cwd: str) -> PlanSession:
        caps = self._recorder.capabilities or {}
        plans = PlanSession(
            acp_send(self._conn),
            session_id=session_id,
            client_capabilities=caps,
            workspace=cwd,
            on_commit=lambda s: self._store.save(session_id, cwd, s.snapshot()),
        )
        workspace = Workspace(self._conn, session_id, cwd, caps)
        self._sessions[session_id] = (plans, workspace, choose_backend(self._args))
        return plans

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session_id = f"sess_{uuid.uuid4().hex[:16]}"
        self._open(session_id, cwd)
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        plans = self._open(session_id, cwd)
        try:
            snapshot = self._store.load(session_id)
            if snapshot is not None:
                plans.restore(snapshot)
        # restore() validates a snapshot written by any version, or damaged on disk: whatever
        # it raises, the session opens without the plans and the user is told why.
        except Exception as exc:
            reason = (
                str(exc) if isinstance(exc, DamagedSnapshot) else f"{type(exc).__name__}: {exc}"
            )
            self._open(session_id, cwd)  # a fresh session, not a half-restored one
            await self._say(
                session_id,
                f"The saved plans of this session could not be restored ({reason}); "
                "it continues without them.\n",
            )
            return LoadSessionResponse()
        await plans.replay()
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        turn = asyncio.ensure_future(self._turn(session_id, text))
        self._turns[session_id] = turn
        try:
            return PromptResponse(stop_reason=await turn)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            if turn.cancelled():
                return PromptResponse(stop_reason="cancelled")
            raise
        finally:
            self._turns.pop(session_id, None)

    async def cancel(self, session_id: str, **_: Any) -> None:
        turn = self._turns.get(session_id)
        if turn is not None:
            turn.cancel()

    async def _say(self, session_id: str, text: str) -> None:
        await self._conn.session_update(session_id, acp.update_agent_message_text(text))

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
                if not reply.uses:
                    return "end_turn"
                results = []
                for use in reply.uses:
                    if use.id in reply.plan_results:
                        results.append(reply.plan_results[use.id])
                    else:
                        output, ok = await workspace.run(use.name, use.arguments)
                        results.append(backend.result(use, output, ok))
                backend.add_results(results)
            await say(f"\nStopped after {MAX_REPLIES} model replies without finishing.")
            return "max_turn_requests"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the model API failed for good: tell the user, end the turn
            url = endpoint(exc) or backend.endpoint
            what = trouble(exc)
            await say(
                f"\n{what[0].upper()}{what[1:]}: {url} failed ({type(exc).__name__}: {exc}). "
                "Check the key, model name, base URL and network, then try again."
            )
            return "end_turn"

    async def cancel_all(self) -> None:
        for turn in self._turns.values():
            turn.cancel()


async def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Serve ACP on stdio; `prog` names the command in messages (`llm-plans agent`)."""
    args = parse_args(argv, prog)
    problem = refusal(args, sys.stdin)
    if problem is not None:  # before speaking ACP: a client shows the agent's stderr
        print(problem, file=sys.stderr)
        return REFUSED
    recorder = ClientCapabilitiesRecorder()
    agent = CodingAgent(args, recorder)
    await acp.run_agent(agent, observers=[recorder], use_unstable_protocol=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
