"""The relay: the agent as a child process, and one pump each way that keeps order exactly.

Each direction is a single sequence: a line is relayed (or rewritten) before the next one is
read, so nothing overtakes anything. The two directions never wait on each other: the
client's side is read and written by threads of their own, so a client that stops reading
holds back only what goes to it. The agent's stderr is the proxy's, untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Protocol

from .lines import Lines

_logger = logging.getLogger("llm_plans.proxy")

CHUNK = 256 * 1024
"""How much one read takes from a pipe."""

MAX_UNSENT = 64 * 1024 * 1024
"""How many bytes may wait for a client that is not reading before the agent's side waits
too, as it would on a pipe of its own."""


class Emit(Protocol):
    def __call__(self, data: bytes, /) -> None: ...


class Rewriter(Protocol):
    """What the relay asks of the upgrade (`upgrade.Upgrade`); `Relayed` changes nothing."""

    def from_client(self, line: bytes) -> bytes:
        """The line to send the agent for a whole line the client sent."""
        ...

    async def from_agent(self, line: bytes, emit: Emit) -> None:
        """Emit, in order, what the client gets for a whole line the agent sent."""
        ...


class Relayed:
    """No upgrade at all: every line as it came (`--no-upgrade`)."""

    def from_client(self, line: bytes) -> bytes:
        return line

    async def from_agent(self, line: bytes, emit: Emit) -> None:
        emit(line)


class _ClientOut:
    """The client's stdin, written by a thread of its own: a slow client holds up only the
    agent's side of the relay, and that only past `MAX_UNSENT` bytes."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._unsent = 0
        self._lock = threading.Lock()
        self._room = asyncio.Event()
        self._room.set()
        self.gone = False  # the client closed its end: what follows is dropped
        self._thread = threading.Thread(target=self._run, name="proxy-to-client", daemon=True)
        self._thread.start()

    def emit(self, data: bytes) -> None:
        if not data or self.gone:
            return
        with self._lock:
            self._unsent += len(data)
            if self._unsent > MAX_UNSENT:
                self._room.clear()
        self._queue.put(data)

    async def room(self) -> None:
        await self._room.wait()

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                self.gone = True
            with self._lock:
                self._unsent -= len(data)
                if self._unsent <= MAX_UNSENT:
                    self._loop.call_soon_threadsafe(self._room.set)

    async def close(self) -> None:
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)


MAX_UNREAD_CHUNKS = 256
"""How many chunks (of up to `CHUNK` bytes) the client's side may have read ahead of an agent
that is not reading: past that the reader waits, as the client would on a pipe of its own."""


def _read_client(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    inbox: asyncio.Queue[bytes],
    room: threading.Semaphore,
) -> None:
    """The client's stdout, read by a thread: chunks into `inbox`, b"" at the end; each
    chunk takes one of `room`'s places, given back once the agent has it."""
    while True:
        room.acquire()
        try:
            chunk = os.read(fd, CHUNK)
        except OSError:
            chunk = b""
        loop.call_soon_threadsafe(inbox.put_nowait, chunk)
        if not chunk:
            return


async def _client_to_agent(
    inbox: asyncio.Queue[bytes],
    room: threading.Semaphore,
    agent: asyncio.subprocess.Process,
    rewriter: Rewriter,
) -> None:
    assert agent.stdin is not None
    lines = Lines()
    while chunk := await inbox.get():
        for piece in lines.feed(chunk):
            data = _from_client(rewriter, piece.data) if piece.whole else piece.data
            if not await _write(agent.stdin, data):
                return
        room.release()  # the reader may take the next chunk
    for piece in lines.end():
        await _write(agent.stdin, piece.data)
    with contextlib.suppress(OSError):
        agent.stdin.close()  # the client is done: the agent sees its input end, as it would


def _from_client(rewriter: Rewriter, line: bytes) -> bytes:
    try:
        return rewriter.from_client(line)
    except Exception:  # a bug of ours: the line goes through as it came
        _logger.exception("llm-plans proxy: relaying a line unchanged after an error")
        return line


async def _write(stream: asyncio.StreamWriter, data: bytes) -> bool:
    """False when the agent no longer reads (it exited): the rest is dropped, as a pipe to a
    dead process would."""
    try:
        stream.write(data)
        await stream.drain()
    except (OSError, RuntimeError):
        return False
    return True


async def _agent_to_client(
    agent: asyncio.subprocess.Process, out: _ClientOut, rewriter: Rewriter
) -> None:
    assert agent.stdout is not None
    lines = Lines()
    while chunk := await agent.stdout.read(CHUNK):
        for piece in lines.feed(chunk):
            if piece.whole:
                emitted = 0

                def emit(data: bytes) -> None:
                    nonlocal emitted
                    emitted += 1
                    out.emit(data)

                try:
                    await rewriter.from_agent(piece.data, emit)
                except Exception:  # a bug of ours: the line still goes through, once
                    _logger.exception("llm-plans proxy: relaying a line unchanged after an error")
                    if not emitted:
                        out.emit(piece.data)
            else:
                out.emit(piece.data)
        await out.room()
    for piece in lines.end():
        out.emit(piece.data)


def exit_code(returncode: int) -> int:
    """The proxy's exit code for the agent's: a shell's 128 + N for a signal N."""
    return 128 - returncode if returncode < 0 else returncode


async def relay(
    command: Sequence[str],
    rewriter: Rewriter,
    *,
    client_in: int | None = None,
    client_out: int | None = None,
) -> int:
    """Run `command` as the agent and relay between it and the client until it exits.

    Args:
        command: The agent's command line.
        rewriter: What upgrades the traffic (`Relayed()` for none).
        client_in: The file descriptor the client writes to; stdin by default.
        client_out: The file descriptor the client reads; stdout by default.

    Returns:
        The agent's exit code (128 + N when a signal N ended it); 127 when the command
        cannot be found, 126 when it cannot be run, as a shell says.
    """
    client_in = sys.stdin.fileno() if client_in is None else client_in
    client_out = sys.stdout.fileno() if client_out is None else client_out
    try:
        agent = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
    except FileNotFoundError:
        print(f"llm-plans proxy: {command[0]}: command not found", file=sys.stderr)
        return 127
    except OSError as exc:  # not executable, not a program (a shell says 126 for both)
        print(f"llm-plans proxy: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 126
    loop = asyncio.get_running_loop()
    forwarded = []
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, _forward, agent, signum)
            forwarded.append(signum)
    out = _ClientOut(client_out, loop)
    inbox: asyncio.Queue[bytes] = asyncio.Queue()
    room = threading.Semaphore(MAX_UNREAD_CHUNKS)
    reader = threading.Thread(
        target=_read_client,
        args=(client_in, loop, inbox, room),
        name="client-to-proxy",
        daemon=True,
    )
    reader.start()
    to_agent = asyncio.create_task(_client_to_agent(inbox, room, agent, rewriter))
    try:
        await _agent_to_client(agent, out, rewriter)
        returncode = await agent.wait()
    finally:
        to_agent.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await to_agent
        await out.close()
        for signum in forwarded:
            loop.remove_signal_handler(signum)
    return exit_code(returncode)


def _forward(agent: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        agent.send_signal(signum)
