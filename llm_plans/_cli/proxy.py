"""`llm-plans proxy [options] -- <agent command> [args...]`: the proxy as a command."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from .._proxy.relay import Relayed, Rewriter, relay
from .._proxy.upgrade import Upgrade

DESCRIPTION = """\
An ACP agent in front of another: start it from any ACP client in place of the agent. It
starts the agent command given after `--`, relays every message between the two in order,
and sends the agent's plans in the best form the client negotiated: opencode's and Mistral
Vibe's todo lists, claude-agent-acp's and codex-acp's lists, plan-mode proposals and
subagents' plans. Anything else passes byte for byte."""

EPILOG = """\
examples:
  llm-plans proxy -- opencode acp
  acpx --agent "llm-plans proxy -- claude-agent-acp" "plan the refactor"
  Zed settings.json: "agent_servers": {"opencode + plans": {"type": "custom",
      "command": "llm-plans", "args": ["proxy", "--", "opencode", "acp"]}}"""


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(
        prog="llm-plans proxy",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    result.add_argument(
        "--no-upgrade",
        action="store_true",
        help="change nothing: relay every message as it is (to compare with the upgrade)",
    )
    result.add_argument(
        "--quiet",
        action="store_true",
        help="no log lines on stderr (the agent's own stderr still passes)",
    )
    result.add_argument("command", nargs=argparse.REMAINDER, help="the agent's command line")
    return result


def run(argv: list[str]) -> int:
    """Parse `argv` (what follows `proxy`), relay until the agent exits, return its code."""
    if "--" in argv:
        at = argv.index("--")
        options, command = argv[:at], argv[at + 1 :]
    else:
        options, command = argv, []
    args = parser().parse_args(options)
    command = command or args.command
    if not command:
        parser().error("give the agent's command after --: llm-plans proxy -- opencode acp")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("llm_plans.proxy")
    logger.addHandler(handler)
    logger.setLevel(logging.CRITICAL if args.quiet else logging.WARNING)
    logger.propagate = False
    rewriter: Rewriter = Relayed() if args.no_upgrade else Upgrade(command)
    return asyncio.run(relay(command, rewriter))
