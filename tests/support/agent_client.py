"""Drive examples/coding_agent.py with the official ACP Python SDK's client side."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import acp
from acp.schema import (
    AllowedOutcome,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    WriteTextFileResponse,
)

if TYPE_CHECKING:  # what session/prompt takes, only to annotate prompt_block
    from acp.schema import (
        AudioContentBlock,
        EmbeddedResourceContentBlock,
        ImageContentBlock,
        ResourceContentBlock,
    )

    ContentBlock = (
        TextContentBlock
        | ImageContentBlock
        | AudioContentBlock
        | ResourceContentBlock
        | EmbeddedResourceContentBlock
    )

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "coding_agent.py"
SAMPLE = ROOT / "examples" / "sample_project"
# The offline model edits the sample project by a fixed script: the agent runs it only when named.
SCRIPTED = ("--model", "scripted")
CAPS: dict[str, dict[str, Any]] = {
    "documents": {"planCapabilities": {}},
    "schema": {"plan": {}},
    "legacy": {},
}


def sample_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(SAMPLE, project)
    return project


def agent_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env.update(LLM_PLANS_SCRIPT_DELAY="0", LLM_PLANS_DATA_DIR=str(data_dir))
    return env


@dataclass
class Client:
    """Answers every permission request (approving, or with `approve=False` picking the
    agent's reject option), serves fs from disk, and records what the agent sent."""

    approve: bool = True
    raw: list[dict[str, Any]] = field(default_factory=list)
    typed: list[Any] = field(default_factory=list)
    permissions: list[str] = field(default_factory=list)

    def observe(self, event: Any) -> None:
        if event.message.get("method") == "session/update":
            self.raw.append(event.message["params"])

    @property
    def plan_updates(self) -> list[dict[str, Any]]:
        kinds = ("plan", "plan_update", "plan_removed")
        return [p["update"] for p in self.raw if p["update"]["sessionUpdate"] in kinds]

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.typed.append(update)

    @property
    def said(self) -> str:
        """Everything the agent said to the user, joined."""
        chunks = [
            u for u in self.typed if getattr(u, "session_update", "") == "agent_message_chunk"
        ]
        return "".join(u.content.text for u in chunks)

    async def request_permission(
        self, options: list[Any], tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call.title)
        wanted = "allow" if self.approve else "reject"
        option = next(o for o in options if o.kind.startswith(wanted))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def read_text_file(self, path: str, **_: Any) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, path: str, content: str, **_: Any) -> WriteTextFileResponse:
        Path(path).write_text(content)
        return WriteTextFileResponse()


@asynccontextmanager
async def connected(
    client: Client,
    project: Path,
    env: dict[str, str],
    caps: dict[str, Any],
    command: list[str] | None = None,
) -> AsyncIterator[tuple[Any, Any, dict[str, Any]]]:
    """The example agent as a subprocess, initialized: the connection, the process, and the
    agent's `initialize` response. `command` starts another copy of it (a wheel's
    `llm-plans agent --model scripted`); by default, this checkout's with the scripted model."""
    program, *args = command or [sys.executable, str(AGENT), *SCRIPTED]
    async with acp.spawn_agent_process(
        cast("acp.Client", client),  # the SDK calls only the methods a client has
        program,
        *args,
        cwd=project,
        env=env,
        observers=[client.observe],
        use_unstable_protocol=True,
    ) as (conn, process):
        # Raw, so that `planCapabilities` (unknown to the SDK's model) reaches the agent.
        init = await conn._conn.send_request(
            "initialize",
            {
                "protocolVersion": acp.PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": False,
                    **caps,
                },
            },
        )
        yield conn, process, init


def prompt_block(text: str) -> list[ContentBlock]:
    return [TextContentBlock(type="text", text=text)]


async def run_prompt(
    project: Path,
    data_dir: Path,
    caps: dict[str, Any],
    text: str = "Fix calc.mean",
    *,
    approve: bool = True,
) -> tuple[Client, str]:
    """One session, one prompt; the client and the stop reason."""
    client = Client(approve=approve)
    async with connected(client, project, agent_env(data_dir), caps) as (conn, _process, _init):
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block(text))
    return client, response.stop_reason
