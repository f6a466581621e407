"""An example coding agent over ACP (stdio), planning with llm_plans.

    python examples/coding_agent.py [--model NAME] [--api openai-chat|openai-responses|anthropic]

With OPENAI_API_KEY or ANTHROPIC_API_KEY set it runs a real model. A scripted offline model
drives the same loop with `--model scripted`, or when no model or API was named and no key is
set; a named model or API without its key is an error at start-up. Plans reach the client
through `PlanSession` as they are written; coding tools use the client's fs and terminal
when it offers them and ask before writing or running anything. Plan state is kept in
sqlite under `--data-dir`, so `session/load` after a restart shows the same plans.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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
from coding_agent_lib.models import Anthropic, Backend, OpenAIChat, OpenAIResponses
from coding_agent_lib.retries import endpoint, trouble
from coding_agent_lib.scripted import Scripted
from coding_agent_lib.store import DamagedSnapshot, PlanStore
from coding_agent_lib.workspace import Workspace

from llm_plans import ClientCapabilitiesRecorder, PlanSession, acp_send, tools

# A loop that has not finished after this many model replies is stuck, not working.
MAX_REPLIES = 40


KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai-chat": "OPENAI_API_KEY"}
KEYS["openai-responses"] = KEYS["openai-chat"]


class MissingKey(Exception):
    """A model or API was named but its key is not set; the message says which."""


def resolve_api(args: argparse.Namespace) -> str:
    """The API to use, "scripted" for the offline model; MissingKey for a named model or API
    without its key (silently running the script instead would look like a broken model)."""
    if args.model == "scripted":
        return "scripted"
    api: str = args.api or (
        "anthropic"
        if os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("OPENAI_API_KEY")
        else "openai-chat"
    )
    if os.environ.get(KEYS[api]):
        return api
    if args.model is None and args.api is None:
        return "scripted"  # nothing named, nothing set: the offline model, labelled as such
    named = f"--model {args.model}" if args.model else f"--api {args.api}"
    other = " (or ANTHROPIC_API_KEY with --api anthropic)" if args.api is None else ""
    raise MissingKey(
        f"coding_agent.py: {named} needs {KEYS[api]}{other}, which is not set. Set it in "
        "the agent's environment, or pass --model scripted for the offline scripted model."
    )


def choose_backend(args: argparse.Namespace) -> Backend:
    """The model backend for a new session, as resolve_api decided."""
    api = resolve_api(args)
    if api == "scripted":
        return Scripted(delay=args.script_delay)
    system = tools.system_prompt()
    if api == "anthropic":
        import anthropic

        return Anthropic(
            anthropic.AsyncAnthropic(max_retries=0), args.model or "claude-sonnet-5", system
        )
    import openai

    client = openai.AsyncOpenAI(max_retries=0)
    backend = OpenAIResponses if api == "openai-responses" else OpenAIChat
    return backend(client, args.model or "gpt-4.1", system)


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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=os.environ.get("LLM_PLANS_MODEL"),
        help="model name, or 'scripted' for the offline model",
    )
    parser.add_argument(
        "--api",
        choices=["openai-chat", "openai-responses", "anthropic"],
        default=os.environ.get("LLM_PLANS_API"),
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get(
            "LLM_PLANS_DATA_DIR", str(Path.home() / ".local" / "share" / "llm-plans-agent")
        ),
    )
    parser.add_argument(
        "--script-delay",
        type=float,
        default=float(os.environ.get("LLM_PLANS_SCRIPT_DELAY", "0.03")),
        help="seconds between streamed fragments of the scripted model",
    )
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        resolve_api(args)
    except MissingKey as exc:  # before speaking ACP: the client shows the agent's stderr
        print(exc, file=sys.stderr)
        return 2
    recorder = ClientCapabilitiesRecorder()
    agent = CodingAgent(args, recorder)
    await acp.run_agent(agent, observers=[recorder], use_unstable_protocol=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
