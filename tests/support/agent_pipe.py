"""The example agent in this process, spoken to over a socket pair by the ACP SDK's client side:
the real JSON-RPC both ways, with a model backend a test chooses (a fake model API)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import acp
import coding_agent
import pytest
from agent_client import Client
from coding_agent_lib.models import Backend

from llm_plans import ClientCapabilitiesRecorder


@asynccontextmanager
async def piped(
    client: Client,
    data_dir: Path,
    backend: Callable[[], Backend],
    monkeypatch: pytest.MonkeyPatch,
    caps: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Any, coding_agent.CodingAgent]]:
    """An initialized client connection to an in-process agent whose sessions use
    `backend()`, and the agent."""
    monkeypatch.setattr(coding_agent, "choose_backend", lambda _args, _cwd: backend())
    args = coding_agent.parse_args(["--model", "scripted", "--data-dir", str(data_dir)])
    recorder = ClientCapabilitiesRecorder()
    agent = coding_agent.CodingAgent(args, recorder)
    agent_socket, client_socket = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=agent_socket)
    client_reader, client_writer = await asyncio.open_connection(sock=client_socket)
    serving = asyncio.ensure_future(
        acp.run_agent(
            cast("acp.Agent", agent),  # the SDK calls only the methods an agent has
            agent_writer,
            agent_reader,
            observers=[recorder],
            use_unstable_protocol=True,
        )
    )
    conn = acp.connect_to_agent(
        cast("acp.Client", client),  # the SDK calls only the methods a client has
        client_writer,
        client_reader,
        observers=[client.observe],
        use_unstable_protocol=True,
    )
    try:
        await conn._conn.send_request(
            "initialize",
            {
                "protocolVersion": acp.PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": False,
                    **({"plan": {}} if caps is None else caps),
                },
            },
        )
        yield conn, agent
    finally:
        await conn.close()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        for writer in (client_writer, agent_writer):
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
