"""The coding tools: list, read, search and write files, run a command, in the session's cwd.

Reads and writes go through the client's `fs/*` methods when it offers them, commands
through its terminal; writes and commands ask the user first with `session/request_permission`,
whose "Always allow" lasts for the session. No tool reads or writes outside the project,
symlinks included. Each tool reports itself to the client as `tool_call` / `tool_call_update`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption, ToolCallLocation, ToolKind
from pydantic import BaseModel, ConfigDict, Field

from .acp_builders import (
    ToolCallContent,
    diff,
    location,
    permission_subject,
    tool_call_started,
    tool_call_updated,
    tool_text,
)
from .commands import TimedOut, run_in_terminal, run_local
from .search import BadPattern, search

# Enough of a listing to orient a model in a small project without flooding its context.
MAX_LISTED = 200
# Linux's PATH_MAX: no file of the project has a longer path.
MAX_PATH_CHARS = 4096
# Search walks further than a listing shows, within a bound for a huge tree.
MAX_SEARCHED = 10_000
MAX_OUTPUT_CHARS = 20_000
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
    """A regular expression (RE2: Python's syntax without backreferences and lookaround)."""
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
_ALWAYS = {
    "write_file": "Always allow writes in this session",
    "run_command": "Always allow commands in this session",
}
_KINDS: dict[str, ToolKind] = {
    "list_files": "search",
    "read_file": "read",
    "search": "search",
    "write_file": "edit",
    "run_command": "execute",
}


def definitions(provider: str) -> list[dict[str, Any]]:
    """The coding tools in a model API's format."""
    out: list[dict[str, Any]] = []
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


# A client renders a diff in full; a bigger file is data, not an edit to review line by line.
MAX_DIFF_BYTES = 1 << 20


@dataclass(frozen=True)
class Shown:
    """What a tool call shows a client beside its title: content (a diff) and locations."""

    content: tuple[ToolCallContent, ...] = ()
    locations: tuple[ToolCallLocation, ...] = ()


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
        self._always: set[str] = set()
        """The tools the user allowed for the rest of the session ("Always allow")."""

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
        shown = Shown()
        if isinstance(args, WriteFile):
            # The title the permission request uses too; the diff a client renders before
            # the user approves.
            title, shown = f"Write {args.path}"[:120], self._write_preview(args)
        await self._conn.session_update(
            self._session_id,
            tool_call_started(
                call_id,
                title,
                kind=_KINDS[name],
                status="in_progress",
                content=shown.content,
                locations=shown.locations,
            ),
        )
        try:
            text = await getattr(self, f"_{name}")(args, call_id)
            ok = True
        except Unsuccessful as exc:
            text, ok = str(exc), False
        except asyncio.CancelledError:
            # The tool stopped (its command killed); the client hears it ended.
            with contextlib.suppress(Exception):
                await self._conn.session_update(
                    self._session_id,
                    tool_call_updated(call_id, status="failed", content=[tool_text("Cancelled.")]),
                )
            raise
        except Exception as exc:
            text, ok = f"{name} failed: {exc}", False
        text = text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n[cut]"
        await self._conn.session_update(
            self._session_id,
            tool_call_updated(
                call_id,
                status="completed" if ok else "failed",
                content=[*shown.content, tool_text(text)],  # the diff stays on show
            ),
        )
        return text, ok

    def _write_preview(self, args: WriteFile) -> Shown:
        """What a write shows: a diff of the file (its absolute path, the new text, and the
        old text when it exists) and its location; only the location for a file over 1 MiB
        or not UTF-8, and nothing for a path outside the project (the write is refused)."""
        try:
            path = self._file(args.path)
        except (ValueError, OSError):
            return Shown()
        where = (location(str(path)),)
        old: str | None = None
        try:
            if path.exists():
                if path.stat().st_size > MAX_DIFF_BYTES:
                    return Shown(locations=where)
                old = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return Shown(locations=where)
        if len(args.content.encode("utf-8", "surrogatepass")) > MAX_DIFF_BYTES:
            return Shown(locations=where)
        return Shown((diff(str(path), old, args.content),), where)

    def _path(self, relative: str) -> Path:
        """The one workspace check: `relative` resolved (symlinks followed), or ValueError
        when that is outside the project."""
        if len(relative) > MAX_PATH_CHARS:  # resolving costs more than linear in the length
            raise ValueError(
                f"the path is {len(relative)} characters long; paths of up to "
                f"{MAX_PATH_CHARS} are accepted"
            )
        path = (self.root / relative).resolve()
        if path != self.root and self.root not in path.parents:
            raise ValueError(f"{relative} is outside the project")
        return path

    def _files(self, base: Path, limit: int) -> list[str]:
        """Up to `limit` files under `base`, relative to the root; linked folders not entered."""
        found: list[str] = []
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            found += [str((Path(folder) / f).relative_to(self.root)) for f in sorted(files)]
            if len(found) >= limit:
                break
        return found[:limit]

    async def _list_files(self, args: ListFiles, _call_id: str) -> str:
        # Off the loop: listing a folder of many entries reads all of them first.
        files = await asyncio.to_thread(self._files, self._path(args.path), MAX_LISTED)
        return "\n".join(files) or "(no files)"

    def _file(self, relative: str) -> Path:
        """`_path`, refusing what is there but not a regular file: opening a named pipe or a
        device would wait for a writer that never comes."""
        path = self._path(relative)
        if path.exists() and not path.is_file():
            raise ValueError(f"{relative} is not a regular file")
        return path

    async def _read_file(self, args: ReadFile, _call_id: str) -> str:
        path = self._file(args.path)
        if self._client_read:
            response = await self._conn.read_text_file(session_id=self._session_id, path=str(path))
            return str(response.content)
        return await asyncio.to_thread(path.read_text, encoding="utf-8")

    async def _search(self, args: Search, _call_id: str) -> str:
        base = self._path(args.path)
        try:
            return await search(
                args.pattern,
                lambda: self._files(base, MAX_SEARCHED + 1),  # one more tells there were more
                self._path,
                max_files=MAX_SEARCHED,
            )
        except BadPattern as exc:
            raise Unsuccessful(str(exc)) from None

    async def _write_file(self, args: WriteFile, call_id: str) -> str:
        path = self._file(args.path)
        title = f"Write {args.path}"[:120]
        if not await self._allowed(call_id, title, "write_file", self._write_preview(args)):
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
        if not await self._allowed(call_id, f"Run `{args.command}`", "run_command"):
            raise Unsuccessful(
                f"The user declined running `{args.command}`; it did not run. "
                "Ask them how to proceed."
            )
        try:
            if self._client_terminal:
                code, output = await run_in_terminal(
                    self._conn, self._session_id, args.command, self.root
                )
            else:
                code, output = await run_local(args.command, self.root)
        except TimedOut as exc:
            raise Unsuccessful(f"{exc}\n{exc.output}".rstrip("\n")) from None
        return _exited(code, output)

    async def _allowed(
        self, call_id: str, title: str, tool: str, shown: Shown | None = None
    ) -> bool:
        """Whether the user allows this call; "Always allow" answers for the rest of the
        session's calls of `tool` (writes and commands are allowed separately). `shown`: what
        the client shows of the call while it asks (a write's diff)."""
        if tool in self._always:
            return True
        shown = shown or Shown()
        response = await self._conn.request_permission(
            session_id=self._session_id,
            tool_call=permission_subject(
                call_id, title, content=shown.content, locations=shown.locations
            ),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="allow_always", name=_ALWAYS[tool], kind="allow_always"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = response.outcome
        if getattr(outcome, "outcome", "") != "selected":
            return False  # cancelled: the prompt was dismissed, nothing allowed
        chosen = getattr(outcome, "option_id", "")
        if chosen == "allow_always":
            self._always.add(tool)
        return chosen in ("allow", "allow_always")


def _exited(code: int | None, output: str) -> str:
    """A command's result; unsuccessful unless it exited 0."""
    text = f"exit code {code}\n{output}"
    if code != 0:
        raise Unsuccessful(text)
    return text
