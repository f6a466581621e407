"""`llm-plans agent`: the example coding agent, run from wherever this install keeps it.

The agent is an example, not part of the library's API: its code stays in `examples/` (a
wheel carries that folder as `llm_plans/_examples`), and this module only finds it and runs
it in this process, with the command line it shares with `python examples/coding_agent.py`.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from importlib import resources
from pathlib import Path
from types import ModuleType

PROG = "llm-plans agent"
# The exit status of a refusal to start, as argparse's own errors.
REFUSED = 2


def examples_dir() -> Path:
    """The folder holding the example agent (`coding_agent.py`, `coding_agent_lib/`) and the
    sample project the demo runs it on.

    One rule for both ways llm_plans is installed: a wheel carries `examples/` as the package
    data folder `llm_plans/_examples` (pyproject.toml maps it there), and a checkout (or an
    editable install of one) has no such folder, so the `examples/` beside the package is
    used, edits included.
    """
    # A real directory, not just a Traversable: the agent runs as a subprocess from it.
    packaged = Path(str(resources.files("llm_plans") / "_examples"))
    checkout = Path(__file__).resolve().parents[2] / "examples"
    for folder in (packaged, checkout):
        if (folder / "coding_agent.py").is_file():
            return folder
    raise FileNotFoundError(
        f"the example agent is in neither {packaged} nor {checkout}: this copy of llm_plans "
        "was installed without it; install it from a wheel, or run from a checkout"
    )


def example(name: str) -> ModuleType:
    """A module of the example agent (`coding_agent`, `coding_agent_lib.cli`), imported as
    `python examples/coding_agent.py` imports it: with its folder first on sys.path."""
    folder = str(examples_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)


def run(argv: list[str]) -> int:
    """Serve the example agent on stdio until the client closes it; its exit status."""
    try:
        agent = example("coding_agent")
    except ImportError as exc:  # the ACP SDK or another part of the agent extra is missing
        example("coding_agent_lib.cli").parse_args(argv, PROG)  # --help and bad options first
        print(
            f"{PROG} needs the agent extra: pip install 'llm-plans[agent]' ({exc})",
            file=sys.stderr,
        )
        return REFUSED
    status: int = asyncio.run(agent.main(argv, PROG))
    return status
