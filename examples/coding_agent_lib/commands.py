"""Running `run_command`'s shell commands: in a process group of their own, or in the client's
terminal, and stopped whole and promptly when the turn is cancelled or the time is up.

A command line starts children (a test runner's workers, a server in the background); killing
only the shell would leave them running. Each command gets a new session, so its process group
holds everything it started: SIGTERM to the group, then SIGKILL once `KILL_GRACE` is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

COMMAND_TIMEOUT = 120.0
# Time for a command's processes to exit cleanly on SIGTERM before SIGKILL: enough for a test
# runner to remove its temporary files, short enough that a cancelled turn ends promptly.
KILL_GRACE = 2.0
# Output kept from a command; the rest is read and dropped, so `yes` cannot fill the memory.
# The model sees far less (the tool's output limit), this only bounds what is held.
MAX_KEPT_BYTES = 1 << 20


class TimedOut(Exception):
    """The command ran past its time and was stopped; `output` is what it printed."""

    def __init__(self, output: str) -> None:
        super().__init__(f"Timed out after {COMMAND_TIMEOUT:.0f} s.")
        self.output = output


async def run_local(command: str, cwd: Path) -> tuple[int | None, str]:
    """Run `command` with bash in its own process group; its exit code and output.

    Cancelled or timed out, the whole group is stopped before this returns or raises.
    """
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own session and process group, led by the shell
        )
    )
    try:
        process = await asyncio.shield(starting)
    except asyncio.CancelledError:
        # Cancelled while the pipes were being connected: the command already runs, and
        # asyncio would only kill the shell when dropping it. Stop the whole group.
        with contextlib.suppress(Exception):
            await _stop(await starting)
        raise
    chunks: list[bytes] = []
    try:
        await asyncio.wait_for(_read(process, chunks), COMMAND_TIMEOUT)
    except asyncio.TimeoutError:
        await _stop(process)
        raise TimedOut(b"".join(chunks).decode(errors="replace")) from None
    except BaseException:  # cancelled: the turn is over, and so is its command
        await _stop(process)
        raise
    return process.returncode, b"".join(chunks).decode(errors="replace")


async def _read(process: asyncio.subprocess.Process, chunks: list[bytes]) -> None:
    assert process.stdout is not None
    kept = 0
    while chunk := await process.stdout.read(65536):
        if kept < MAX_KEPT_BYTES:
            chunks.append(chunk[: MAX_KEPT_BYTES - kept])
            kept += len(chunks[-1])
    await process.wait()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the command's group, SIGKILL to what is left after `KILL_GRACE`."""
    _signal(process.pid, signal.SIGTERM)
    try:
        # A second cancellation must not skip the SIGKILL below.
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE)
    finally:
        # Unconditionally: the shell may have exited on SIGTERM while a child ignores it.
        _signal(process.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE)
        # Read the pipe to its end: asyncio closes it (and the process's transport) only at
        # EOF, and a reader left paused on a full buffer would keep both open until the
        # garbage collector warns about them.
        await asyncio.wait_for(asyncio.shield(_drain(process)), KILL_GRACE)


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stdout is not None
    while await process.stdout.read(65536):
        pass


def _signal(group: int, number: int) -> None:
    # The group's id is the shell's pid (start_new_session); once every member is gone,
    # there is nothing left to signal.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, number)


async def run_in_terminal(
    conn: Any, session_id: str, command: str, cwd: Path
) -> tuple[int | None, str]:
    """Run `command` in the client's terminal; its exit code and output.

    Cancelled or timed out, the terminal's command is killed and the terminal released
    before this returns or raises.
    """
    ids = {"session_id": session_id}
    creating = asyncio.ensure_future(
        conn.create_terminal(
            command="bash",
            args=["-c", command],
            cwd=str(cwd),
            output_byte_limit=MAX_KEPT_BYTES,  # the client keeps no more than the agent would
            **ids,
        )
    )
    try:
        terminal = await asyncio.shield(creating)
    except asyncio.CancelledError:
        # Cancelled while the client was starting it: once it has, stop it all the same.
        with contextlib.suppress(Exception):
            ids["terminal_id"] = (await creating).terminal_id
            await conn.kill_terminal(**ids)
            await conn.release_terminal(**ids)
        raise
    ids["terminal_id"] = terminal.terminal_id
    try:
        try:
            status = await asyncio.wait_for(conn.wait_for_terminal_exit(**ids), COMMAND_TIMEOUT)
        except asyncio.TimeoutError:
            await conn.kill_terminal(**ids)
            output = await conn.terminal_output(**ids)
            raise TimedOut(str(output.output)) from None
        except BaseException:  # cancelled
            # The client may already be gone; the cancellation is what goes on.
            with contextlib.suppress(Exception):
                await conn.kill_terminal(**ids)
            raise
        output = await conn.terminal_output(**ids)
    finally:
        with contextlib.suppress(Exception):
            await conn.release_terminal(**ids)
    return status.exit_code, str(output.output)
