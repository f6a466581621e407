"""`llm-plans demo`: the example agent on a sample project, watched by a real ACP client.

The demo copies a small project into a temp dir, starts examples/coding_agent.py with the
scripted offline model (`--model scripted`: the agent runs it only when named), connects to
it over stdio with the official ACP SDK, advertising plan support (or not, with --legacy),
sends a prompt and shows the plans live.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    PlanCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    WriteTextFileResponse,
)
from rich.console import Console
from rich.live import Live

from ..view import MARK_SECONDS, PlanBoard, ShownPlan, plain
from .agent import examples_dir

PROMPT = "calc.mean([2, 4]) returns 4.0 instead of 3.0. Please fix it and add a test."
# Frames per second of the live view.
REFRESH = 12

__all__ = ["DemoClient", "examples_dir", "marked", "run"]


def marked(board: PlanBoard) -> bool:
    """Whether the board still shows a change mark: a plan just removed, steps just added
    or dropped. The live view stays up until none is left, so the last changes of a turn
    (the design note's removal among them) are seen before the final, settled frame."""
    return any(plan != plan.settled() for plan in board.shown())


class DemoClient:
    """The client side: shows plans and messages, approves the agent's requests."""

    def __init__(self, console: Console, root: Path, board: PlanBoard | None = None) -> None:
        self.console = console
        self.root = root
        self.board = board if board is not None else PlanBoard()
        self.live: Live | None = None
        self.plan_updates = 0

    # raw notifications, whatever their form, through the SDK's stream observer
    def observe(self, event: Any) -> None:
        message = event.message
        if message.get("method") != "session/update":
            return
        changed = self.board.apply(message["params"])
        if changed is None:
            return
        self.plan_updates += 1
        if self.live is not None:
            self.live.refresh()  # the board is the live renderable; show the change at once
        elif isinstance(changed, ShownPlan):
            self.console.print(plain(changed), highlight=False, markup=False)
        else:
            self.console.print(f"[{changed}] removed", highlight=False, markup=False)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        kind = getattr(update, "session_update", "")
        if kind == "agent_message_chunk":
            self.console.print(update.content.text, end="", highlight=False, markup=False)
        elif kind == "tool_call":
            self.console.print(f"  ⚙ {update.title}", style="dim", highlight=False, markup=False)

    async def request_permission(self, tool_call: Any, **_: Any) -> RequestPermissionResponse:
        self.console.print(
            f"  ✓ approved: {tool_call.title}", style="green", highlight=False, markup=False
        )
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow")
        )

    def _inside(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if self.root not in resolved.parents:
            raise acp.RequestError.invalid_params({"path": path, "reason": "outside project"})
        return resolved

    async def read_text_file(self, path: str, **_: Any) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=self._inside(path).read_text(encoding="utf-8"))

    async def write_text_file(self, path: str, content: str, **_: Any) -> WriteTextFileResponse:
        self._inside(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()


async def run(
    *,
    legacy: bool = False,
    keep: bool = False,
    prompt: str = PROMPT,
    console: Console | None = None,
    delay: float | None = None,
    board: PlanBoard | None = None,
) -> int:
    """Run the demo; 0 when the agent finished its turn and showed plans. `board` is the view
    the plans are shown on (scripts/demo_svg.py passes one that keeps its frames)."""
    console = console or Console()
    examples = examples_dir()
    work = Path(tempfile.mkdtemp(prefix="llm-plans-demo-"))
    project = work / "sample_project"
    shutil.copytree(examples / "sample_project", project)
    client = DemoClient(console, project.resolve(), board)
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
        terminal=False,
        plan=None if legacy else PlanCapabilities(),
    )
    form = "legacy `plan` updates" if legacy else "plan_update / plan_removed"
    console.print(
        f"llm_plans demo: the example agent with its scripted offline model, "
        f"as a client that gets {form}.\nProject: {project}\n",
        highlight=False,
        markup=False,
    )
    args = ["--model", "scripted", "--data-dir", str(work / "data")]
    if delay is not None:
        args += ["--script-delay", str(delay)]
    # DemoClient implements what its advertised capabilities let the agent call.
    peer = cast("acp.Client", client)
    try:
        async with acp.spawn_agent_process(
            peer,
            sys.executable,
            str(examples / "coding_agent.py"),
            *args,
            cwd=project,
            observers=[client.observe],
            use_unstable_protocol=True,
        ) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps)
            session = await conn.new_session(cwd=str(project))
            console.print(f"> {prompt}\n", style="bold", highlight=False, markup=False)
            block = TextContentBlock(type="text", text=prompt)
            if console.is_terminal:
                with Live(client.board, console=console, refresh_per_second=REFRESH) as live:
                    client.live = live
                    response = await conn.prompt(session_id=session.session_id, prompt=[block])
                    # Marks expire with time, MARK_SECONDS after their change at the latest.
                    for _frame in range(math.ceil(MARK_SECONDS * REFRESH)):
                        if not marked(client.board):
                            break
                        await asyncio.sleep(1 / REFRESH)
                        live.refresh()
                    client.board.settle()  # the last frame: the final plans, unmarked
                    live.refresh()
                client.live = None
            else:
                response = await conn.prompt(session_id=session.session_id, prompt=[block])
        summary = f"Turn ended: {response.stop_reason}; {client.plan_updates} plan updates."
        if console.is_terminal:  # the live view's last frame already shows the final plans
            console.print(summary, highlight=False, markup=False)
        else:
            console.print(f"\n\n{summary} Final plans:", highlight=False, markup=False)
            client.board.settle()
            for plan in client.board.plans.values():
                console.print(plain(plan), highlight=False, markup=False)
        return 0 if response.stop_reason == "end_turn" and client.plan_updates else 1
    finally:
        if keep:
            console.print(f"Kept the project at {project}", highlight=False, markup=False)
        else:
            shutil.rmtree(work, ignore_errors=True)
