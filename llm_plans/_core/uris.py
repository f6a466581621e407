"""Normalise the location of a file plan into an absolute `file:` URI, or say why not.

A path comes from the model, so every step here is linear in its length and the path is
refused past `Limits.max_path_bytes` and `Limits.max_path_components` before anything
resolves it: resolving costs one file-system lookup per component, over the whole path so far.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote, urlsplit

from .._limits import Limits

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SEPARATORS = re.compile(r"/+")
_WHAT_TO_DO = "Send the plain absolute path of the plan file, or use a markdown plan."


def file_uri(value: str, workspace: Path | None, limits: Limits) -> str:
    """`value` (a `file:` URI or an absolute path) as an absolute `file:` URI.

    Raises ValueError with a message for the model when the value is another scheme, a
    relative path, a path longer or deeper than `limits` allow, or (with a workspace) a path
    that leaves the workspace, also via symlinks.
    """
    # Percent-encoding at most triples a path: a longer location cannot hold an accepted
    # one, and is refused before it is parsed or decoded (Python's unquote is slow per %XX).
    text = value.strip()
    longest = 3 * limits.max_path_bytes + len("file://localhost")
    if len(text) > longest:
        raise ValueError(
            f"the location is {len(text)} characters long; at most {longest} are accepted "
            f"(a path of at most {limits.max_path_bytes} bytes, percent-encoded). " + _WHAT_TO_DO
        )
    if _CONTROL.search(text):
        raise ValueError("control characters are not allowed in a file location.")
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # a malformed host part, such as an unclosed "["
        raise ValueError(
            f"not a valid URI ({exc}); send an absolute path or a file: URI such as "
            '"file:///path/to/plan.md".'
        ) from None
    if parts.scheme.lower() == "file":
        if parts.netloc not in ("", "localhost"):
            raise ValueError("only local file: URIs are accepted (no host name).")
        raw = unquote(parts.path)
        if _CONTROL.search(raw):  # percent-encoded: the decoded path is what a client sees
            raise ValueError("control characters are not allowed in a file location.")
    elif parts.scheme:
        raise ValueError(
            f'the "{parts.scheme[:40]}:" scheme is not accepted; '
            'use a file: URI such as "file:///path/to/plan.md" or an absolute path.'
        )
    else:
        raw = text
    if not raw.startswith("/"):
        raise ValueError(
            "relative paths are not accepted; send an absolute path or a file: URI"
            + (f" (the workspace is {workspace})." if workspace else ".")
        )
    problem = path_problem(raw, limits)
    if problem is not None:
        raise ValueError(problem)
    path = Path(os.path.normpath(raw))
    if workspace is not None and resolved_inside(path, workspace, limits) is None:
        raise ValueError(f"the file must be inside the workspace {os.path.realpath(workspace)}.")
    return "file://" + quote(str(PurePosixPath(path)), safe="/:@!$&'()*+,;=-._~")


def path_problem(raw: str, limits: Limits) -> str | None:
    """Why the decoded path `raw` is too long or too deep to resolve, or None."""
    size = len(raw.encode("utf-8", "surrogatepass"))
    if size > limits.max_path_bytes:
        return (
            f"the path is {size} bytes long; at most {limits.max_path_bytes} bytes are "
            "accepted. " + _WHAT_TO_DO
        )
    # Separators, not os.path.normpath: that splits and joins; this counts in one pass.
    depth = len(_SEPARATORS.findall(raw.rstrip("/")))
    if depth > limits.max_path_components:
        return (
            f"the path has {depth} components; at most {limits.max_path_components} are "
            "accepted. " + _WHAT_TO_DO
        )
    return None


def resolved_inside(path: Path, workspace: Path | None, limits: Limits) -> Path | None:
    """`path` with its links resolved, or None when it leaves `workspace` (or cannot be
    resolved, or is past the path limits). realpath resolves symlinks, so a link inside the
    workspace that points out of it is caught as well as `..`."""
    if path_problem(str(path), limits) is not None:
        return None  # never resolved: the cost of resolving grows with length times depth
    try:
        resolved = Path(os.path.realpath(path))
        if workspace is None:
            return resolved
        root = Path(os.path.realpath(workspace))
    except (OSError, ValueError):
        return None
    # is_relative_to compares components once; `root in resolved.parents` built every
    # parent of the path, quadratic in its depth.
    return resolved if resolved.is_relative_to(root) else None
