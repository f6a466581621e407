"""Talk ACP to an agent a docs page shows, as a client on the official Python SDK would.

    python tests/support/docs_agent_client.py AGENT_PY

Starts `AGENT_PY` with this interpreter over stdio (in its own directory, where the page's
other files stand beside it), then `initialize` (advertising the stable plan capability),
`session/new` and one prompt. Prints a JSON report as its last line: the prompt's stop
reason, every `session/update` the agent sent (as the JSON-RPC params it wrote), and which
llm_plans and ACP SDK this interpreter has.

It imports nothing of the test suite: tests/e2e/test_docs_agents.py runs it in the fresh
virtualenv the page's install line made, where only the wheel and its extras are installed.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import acp
from acp.schema import TextContentBlock

import llm_plans


class Client:
    """Accepts every update; the raw ones are kept by `observe`."""

    async def session_update(self, **_: Any) -> None:
        return None

    async def request_permission(self, **_: Any) -> Any:
        raise NotImplementedError("the docs' agents ask no permission")


async def drive(agent: Path) -> dict[str, Any]:
    updates: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.message.get("method") == "session/update":
            updates.append(event.message["params"])

    async with acp.spawn_agent_process(
        cast("acp.Client", Client()),  # the SDK calls only the methods a client has
        sys.executable,
        str(agent),
        cwd=agent.parent,
        env=dict(os.environ),
        observers=[observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        # Raw, so that the plan capability reaches the agent as a client sends it (the SDK's
        # ClientCapabilities model would drop it).
        init = await conn._conn.send_request(
            "initialize",
            {"protocolVersion": acp.PROTOCOL_VERSION, "clientCapabilities": {"plan": {}}},
        )
        session = await conn.new_session(cwd=str(agent.parent), mcp_servers=[])
        response = await asyncio.wait_for(
            conn.prompt(
                session_id=session.session_id,
                prompt=[TextContentBlock(type="text", text="Fix the parser bug.")],
            ),
            timeout=120,
        )
    return {
        "protocol_version": init["protocolVersion"],
        "session_id": session.session_id,
        "stop_reason": response.stop_reason,
        "updates": updates,
        "llm_plans": llm_plans.__file__,
        "acp": importlib.metadata.version("agent-client-protocol"),
    }


def main() -> None:
    (agent,) = sys.argv[1:]
    print(json.dumps(asyncio.run(drive(Path(agent).resolve()))))


if __name__ == "__main__":
    main()
