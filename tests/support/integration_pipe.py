"""Run an example framework agent over a real stdio pipe against the ACP SDK's client side."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
from acp.schema import TextContentBlock

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
# The agent imports this checkout's llm_plans, not whichever one the environment installed
# (a shared virtualenv's editable install may point at another worktree).
_PYTHONPATH = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


@dataclass
class PipeClient:
    """Keeps the raw `session/update` params and the SDK's typed updates."""

    raw: list[dict[str, Any]] = field(default_factory=list)
    typed: list[Any] = field(default_factory=list)

    def observe(self, event: Any) -> None:
        if event.message.get("method") == "session/update":
            self.raw.append(event.message["params"])

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.typed.append(update)

    async def request_permission(self, **_: Any) -> Any:
        raise NotImplementedError

    @property
    def updates(self) -> list[dict[str, Any]]:
        return [p["update"] for p in self.raw]


async def run_example(
    name: str,
    caps: dict[str, Any],
    text: str = "fix the parser",
    env: dict[str, str] | None = None,
    client: PipeClient | None = None,
) -> tuple[PipeClient, str]:
    """One session and one prompt to `examples/<name>.py`; the client and the stop reason."""
    client = client or PipeClient()
    async with acp.spawn_agent_process(
        cast("acp.Client", client),  # the SDK calls only the methods a client has
        sys.executable,
        str(EXAMPLES / f"{name}.py"),
        env={**os.environ, "PYTHONPATH": _PYTHONPATH, **(env or {})},
        observers=[client.observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        # Raw, so that `planCapabilities` (unknown to the SDK's model) reaches the agent.
        await conn._conn.send_request(
            "initialize", {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": caps}
        )
        session = await conn.new_session(cwd=str(Path.cwd()))
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=text)]
        )
    return client, response.stop_reason
