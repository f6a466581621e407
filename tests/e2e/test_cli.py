"""The `llm-plans` command: its help, version and argument checks, and `llm-plans agent`
started as clients start it (over pipes, by the Python ACP client and by acpx), by hand in a
terminal, and without a key."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import pty
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import cast

import acp
import pytest
from agent_client import AGENT, Client, prompt_block, sample_project
from coding_agent_lib import cli, retries
from hypothesis import given
from hypothesis import strategies as st
from node_tools import acpx_exec, node_modules

import llm_plans
from llm_plans import ClientCapabilitiesRecorder

LLM_PLANS = str(Path(sys.executable).parent / "llm-plans")  # the installed console script
# Zed's entry names the program by its full path when PATH finds it: Zed's own PATH may not.
ZED_COMMAND = shutil.which("llm-plans") or "llm-plans"
# A subprocess runs the agent's whole scripted session; a slow machine gets generous room.
TIMEOUT = 180
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
OWN = ("LLM_PLANS_MODEL", "LLM_PLANS_API", "LLM_PLANS_BASE_URL", "LLM_PLANS_DATA_DIR")


def bare_env(**extra: str) -> dict[str, str]:
    """This environment without model keys, the agent's own variables or a PYTHONPATH."""
    drop = (*KEYS, *OWN, "PYTHONPATH", "XDG_DATA_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({"LLM_PLANS_SCRIPT_DELAY": "0", **extra})
    return env


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LLM_PLANS, *args],
        env=env or bare_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*KEYS, *OWN, "XDG_DATA_HOME", "LLM_PLANS_SCRIPT_DELAY"):
        monkeypatch.delenv(name, raising=False)


# --- help and version -----------------------------------------------------------------------


def test_help_describes_both_commands() -> None:
    done = run("--help")
    assert done.returncode == 0
    out = done.stdout
    assert "The `llm-plans` command." not in out
    assert out.startswith("usage: llm-plans ")
    for text in (
        "plan tools",
        "demo ",
        "watch the example agent fix a sample project, offline",
        "agent ",
        "serve the example coding agent to an ACP client",
        "--version",
        'acpx --approve-all --agent "llm-plans agent --model gpt-4.1"',
    ):
        assert text in out


def test_version_is_the_package_version() -> None:
    done = run("--version")
    assert (done.returncode, done.stdout) == (0, f"llm-plans {llm_plans.__version__}\n")


def test_demo_help_explains_every_option() -> None:
    out = run("demo", "--help").stdout
    assert out.startswith("usage: llm-plans demo ")
    assert "scripted offline model" in out
    for option, words in (
        ("--legacy", "without plan capability"),
        ("--keep", "keep the edited sample project"),
        ("--delay SECONDS", "seconds between the streamed fragments"),
    ):
        assert option in out
        assert words in out


def test_agent_help_explains_every_option() -> None:
    done = run("agent", "--help")
    assert done.returncode == 0
    out = " ".join(done.stdout.split())
    squeezed = "".join(out.split())  # argparse wraps option texts, even inside a word
    assert done.stdout.startswith("usage: llm-plans agent ")
    options = [a for a in cli.parser()._actions if a.option_strings]
    assert {o for a in options for o in a.option_strings} >= {
        "--model",
        "--api",
        "--base-url",
        "--data-dir",
        "--script-delay",
    }
    for action in options:
        assert action.help, action.option_strings  # no option without a text
        assert "".join(action.help.split()) in squeezed
    for text in (
        "Agent Client Protocol",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "--model scripted",
        'acpx --approve-all --agent "llm-plans agent --model gpt-4.1"',
        f'"llm-plans": {{"type": "custom", "command": "{ZED_COMMAND}", "args": ["agent", "--model",'
        ' "gpt-4.1"], "env": {"OPENAI_API_KEY": "..."}}',
        "XDG_DATA_HOME",
    ):
        assert text in out


def test_the_example_script_has_the_same_options() -> None:
    done = subprocess.run(
        [sys.executable, str(AGENT), "--help"],
        capture_output=True,
        text=True,
        env=bare_env(),
        timeout=TIMEOUT,
        check=True,
    )
    agent_help = run("agent", "--help").stdout
    # one parser: the option texts are the same, only the command's name differs
    assert (
        done.stdout.split("options:")[1].split("examples:")[0]
        == (agent_help.split("options:")[1].split("examples:")[0])
    )
    assert f"{sys.executable} {AGENT} --model gpt-4.1" in done.stdout


# --- argument checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["demo", "--delay", "-1"], "argument --delay: '-1': give a number of seconds, 0 or more"),
        (["demo", "--delay", "nan"], "argument --delay: 'nan': give a number of seconds"),
        (["demo", "--delay", "inf"], "argument --delay: 'inf': give a number of seconds"),
        (["demo", "--delay", "soon"], "argument --delay: 'soon' is not a number of seconds"),
        (["demo", "--fast"], "unrecognized arguments: --fast"),
        (["agent", "--script-delay", "-0.5"], "argument --script-delay: '-0.5': give a number"),
        (["agent", "--base-url", "ftp://h/v1", "--model", "m"], "'ftp://h/v1' is not an http://"),
        (["agent", "--base-url", "localhost:8000", "--model", "m"], "is not an http:// or"),
        (["agent", "--base-url", "http://", "--model", "m"], "'http://' is not an http://"),
        (["agent", "--base-url", "http://h/v1"], "--base-url needs --model"),
        (["agent", "--base-url", "http://h/v1", "--model", "scripted"], "runs offline"),
        (["agent", "--api", "gemini"], "argument --api: invalid choice: 'gemini'"),
        (["agent", "--model", " "], "argument --model: the model name is empty"),
        (["agent", "--bogus"], "unrecognized arguments: --bogus"),
        ([], "the following arguments are required"),
        (["serve"], "invalid choice: 'serve'"),
    ],
)
def test_bad_arguments_are_refused_with_the_reason(args: list[str], reason: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert reason in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # nothing on what would be the ACP channel


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("LLM_PLANS_SCRIPT_DELAY", "-3", "LLM_PLANS_SCRIPT_DELAY: '-3': give a number of seconds"),
        ("LLM_PLANS_API", "gemini", "LLM_PLANS_API: 'gemini' is not one of openai-chat,"),
        ("LLM_PLANS_BASE_URL", "ftp://h", "argument --base-url: 'ftp://h' is not an http://"),
        ("LLM_PLANS_MODEL", " ", "argument --model: the model name is empty"),
    ],
)
def test_bad_defaults_from_the_environment_are_refused(
    variable: str, value: str, reason: str
) -> None:
    done = run("agent", env=bare_env(**{variable: value}))
    assert done.returncode == 2
    assert reason in done.stderr
    assert "Traceback" not in done.stderr


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_seconds_takes_exactly_the_finite_non_negative_numbers(value: float) -> None:
    text = repr(value)
    if math.isfinite(value) and value >= 0:
        assert cli.seconds(text) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            cli.seconds(text)


@given(st.text())
def test_a_base_url_is_taken_only_as_an_http_url_with_a_host(text: str) -> None:
    try:
        taken = cli.base_url(text)
    except (argparse.ArgumentTypeError, ValueError):  # urlsplit refuses some hostile text
        return
    assert taken == text
    assert text.split("://", 1)[0] in ("http", "https")
    assert text.split("://", 1)[1].split("/", 1)[0].strip("[]@:")


# --- a person at a terminal, a missing key ---------------------------------------------------


def started_in_a_terminal(command: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run `command` with a pseudo-terminal as stdin, as typing it in a shell does."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            command,
            stdin=follower,
            capture_output=True,
            text=True,
            env=env,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ([LLM_PLANS, "agent"], "llm-plans agent"),
        ([LLM_PLANS, "agent", "--model", "scripted"], "llm-plans agent"),
        ([sys.executable, str(AGENT), "--model", "gpt-4.1"], f"{sys.executable} {AGENT}"),
    ],
)
def test_started_by_hand_in_a_terminal_it_says_how_to_start_it(
    command: list[str], shown: str
) -> None:
    status, out, err = started_in_a_terminal(command, bare_env())
    assert status == 2
    assert out == ""
    assert "Traceback" not in err
    assert "is an ACP agent" in err
    assert "nothing to type here" in err
    assert f"acpx --approve-all --agent '{shown} --model gpt-4.1' exec" in err
    assert '"agent_servers"' in err
    words = shlex.split(shown)
    args = ", ".join(f'"{w}"' for w in [*words[1:], "--model", "gpt-4.1"])
    program = shutil.which(words[0]) or words[0]
    zed = f'{{"type": "custom", "command": "{program}", "args": [{args}], "env": {{'
    assert zed in err


def test_without_a_model_or_key_it_says_which_keys_and_touches_nothing(tmp_path: Path) -> None:
    project = sample_project(tmp_path)
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    done = subprocess.run(
        [LLM_PLANS, "agent"],
        cwd=project,
        env=bare_env(),
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "no model API key is set" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert "--model scripted" in done.stderr
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before


@pytest.mark.parametrize(
    ("flags", "variable"),
    [
        (["--model", "gpt-4.1"], "OPENAI_API_KEY"),
        (["--model", "claude-sonnet-5"], "ANTHROPIC_API_KEY"),
        (["--api", "anthropic"], "ANTHROPIC_API_KEY"),
        (["--api", "openai-responses"], "OPENAI_API_KEY"),
        (["--model", "qwen3", "--base-url", "http://127.0.0.1:9/v1"], "OPENAI_API_KEY"),
    ],
)
def test_a_model_without_its_key_names_the_key(flags: list[str], variable: str) -> None:
    done = run("agent", *flags)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("llm-plans agent: ")
    assert f"needs {variable}, which is not set" in done.stderr
    if "--base-url" in flags:
        assert f"{variable}=none" in done.stderr  # how to run a local server that needs none


@pytest.mark.parametrize(
    ("flags", "keys", "api"),
    [
        (["--model", "claude-sonnet-5"], KEYS, "anthropic"),
        (["--model", "gpt-4.1"], KEYS, "openai-chat"),
        ([], ("ANTHROPIC_API_KEY",), "anthropic"),
        ([], KEYS, "openai-chat"),
        (["--api", "openai-responses", "--model", "o4"], ("OPENAI_API_KEY",), "openai-responses"),
        (["--model", "claude-x", "--api", "openai-chat"], ("OPENAI_API_KEY",), "openai-chat"),
    ],
)
@pytest.mark.usefixtures("clean")
def test_which_api_serves_a_model(
    flags: list[str], keys: tuple[str, ...], api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in keys:
        monkeypatch.setenv(name, "k")
    assert cli.resolve_api(cli.parse_args(flags)) == api


@pytest.mark.usefixtures("clean")
def test_nothing_named_never_means_the_scripted_model() -> None:
    with pytest.raises(cli.MissingKey, match="no model API key is set"):
        cli.resolve_api(cli.parse_args([]))


# --- the data directory ----------------------------------------------------------------------


@pytest.mark.usefixtures("clean")
@pytest.mark.parametrize(
    ("xdg", "expected"),
    [
        ("/srv/xdg", Path("/srv/xdg/llm-plans-agent")),
        (None, Path.home() / ".local" / "share" / "llm-plans-agent"),
        ("", Path.home() / ".local" / "share" / "llm-plans-agent"),
        ("relative/dir", Path.home() / ".local" / "share" / "llm-plans-agent"),
    ],
)
def test_the_data_dir_follows_xdg_data_home(
    xdg: str | None, expected: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if xdg is not None:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert cli.parse_args(["--model", "scripted"]).data_dir == expected
    assert cli.parse_args(["--data-dir", "/d"]).data_dir == Path("/d")  # the option wins


async def test_llm_plans_agent_over_a_pipe_keeps_plans_under_xdg_data_home(
    tmp_path: Path,
) -> None:
    """The installed command, as a client starts it: one prompt, the work done, the plans
    saved in $XDG_DATA_HOME/llm-plans-agent."""
    project = sample_project(tmp_path)
    xdg = tmp_path / "xdg"
    client = Client()
    async with acp.spawn_agent_process(
        cast("acp.Client", client),  # the SDK calls only the methods a client has
        LLM_PLANS,
        "agent",
        "--model",
        "scripted",
        cwd=project,
        env=bare_env(XDG_DATA_HOME=str(xdg)),
        observers=[client.observe],
        use_unstable_protocol=True,
    ) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project))
        response = await conn.prompt(session_id=session.session_id, prompt=prompt_block("fix"))
    assert response.stop_reason == "end_turn"
    assert "scripted offline model" in client.said
    assert "return sum(values) / len(values)" in (project / "calc.py").read_text()
    assert client.plan_updates  # legacy `plan` lists: this client advertises no plan support
    (database,) = [p for p in (xdg / "llm-plans-agent").rglob("*") if p.is_file()][:1]
    with sqlite3.connect(database) as db:
        tables = [row[0] for row in db.execute("select name from sqlite_master")]
    assert tables


# --- --base-url on the wire -----------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:  # bound then closed: connecting is refused at once
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.usefixtures("clean")
@pytest.mark.parametrize(("api", "key"), [("openai-chat", KEYS[0]), ("anthropic", KEYS[1])])
async def test_the_base_url_is_where_the_model_api_is_called(
    api: str, key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import coding_agent

    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv(key, "sk-test")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setattr(retries, "_backoff", lambda _state: 0.0)
    args = cli.parse_args(
        ["--api", api, "--model", "m", "--base-url", url, "--data-dir", str(tmp_path)]
    )
    agent = coding_agent.CodingAgent(args, ClientCapabilitiesRecorder())
    said: list[str] = []

    class Conn:
        async def session_update(self, session_id: str, update: object, **_: object) -> None:
            said.append(getattr(getattr(update, "content", None), "text", ""))

    agent.on_connect(Conn())
    session = await agent.new_session(cwd=str(tmp_path))
    # However the turn ends (a stop reason or an error response), it says what failed.
    with contextlib.suppress(acp.RequestError):
        await agent.prompt(session.session_id, prompt_block("hi"))
    assert f"{url}/" in "".join(said)
    assert "unreachable" in "".join(said)


# --- acpx ------------------------------------------------------------------------------------


def test_acpx_drives_llm_plans_agent(tmp_path: Path) -> None:
    """acpx 0.19.1 (on this Node) runs the installed command as a user would write it."""
    node_modules()
    project = sample_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    agent = f"{shlex.quote(LLM_PLANS)} agent --model scripted"
    env = {**bare_env(XDG_DATA_HOME=str(tmp_path / "xdg")), "HOME": str(home)}
    out = acpx_exec(agent, "fix the failing test", cwd=project, env=env)
    assert "- [completed] Run the tests" in out.stdout
    assert "Document the empty-list error in the README" in out.stdout
    assert "sum(values) / len(values)" in (project / "calc.py").read_text()
    assert (tmp_path / "xdg" / "llm-plans-agent").is_dir()


@pytest.mark.parametrize("where", ["stdin from /dev/null", "stdout to a file"])
def test_without_a_clients_pipes_it_says_so(where: str, tmp_path: Path) -> None:
    """Not a client: no traceback from asyncio's pipe transport, a message that says why."""
    log = tmp_path / "out.txt"
    with log.open("w") as out_file:
        done = subprocess.run(
            [LLM_PLANS, "agent", "--model", "scripted"],
            stdin=subprocess.DEVNULL if where.startswith("stdin") else subprocess.PIPE,
            stdout=out_file if where.startswith("stdout") else subprocess.PIPE,
            stderr=subprocess.PIPE,
            input=None,
            env=bare_env(),
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    name, kind = ("stdin", "a device") if where.startswith("stdin") else ("stdout", "a file")
    assert done.returncode == 2
    assert done.stderr.startswith(f"llm-plans agent: its {name} is {kind}")
    assert "not a pipe" in done.stderr
    assert "Traceback" not in done.stderr
    assert log.read_text() == ""


def test_without_the_agent_extra_it_says_which_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An install without the ACP SDK: --help still works, serving says what to install."""
    from llm_plans._cli import agent as _agent

    monkeypatch.setitem(sys.modules, "acp", None)  # `import acp` raises ImportError
    monkeypatch.delitem(sys.modules, "coding_agent", raising=False)
    assert _agent.run(["--model", "scripted"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("llm-plans agent needs the agent extra: pip install 'llm-plans[agent]'")
    with pytest.raises(SystemExit) as shown:
        _agent.run(["--help"])
    assert shown.value.code == 0
    assert capsys.readouterr().out.startswith("usage: llm-plans agent ")


@pytest.mark.parametrize("kind", ["a file", "under a file", "read-only"])
def test_a_data_dir_it_cannot_use_is_refused_before_acp(kind: str, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    folder = {"a file": blocker, "under a file": blocker / "data"}.get(kind, tmp_path / "ro")
    if kind == "read-only":
        folder.mkdir()
        folder.chmod(0o500)
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user that writes anywhere (root)")
    done = subprocess.run(
        [LLM_PLANS, "agent", "--model", "scripted", "--data-dir", str(folder)],
        stdin=subprocess.PIPE,
        capture_output=True,
        env=bare_env(),
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"llm-plans agent: plans cannot be kept in {folder} (")
    assert "Traceback" not in done.stderr
