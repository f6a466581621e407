"""The ACP values the examples send, built the same way on the ACP Python SDK 0.12 and 1.0.

SDK 1.0 drops the builders 0.12 had (`acp.update_agent_message_text`, `acp.start_tool_call`,
`acp.text_block`, ...); its answer is to construct `acp.schema` models directly. Those models
are in both versions, with one difference that matters here: 0.12 requires each tag
(`session_update="tool_call"`, `type="text"`) where 1.0 defaults it. These builders always
pass the tags, so each works with either SDK and sends the same JSON.

The library itself needs none of this: `acp_send` and `ClientCapabilitiesRecorder` speak
plain JSON to the SDK's connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    Implementation,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

__all__ = [
    "agent_info",
    "diff",
    "location",
    "message_text",
    "permission_subject",
    "tool_call_started",
    "tool_call_updated",
    "tool_text",
]


def message_text(text: str) -> AgentMessageChunk:
    """A chunk of the agent's message to the user, as `session/update` carries it."""
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def tool_text(text: str) -> ContentToolCallContent:
    """Text shown in a tool call: its output, or why it failed."""
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def diff(path: str, old_text: str | None, new_text: str) -> FileEditToolCallContent:
    """A file edit shown in a tool call; `old_text` None for a new file. `path` is absolute."""
    return FileEditToolCallContent(type="diff", path=path, old_text=old_text, new_text=new_text)


def location(path: str, line: int | None = None) -> ToolCallLocation:
    """A file (and a line of it) a tool call works on, for the client to follow along; `path`
    is absolute."""
    return ToolCallLocation(path=path, line=line)


def tool_call_started(
    call_id: str,
    title: str,
    *,
    kind: ToolKind | None = None,
    status: ToolCallStatus | None = None,
    content: Sequence[ToolCallContent] = (),
    locations: Sequence[ToolCallLocation] = (),
    raw_input: Any = None,
) -> ToolCallStart:
    """The `tool_call` update that shows the client a new tool call."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=title,
        kind=kind,
        status=status,
        content=list(content) or None,
        locations=list(locations) or None,
        raw_input=raw_input,
    )


def tool_call_updated(
    call_id: str,
    *,
    status: ToolCallStatus | None = None,
    title: str | None = None,
    content: Sequence[ToolCallContent] | None = None,
    locations: Sequence[ToolCallLocation] | None = None,
    raw_output: Any = None,
) -> ToolCallProgress:
    """A `tool_call_update`: only what is given changes; `content` replaces the shown content."""
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status=status,
        title=title,
        content=None if content is None else list(content),
        locations=None if locations is None else list(locations),
        raw_output=raw_output,
    )


def permission_subject(
    call_id: str,
    title: str,
    *,
    content: Sequence[ToolCallContent] = (),
    locations: Sequence[ToolCallLocation] = (),
) -> ToolCallUpdate:
    """The tool call a permission request asks about, as the client shows it while it asks:
    its title, and what it would do (a diff) and where."""
    return ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        content=list(content) or None,
        locations=list(locations) or None,
    )


def agent_info(name: str, version: str, title: str | None = None) -> Implementation:
    """The agent's name and version, for `initialize`'s `agentInfo`."""
    return Implementation(name=name, version=version, title=title)
