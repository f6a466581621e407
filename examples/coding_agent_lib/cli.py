"""The example agent's command line, shared by `llm-plans agent` and
`python examples/coding_agent.py`: its options, which model API and model run, and the
checks made before speaking ACP (a terminal instead of a client, a missing key).

Nothing here imports a model SDK or the ACP SDK at import time, so `--help` and every
start-up refusal work in an install without the `agent` extra.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .models import Backend

APIS = ("openai-chat", "openai-responses", "anthropic")
KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai-chat": "OPENAI_API_KEY"}
KEYS["openai-responses"] = KEYS["openai-chat"]
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5", "openai-chat": "gpt-4.1"}
DEFAULT_MODELS["openai-responses"] = DEFAULT_MODELS["openai-chat"]
SCRIPTED = "scripted"
DATA_FOLDER = "llm-plans-agent"
# The scripted model's pause between streamed fragments when none is given: the plan
# visibly grows in a client, and the whole script still takes only seconds.
SCRIPT_DELAY = 0.03
# Exit status of every refusal to start (argparse uses the same for bad options).
REFUSED = 2

DESCRIPTION = """\
An example coding agent that plans with llm_plans, speaking the Agent Client Protocol (ACP)
over stdio: an ACP client (acpx, Zed, ...) starts it and talks to it through its stdin and
stdout. It edits files and runs commands through the client, asking permission first, and
shows its plans as it writes them. Plans are kept in sqlite under --data-dir, so a client
that loads a session after a restart sees the same plans.

It runs the model you name, with that API's key from the environment: OPENAI_API_KEY for
the OpenAI APIs, ANTHROPIC_API_KEY for Anthropic. `--model scripted` runs an offline,
scripted model instead (no key, no network): it follows a fixed script that fixes the bug
in llm_plans' sample project, editing files as it goes, once per session; anywhere else it
stops before writing anything."""

EPILOG = """\
examples:
  acpx --approve-all --agent "{command} --model gpt-4.1" exec "fix the failing test"
  acpx --agent "{command} --api anthropic --model claude-sonnet-5" exec "..."
  {command} --model qwen3 --base-url http://localhost:11434/v1   (OpenAI-compatible server)

Zed, in settings.json under "agent_servers":
  "llm-plans": {zed}

environment: LLM_PLANS_MODEL, LLM_PLANS_API, LLM_PLANS_BASE_URL, LLM_PLANS_DATA_DIR and
LLM_PLANS_SCRIPT_DELAY give the defaults of the options of the same names."""


class MissingKey(Exception):
    """The model API to use has no key set; the message says which variable to set."""


def default_data_dir(environ: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    """Where plans are kept without --data-dir: `$XDG_DATA_HOME/llm-plans-agent`, or
    `~/.local/share/llm-plans-agent` when XDG_DATA_HOME is unset, empty or relative (the
    XDG Base Directory spec says to ignore a relative one)."""
    xdg = environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / DATA_FOLDER


def seconds(text: str) -> float:
    """An argparse type: a finite, non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds, 0 or more")
    return value


def base_url(text: str) -> str:
    """An argparse type: an http(s) URL with a host, as the model SDKs take it."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http:// or https:// URL, e.g. http://localhost:11434/v1"
        )
    return text


def model_name(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the model name is empty")
    return text


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The agent's argument parser; `prog` names the command in help and messages."""
    prog = prog or "coding_agent.py"
    env = os.environ
    result = argparse.ArgumentParser(
        prog=prog,
        description=DESCRIPTION,
        epilog=EPILOG.format(command=shlex.join(launch(prog)), zed=_zed(prog)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    result.add_argument(
        "--model",
        type=model_name,
        default=env.get("LLM_PLANS_MODEL") or None,
        metavar="NAME",
        help=(
            "the model to run, as its API names it (e.g. gpt-4.1, claude-sonnet-5), or "
            "'scripted' for the offline scripted model. Without it, the API's default model "
            f"runs ({DEFAULT_MODELS['openai-chat']} or {DEFAULT_MODELS['anthropic']}) if its "
            "key is set"
        ),
    )
    result.add_argument(
        "--api",
        choices=APIS,
        default=env.get("LLM_PLANS_API") or None,
        help=(
            "the model API: OpenAI Chat Completions (also what OpenAI-compatible servers "
            "speak), OpenAI Responses, or Anthropic Messages. Default: anthropic for a model "
            "named claude-*, or when only ANTHROPIC_API_KEY is set; otherwise openai-chat"
        ),
    )
    result.add_argument(
        "--base-url",
        type=base_url,
        default=env.get("LLM_PLANS_BASE_URL") or None,
        metavar="URL",
        help=(
            "the API's base URL, for an OpenAI-compatible server (vLLM, Ollama, LiteLLM, ...) "
            "or a proxy; default: the SDK's (OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the "
            "vendor's). Needs --model"
        ),
    )
    result.add_argument(
        "--data-dir",
        type=Path,
        default=Path(env["LLM_PLANS_DATA_DIR"]) if env.get("LLM_PLANS_DATA_DIR") else None,
        metavar="DIR",
        help=(
            "where sessions' plans are kept (sqlite), so that loading a session after a "
            f"restart shows them; default: $XDG_DATA_HOME/{DATA_FOLDER}, or "
            f"~/.local/share/{DATA_FOLDER} without XDG_DATA_HOME (now: {default_data_dir()})"
        ),
    )
    result.add_argument(
        "--script-delay",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help=(
            "with --model scripted: seconds between the streamed fragments of its plan calls "
            f"(default {SCRIPT_DELAY})"
        ),
    )
    return result


def parse_args(argv: list[str] | None = None, prog: str | None = None) -> argparse.Namespace:
    """The options, checked; a bad option or combination exits with argparse's usage error."""
    command = parser(prog)
    args = command.parse_args(argv)
    if args.api is not None and args.api not in APIS:  # argparse checks choices given, not defaults
        command.error(f"LLM_PLANS_API: {args.api!r} is not one of {', '.join(APIS)}")
    if args.base_url and args.model == SCRIPTED:
        command.error("--base-url is for a model API; --model scripted runs offline")
    if args.base_url and not args.model:
        command.error("--base-url needs --model: the model name the server knows")
    if args.script_delay is None:
        delay = os.environ.get("LLM_PLANS_SCRIPT_DELAY")
        try:
            args.script_delay = seconds(delay) if delay else SCRIPT_DELAY
        except argparse.ArgumentTypeError as exc:
            command.error(f"LLM_PLANS_SCRIPT_DELAY: {exc}")
    if args.data_dir is None:
        args.data_dir = default_data_dir()
    args.prog = command.prog
    return args


def resolve_api(args: argparse.Namespace) -> str:
    """The API to use, "scripted" only when named; MissingKey when its key is not set.

    Never the scripted model by default: it edits the sample project's files by a fixed
    script, which in any other project would look like a model gone mad.
    """
    if args.model == SCRIPTED:
        return SCRIPTED
    env = os.environ
    api: str = args.api or (
        "anthropic"
        if (args.model or "").startswith("claude")
        or (not args.model and env.get("ANTHROPIC_API_KEY") and not env.get("OPENAI_API_KEY"))
        else "openai-chat"
    )
    if env.get(KEYS[api]):
        return api
    prog = getattr(args, "prog", "coding_agent.py")
    local = (
        f" A local server that ignores keys takes any value, e.g. {KEYS[api]}=none."
        if args.base_url
        else ""
    )
    if args.model is None and args.api is None:
        raise MissingKey(
            f"{prog}: no model API key is set: set OPENAI_API_KEY (for OpenAI) or "
            "ANTHROPIC_API_KEY (for Anthropic) in the agent's environment, and name the "
            f"model with --model; or pass --model {SCRIPTED} for the offline scripted model, "
            "which only knows how to fix llm_plans' sample project."
        )
    named = " ".join(
        f"--{name} {value}" for name, value in (("api", args.api), ("model", args.model)) if value
    )
    raise MissingKey(
        f"{prog}: {named} needs {KEYS[api]}, which is not set. Set it in the agent's "
        f"environment, or pass --model {SCRIPTED} for the offline scripted model.{local}"
    )


def launch(prog: str) -> list[str]:
    """The command line that starts this agent, as a client would run it: the script with
    this interpreter, which has the agent's dependencies."""
    if prog.startswith("llm-plans"):
        return prog.split()
    return [sys.executable, str(Path(__file__).resolve().parents[1] / "coding_agent.py")]


def _zed(prog: str) -> str:
    """Zed's `agent_servers` entry for this agent, as JSON."""
    command = launch(prog)
    # Zed starts agents with its own PATH, which need not have this virtualenv's scripts.
    program = shutil.which(command[0]) or command[0]
    entry = {
        "type": "custom",
        "command": program,
        "args": [*command[1:], "--model", "gpt-4.1"],
        "env": {"OPENAI_API_KEY": "..."},
    }
    return json.dumps(entry)


def terminal_message(prog: str) -> str:
    """What the agent says when a person starts it in a terminal instead of a client."""
    command = launch(prog)
    agent = shlex.join([*command, "--model", "gpt-4.1"])
    zed = _zed(prog)
    return f"""\
{prog} is an ACP agent: an ACP client starts it and talks JSON-RPC with it over stdin and
stdout, so there is nothing to type here. Start it from a client instead:

  acpx (npm install -g acpx), in your project:
    acpx --approve-all --agent {shlex.quote(agent)} exec "fix the failing test"

  Zed: in settings.json, under "agent_servers":
    "llm-plans": {zed}

Set OPENAI_API_KEY or ANTHROPIC_API_KEY in the client's environment, or pass
--model {SCRIPTED} for the offline scripted model. `{shlex.join(command)} --help` lists the
options; `llm-plans demo` shows the agent at work in a client.
"""


def refusal(args: argparse.Namespace, stdin: IO[str], stdout: IO[str] | None = None) -> str | None:
    """Why the agent must not start, or None: a person at a terminal instead of a client,
    a model API without its key, or stdin/stdout that are not a client's pipes (a file,
    /dev/null), or a data directory it cannot use. Checked before the first byte of ACP."""
    if stdin.isatty():
        return terminal_message(args.prog)
    try:
        resolve_api(args)
    except MissingKey as exc:
        return str(exc)
    for name, stream in (("stdin", stdin), ("stdout", stdout or sys.stdout)):
        kind = _kind(stream)
        if kind is not None:
            return (
                f"{args.prog}: its {name} is {kind}, not a pipe: it speaks ACP over pipes with "
                f"the client that starts it. Start it from an ACP client (acpx, Zed); "
                f"`{shlex.join(launch(args.prog))} --help` shows how."
            )
    return _unusable_data_dir(args)


def _unusable_data_dir(args: argparse.Namespace) -> str | None:
    """Why plans cannot be kept in --data-dir (created here if missing), or None."""
    folder = Path(args.data_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    else:
        if os.access(folder, os.W_OK | os.X_OK):
            return None
        reason = "Permission denied"
    return (
        f"{args.prog}: plans cannot be kept in {folder} ({reason}). Pass --data-dir with a "
        "folder it can create or write, or set XDG_DATA_HOME."
    )


def _kind(stream: IO[str]) -> str | None:
    """What `stream` is when it is not a pipe or socket, which is all ACP over stdio uses
    (asyncio cannot read or write ACP through anything else)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):  # closed, or no file descriptor at all
        return "closed"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return None
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISCHR(mode):
        return "a terminal" if stream.isatty() else "a device such as /dev/null"
    return "neither a pipe nor a socket"


def choose_backend(args: argparse.Namespace, cwd: str) -> Backend:
    """The model backend for a new session in the folder `cwd`, as resolve_api decided."""
    from llm_plans import tools

    api = resolve_api(args)
    if api == SCRIPTED:
        from .scripted import Scripted

        return Scripted(Path(cwd), delay=args.script_delay)
    from .models import Anthropic, OpenAIChat, OpenAIResponses

    system = tools.system_prompt()
    model = args.model or DEFAULT_MODELS[api]
    if api == "anthropic":
        import anthropic

        return Anthropic(
            anthropic.AsyncAnthropic(max_retries=0, base_url=args.base_url), model, system
        )
    import openai

    client = openai.AsyncOpenAI(max_retries=0, base_url=args.base_url)
    backend = OpenAIResponses if api == "openai-responses" else OpenAIChat
    return backend(client, model, system)
