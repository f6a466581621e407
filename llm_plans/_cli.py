"""The `llm-plans` command."""

from __future__ import annotations

import argparse
import asyncio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="llm-plans", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run the example agent (offline) on a sample project and watch its plans"
    )
    demo.add_argument(
        "--legacy",
        action="store_true",
        help="connect as a client without plan capability (legacy fallback)",
    )
    demo.add_argument("--keep", action="store_true", help="keep the edited sample project")
    demo.add_argument(
        "--delay",
        type=float,
        default=None,
        help="seconds between streamed fragments of the scripted model",
    )
    args = parser.parse_args(argv)
    try:
        from . import _demo
    except ImportError as exc:  # rich or the ACP SDK missing
        parser.exit(
            2, f"llm-plans demo needs the agent extra: pip install 'llm-plans[agent]' ({exc})\n"
        )
    return asyncio.run(_demo.run(legacy=args.legacy, keep=args.keep, delay=args.delay))


if __name__ == "__main__":
    raise SystemExit(main())
