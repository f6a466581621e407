"""The `llm-plans` command: the example coding agent, offline in a demo or served to an ACP
client."""

from __future__ import annotations

import argparse
import asyncio
import sys

from .. import __version__

DESCRIPTION = """\
llm_plans gives LLM coding agents plan tools and forwards their plans to ACP clients.
This command runs its example coding agent, which plans with it: in a demo, or for you."""

EPILOG = """\
examples:
  llm-plans demo
  acpx --approve-all --agent "llm-plans agent --model gpt-4.1" exec "fix the failing test"
  acpx --agent "llm-plans proxy -- opencode acp" "plan the refactor"

`llm-plans agent --help` lists the agent's options, with Zed's settings; `llm-plans proxy
--help` the proxy's."""

PROXY_HELP = (
    "put in front of an ACP agent (opencode, claude-agent-acp, codex-acp, Mistral Vibe): "
    "relays everything and sends its plans in the client's best form; `llm-plans proxy -- "
    "<agent command>`"
)

AGENT_HELP = (
    "serve the example coding agent to an ACP client (acpx, Zed, ...) over stdio, with your "
    "model; `llm-plans agent --help` for its options"
)


def _delay(text: str) -> float:
    """--delay is the agent's --script-delay, checked by the agent's own rule."""
    from .agent import example

    seconds: float = example("coding_agent_lib.cli").seconds(text)
    return seconds


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog="llm-plans",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    result.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = result.add_subparsers(
        title="commands", dest="command", required=True, metavar="{demo,agent,proxy}"
    )
    demo = commands.add_parser(
        "demo",
        help="watch the example agent fix a sample project, offline, with its plans shown live",
        description=(
            "Copy a small sample project into a temporary folder, start the example agent "
            "on it with its scripted offline model (no key, no network), connect to it as an "
            "ACP client and show its plans live as it works. Needs the agent extra: "
            "pip install 'llm-plans[agent]'."
        ),
    )
    demo.add_argument(
        "--legacy",
        action="store_true",
        help="connect as a client without plan capability, which gets the legacy `plan` list",
    )
    demo.add_argument(
        "--keep", action="store_true", help="keep the edited sample project and say where"
    )
    demo.add_argument(
        "--delay",
        type=_delay,
        default=None,
        metavar="SECONDS",
        help="seconds between the streamed fragments of the scripted model (default 0.03)",
    )
    # Only listed here: `llm-plans agent ...` goes to the agent's own parser (see main).
    commands.add_parser("agent", help=AGENT_HELP, add_help=False)
    commands.add_parser("proxy", help=PROXY_HELP, add_help=False)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["agent"]:
        # The agent's options, help and checks are the ones `python examples/coding_agent.py`
        # has: one parser, in the example's coding_agent_lib/cli.py.
        from . import agent

        return agent.run(argv[1:])
    if argv[:1] == ["proxy"]:
        from . import proxy

        return proxy.run(argv[1:])
    args = parser().parse_args(argv)
    try:
        from . import demo
    except ImportError as exc:  # rich or the ACP SDK missing
        print(
            f"llm-plans demo needs the agent extra: pip install 'llm-plans[agent]' ({exc})",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(demo.run(legacy=args.legacy, keep=args.keep, delay=args.delay))


if __name__ == "__main__":
    raise SystemExit(main())
