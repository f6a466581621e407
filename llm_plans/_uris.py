"""Normalise the location of a file plan into an absolute `file:` URI, or say why not."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit


def file_uri(value: str, workspace: Path | None) -> str:
    """`value` (a `file:` URI or an absolute path) as an absolute `file:` URI.

    Raises ValueError with a message for the model when the value is another scheme, a
    relative path, or (with a workspace) a path that leaves the workspace, also via symlinks.
    """
    text = value.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("control characters are not allowed in a file location.")
    parts = urlsplit(text)
    if parts.scheme.lower() == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError("only local file: URIs are accepted (no host name).")
        raw = unquote(parts.path)
    elif parts.scheme:
        raise ValueError(
            f'the "{parts.scheme}:" scheme is not accepted; '
            'use a file: URI such as "file:///path/to/plan.md" or an absolute path.'
        )
    else:
        raw = text
    if not raw.startswith("/"):
        raise ValueError(
            "relative paths are not accepted; send an absolute path or a file: URI"
            + (f" (the workspace is {workspace})." if workspace else ".")
        )
    path = Path(os.path.normpath(raw))
    if workspace is not None and resolved_inside(path, workspace) is None:
        raise ValueError(f"the file must be inside the workspace {os.path.realpath(workspace)}.")
    return "file://" + quote(str(PurePosixPath(path)), safe="/:@!$&'()*+,;=-._~")


def resolved_inside(path: Path, workspace: Path | None) -> Path | None:
    """`path` with its links resolved, or None when it leaves `workspace` (or cannot be
    resolved). realpath resolves symlinks, so a link inside the workspace that points out of
    it is caught as well as `..`."""
    try:
        resolved = Path(os.path.realpath(path))
        if workspace is None:
            return resolved
        root = Path(os.path.realpath(workspace))
    except (OSError, ValueError):
        return None
    return resolved if resolved == root or root in resolved.parents else None
