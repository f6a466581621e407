"""Bounds on what a model may put into a session's plans."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Configurable bounds; a call that exceeds one is rejected with a message saying which.

    Args:
        max_id_length: The longest plan id, in characters (64).
        max_entries: The most steps an items plan may have (200).
        max_entry_chars: The longest step a client is shown, in characters (1,000).
        max_markdown_chars: The longest markdown plan, in characters (100,000).
        max_arguments_bytes: The largest argument text one call may send, in bytes (512 KiB).
        max_plans: The most active plans a session may hold (20).
        max_path_bytes: The longest file-plan path, in UTF-8 bytes once percent-decoded
            (4,096).
        max_path_components: The most directory levels a file-plan path may have (256).
    """

    max_id_length: int = 64
    """Ids are shown in UIs and echoed to the model on every call: keep them short."""
    max_entries: int = 200
    """Far above any plan a person can follow, low enough to keep a full re-send cheap."""
    max_entry_chars: int = 1_000
    """A step is a sentence or two; more is a document and belongs in a markdown plan."""
    max_markdown_chars: int = 100_000
    """About 25k tokens: more than a model should write as a plan in one call."""
    max_arguments_bytes: int = 512 * 1024
    """Bounds the parse work for one call whatever the model sends."""
    max_plans: int = 20
    """Active plans per session; a client panel with more is no longer readable."""
    max_path_bytes: int = 4096
    """A file plan's path, in UTF-8 bytes once percent-decoded: Linux's PATH_MAX, so no file
    the OS can open is refused, while resolving the path (one lookup per component, at the
    workspace check and at every legacy read) stays a few milliseconds."""
    max_path_components: int = 256
    """Directory levels in a file plan's path: real project paths are a few dozen deep, and
    each level costs a file-system lookup whenever the path is resolved."""
