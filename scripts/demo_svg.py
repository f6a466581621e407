"""Draw docs/assets/demo.svg, the README's picture of the demo, from a real run of it.

    python scripts/demo_svg.py [--out docs/assets/demo.svg]

Runs `llm-plans demo` (the example agent with its scripted model, watched by the demo's ACP
client) with a plan board that keeps the screen as it is at the end of the turn, before any
change mark expires: the finished plan, the follow-ups plan, and the design note the agent
removed, struck through. The board's clock stands still so the picture is the same on every
run, however fast the machine; tests/test_docs.py checks the committed SVG is that picture.
"""

from __future__ import annotations

import argparse
import asyncio
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.text import Text

from llm_plans._cli import demo as _demo
from llm_plans.view import PlanBoard, ShownPlan

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "docs" / "assets" / "demo.svg"
WIDTH = 84


class LastFrame(PlanBoard):
    """A board that keeps what it showed after the latest notification, marks included (the
    demo settles the board once the turn ends)."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 0.0)  # marks never expire: the screen before they do
        self.frame = self.render()

    def apply(self, params: Mapping[str, Any]) -> ShownPlan | str | None:
        changed = super().apply(params)
        self.frame = self.render()
        return changed


def transcript_line(text: str) -> str:
    """The agent's last message in the demo's plain output: not a plan, a tool or a mark."""
    said = [line for line in text.splitlines() if line and not line.startswith(("[", " "))]
    messages = [line for line in said if not line.startswith(("llm_plans demo", "Project:"))]
    return messages[-2] if len(messages) >= 2 else ""  # the last is the turn's summary


async def picture() -> Group:
    """The demo's screen at the end of its turn, as a rich renderable."""
    board = LastFrame()
    out = Console(file=io.StringIO(), width=10_000)  # the plain transcript, lines unwrapped
    code = await _demo.run(console=out, delay=0, board=board)
    if code != 0:
        raise SystemExit(f"the demo failed (exit code {code}):\n{out.file.getvalue()}")  # type: ignore[attr-defined]
    plain = out.file.getvalue()  # type: ignore[attr-defined]
    summary = next(line for line in plain.splitlines() if line.startswith("Turn ended"))
    return Group(
        Text("$ llm-plans demo", style="bold"),
        Text(f"> {_demo.PROMPT}", style="bold"),
        board.frame,
        Text(transcript_line(plain)),
        Text(summary.split(";")[0] + ".", style="dim"),
    )


def draw(path: Path) -> None:
    """Run the demo and write its picture to `path`."""
    console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True)
    console.print(asyncio.run(picture()))
    path.parent.mkdir(parents=True, exist_ok=True)
    console.save_svg(str(path), title="llm-plans demo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=SVG)
    draw(parser.parse_args().out)


if __name__ == "__main__":
    main()
