"""A griffe extension for the API reference: the code under a docstring's `Example:` line is
shown as a Python code block.

The package's docstrings write examples as plain indented code (readable in `help()` and
editors); Markdown would otherwise run those lines into a paragraph.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(?P<indent>[ \t]*)Examples?:[ \t]*$")


def fenced(text: str) -> str:
    """`text` with the indented block after each `Example:` line wrapped in a ```python fence."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        match = _EXAMPLE.match(lines[i])
        i += 1
        if not match:
            continue
        base = len(match["indent"])
        block: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base
        ):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            i -= 1
            block.pop()
        if not block or block[0].strip().startswith(("```", ">>>")):
            out.extend(block)
            continue
        indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
        pad = " " * indent
        out += [f"{pad}```python", *block, f"{pad}```"]
    return "\n".join(out)


class FencedExamples(griffe.Extension):
    """Fence the example code of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fenced(obj.docstring.value)
