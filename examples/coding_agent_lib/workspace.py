"""The coding tools: list, read, search and write files, run a command, in the session's cwd.

Reads and writes go through the client's `fs/*` methods when it offers them, commands
through its terminal; writes and commands ask the user first with `session/request_permission`.
Each tool reports itself to the client as `tool_call` / `tool_call_update`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from pathlib import Path
from typing import Any

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import PermissionOption, ToolCallUpdate
from pydantic import BaseModel, ConfigDict, Field

# Enough of a listing to orient a model in a small project without flooding its context.
MAX_LISTED = 200
MAX_OUTPUT_CHARS = 20_000
COMMAND_TIMEOUT = 120.0
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"}


class Unsuccessful(Exception):
    """The tool ran but did not do what was asked (declined, non-zero exit); the message is
    the tool result the model reads, unchanged."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ListFiles(_Args):
    """List the files under a directory of the project."""

    path: str = "."
    """Directory, relative to the project root."""


class ReadFile(_Args):
    """Read a text file of the project."""

    path: str
    """File, relative to the project root."""


class Search(_Args):
    """Search the project's text files for a regular expression."""

    pattern: str
    """A Python regular expression."""
    path: str = "."
    """Directory to search, relative to the project root."""


class WriteFile(_Args):
    """Write a text file of the project (replacing it). The user is asked first."""

    path: str
    """File, relative to the project root."""
    content: str = Field()
    """The complete new content."""


class RunCommand(_Args):
    """Run a shell command in the project root. The user is asked first."""

    command: str
    """The command line, run with bash."""


TOOLS: dict[str, type[_Args]] = {
    "list_files": ListFiles,
    "read_file": ReadFile,
    "search": Search,
    "write_file": WriteFile,
    "run_command": RunCommand,
}
_KINDS = {
    "list_files": "search",
    "read_file": "read",
    "search": "search",
    "write_file": "edit",
    "run_command": "execute",
}


def definitions(provider: str) -> list[dict[str, Any]]:
    """The coding tools in a model API's format."""
    out = []
    for name, model in TOOLS.items():
        schema = model.model_json_schema()
        schema.pop("title", None)
        description = schema.pop("description", "")
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema["additionalProperties"] = False
        if provider == "openai_chat":
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": description,
                        "parameters": schema,
                        "strict": False,
                    },
                }
            )
        elif provider == "openai_responses":
            out.append(
                {
                    "type": "function",
                    "name": name,
                    "description": description,
                    "parameters": schema,
                    "strict": False,
                }
            )
        else:
            out.append({"name": name, "description": description, "input_schema": schema})
    return out


class Workspace:
    """Runs coding tools for one ACP session."""

    def __init__(self, conn: Any, session_id: str, cwd: str, caps: dict[str, Any]) -> None:
        self._conn = conn
        self._session_id = session_id
        self.root = Path(cwd).resolve()
        fs = caps.get("fs") or {}
        self._client_read = bool(fs.get("readTextFile"))
        self._client_write = bool(fs.get("writeTextFile"))
        self._client_terminal = bool(caps.get("terminal"))
        self._ids = itertools.count(1)

    async def run(self, name: str, arguments: str) -> tuple[str, bool]:
        """Run one coding tool call; the text for the model and whether it succeeded."""
        if name not in TOOLS:
            return f"Unknown tool {name!r}; tools: {', '.join(TOOLS)}.", False
        try:
            args = TOOLS[name].model_validate_json(arguments or "{}")
        except ValueError as exc:
            return f"Invalid arguments for {name}: {exc}. Fix them and try again.", False
        call_id = f"tool_{next(self._ids)}"
        subject = next((str(v) for k, v in args.model_dump().items() if k != "content"), "")
        title = f"{name} {subject}"[:120]
        await self._conn.session_update(
            self._session_id,
            start_tool_call(call_id, title, kind=_KINDS[name], status="in_progress"),
        )
        try:
            text = await getattr(self, f"_{name}")(args, call_id)
            ok = True
        except Unsuccessful as exc:
            text, ok = str(exc), False
        except Exception as exc:
            text, ok = f"{name} failed: {exc}", False
        text = text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n[cut]"
        await self._conn.session_update(
            self._session_id,
            update_tool_call(
                call_id,
                status="completed" if ok else "failed",
                content=[tool_content(text_block(text))],
            ),
        )
        return text, ok

    def _path(self, relative: str) -> Path:
        path = (self.root / relative).resolve()
        if path != self.root and self.root not in path.parents:
            raise ValueError(f"{relative} is outside the project")
        return path

    async def _list_files(self, args: ListFiles, _call_id: str) -> str:
        base = self._path(args.path)
        found = []
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            found += [str((Path(folder) / f).relative_to(self.root)) for f in sorted(files)]
            if len(found) >= MAX_LISTED:
                break
        return "\n".join(found[:MAX_LISTED]) or "(no files)"

    async def _read_file(self, args: ReadFile, _call_id: str) -> str:
        path = self._path(args.path)
        if self._client_read:
            response = await self._conn.read_text_file(session_id=self._session_id, path=str(path))
            return str(response.content)
        return path.read_text(encoding="utf-8")

    async def _search(self, args: Search, _call_id: str) -> str:
        pattern = re.compile(args.pattern)
        hits = []
        for listed in (await self._list_files(ListFiles(path=args.path), "")).splitlines():
            try:
                lines = (self.root / listed).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            hits += [
                f"{listed}:{n}: {line}" for n, line in enumerate(lines, 1) if pattern.search(line)
            ]
        return "\n".join(hits[:MAX_LISTED]) or "(no matches)"

    async def _write_file(self, args: WriteFile, call_id: str) -> str:
        path = self._path(args.path)
        if not await self._allowed(call_id, f"Write {args.path}"):
            raise Unsuccessful(
                f"The user declined writing {args.path}; it is unchanged. Ask them how to proceed."
            )
        if self._client_write:
            await self._conn.write_text_file(
                session_id=self._session_id, path=str(path), content=args.content
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args.content, encoding="utf-8")
        return f"Wrote {args.path} ({len(args.content)} characters)."

    async def _run_command(self, args: RunCommand, call_id: str) -> str:
        if not await self._allowed(call_id, f"Run `{args.command}`"):
            raise Unsuccessful(
                f"The user declined running `{args.command}`; it did not run. "
                "Ask them how to proceed."
            )
        if self._client_terminal:
            code, output = await self._in_client_terminal(args.command)
            return _exited(code, output)
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            args.command,
            cwd=self.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), COMMAND_TIMEOUT)
        except asyncio.TimeoutError:
            process.kill()
            raise Unsuccessful(f"Timed out after {COMMAND_TIMEOUT:.0f} s.") from None
        return _exited(process.returncode, out.decode(errors="replace"))

    async def _in_client_terminal(self, command: str) -> tuple[int | None, str]:
        terminal = await self._conn.create_terminal(
            session_id=self._session_id, command="bash", args=["-c", command], cwd=str(self.root)
        )
        try:
            status = await self._conn.wait_for_terminal_exit(
                session_id=self._session_id, terminal_id=terminal.terminal_id
            )
            output = await self._conn.terminal_output(
                session_id=self._session_id, terminal_id=terminal.terminal_id
            )
        finally:
            await self._conn.release_terminal(
                session_id=self._session_id, terminal_id=terminal.terminal_id
            )
        return status.exit_code, output.output

    async def _allowed(self, call_id: str, title: str) -> bool:
        response = await self._conn.request_permission(
            session_id=self._session_id,
            tool_call=ToolCallUpdate(tool_call_id=call_id, title=title),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = response.outcome
        return (
            getattr(outcome, "outcome", "") == "selected"
            and getattr(outcome, "option_id", "") == "allow"
        )


def _exited(code: int | None, output: str) -> str:
    """A command's result; unsuccessful unless it exited 0."""
    text = f"exit code {code}\n{output}"
    if code != 0:
        raise Unsuccessful(text)
    return text
