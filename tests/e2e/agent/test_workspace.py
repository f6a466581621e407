"""The example agent's coding tools as an attack surface: search stays inside the project and
its patterns run in linear time; commands stop whole when cancelled; permission is asked for
every write and command unless the user allowed that tool for the session."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AllowedOutcome, RequestPermissionResponse
from coding_agent_lib import commands, matching, search
from coding_agent_lib import workspace as workspace_module
from coding_agent_lib.matching import BadPattern, compile_pattern, scan
from coding_agent_lib.workspace import Workspace
from hypothesis import given
from hypothesis import strategies as st


class Conn:
    """The agent side's connection: records updates, answers permission requests with
    `choice` (an option id, or None to dismiss), and offers a terminal when asked."""

    def __init__(self, choice: str | None = "allow") -> None:
        self.choice = choice
        self.updates: list[Any] = []
        self.asked: list[tuple[str, list[str]]] = []
        self.subjects: list[Any] = []
        self.terminal_calls: list[str] = []
        self.exited = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call.title, [o.kind for o in options]))
        self.subjects.append(tool_call)
        if self.choice is None:
            return RequestPermissionResponse(outcome={"outcome": "cancelled"})
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.choice)
        )

    # A client terminal whose command never exits by itself.
    async def create_terminal(self, output_byte_limit: int, **_: Any) -> Any:
        assert output_byte_limit == commands.MAX_KEPT_BYTES
        self.terminal_calls.append("create")
        await asyncio.sleep(0)  # a round trip to the client
        return type("Terminal", (), {"terminal_id": "term_1"})()

    async def wait_for_terminal_exit(self, **_: Any) -> Any:
        self.terminal_calls.append("wait")
        await self.exited.wait()

    async def kill_terminal(self, **_: Any) -> None:
        self.terminal_calls.append("kill")

    async def terminal_output(self, **_: Any) -> Any:
        self.terminal_calls.append("output")
        return type("Output", (), {"output": "partial output"})()

    async def release_terminal(self, **_: Any) -> None:
        self.terminal_calls.append("release")


def workspace(root: Path, conn: Conn, *, terminal: bool = False) -> Workspace:
    return Workspace(conn, "s", str(root), {"terminal": terminal})


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A project and, beside it, an outside folder with a secret."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOKEN=hunter2\n")
    (root / "code.py").write_text("x = 1\nTOKEN = 'public'\n")
    return root, outside


# ---- search ---------------------------------------------------------------------------------


async def test_search_does_not_follow_symlinks_out_of_the_project(tmp_path: Path) -> None:
    root, outside = project(tmp_path)
    (root / "linked.txt").symlink_to(outside / "secret.txt")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    ws = workspace(root, Conn())
    text, ok = await ws.run("search", '{"pattern": "TOKEN"}')
    assert ok
    assert "hunter2" not in text
    assert "code.py:2: TOKEN = 'public'" in text
    assert "(1 file links outside the project; it was not searched)" in text
    # read_file refuses the same path with the same check; a linked folder is outside too
    for name, arguments in [
        ("read_file", '{"path": "linked.txt"}'),
        ("search", '{"pattern": "TOKEN", "path": "linked_dir"}'),
        ("list_files", '{"path": "linked_dir"}'),
    ]:
        text, ok = await ws.run(name, arguments)
        assert not ok
        assert "is outside the project" in text
        assert "hunter2" not in text


async def test_symlinks_inside_the_project_are_searched(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    (root / "alias.py").symlink_to(root / "code.py")
    text, ok = await workspace(root, Conn()).run("search", '{"pattern": "x = 1"}')
    assert ok
    assert text.splitlines() == ["alias.py:1: x = 1", "code.py:1: x = 1"]


async def test_a_catastrophic_pattern_ends_in_linear_time(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    # Python's re would take about 2**100000 steps on this line; RE2 takes one pass.
    (root / "long.txt").write_text("a" * 100_000 + "b\n" + "a" * 50 + "\n")
    text, ok = await workspace(root, Conn()).run("search", '{"pattern": "(a+)+$"}')
    assert ok
    assert text == "long.txt:2: " + "a" * 50


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "invalid escape sequence"),
        (r"(?<=a)b", "invalid perl operator"),
        (r"(?=a)", "invalid perl operator"),
        ("(unclosed", "missing )"),
        ("a{1000}{1000}", "bad repetition operator"),
        ("((a{1000}){1000})", "invalid repetition size"),
    ],
)
async def test_an_unsupported_pattern_gets_an_answer_the_model_can_act_on(
    pattern: str, reason: str, tmp_path: Path
) -> None:
    root, _ = project(tmp_path)
    arguments = '{"pattern": ' + _json(pattern) + "}"
    text, ok = await workspace(root, Conn()).run("search", arguments)
    assert not ok
    assert text.startswith(f"The pattern {pattern!r} cannot be used: ")
    assert reason in text
    assert "without backreferences (\\1) and lookaround" in text
    assert text.endswith("Fix the pattern and search again.")


def _pattern(pattern: str) -> str:
    return '{"pattern": ' + _json(pattern) + "}"


def _json(text: str) -> str:
    import json

    return json.dumps(text)


@given(st.text(max_size=40))
def test_every_pattern_compiles_or_is_refused_with_a_reason(pattern: str) -> None:
    try:
        compiled = compile_pattern(pattern)
    except BadPattern as exc:
        refusal = str(exc)
    else:
        compiled.search("some text to search")  # and it runs
        return
    assert refusal.startswith(f"The pattern {pattern!r} cannot be used: ")
    assert refusal.endswith("Fix the pattern and search again.")


@given(
    st.lists(st.text(alphabet="ab(){}*+?.|\\^$[] \t", max_size=30), max_size=8),
    st.text(alphabet="ab(){}*+?.|\\^$[] \t", min_size=1, max_size=5),
)
def test_a_literal_pattern_finds_the_lines_containing_it(lines: list[str], needle: str) -> None:
    lines = [line for line in lines if line.strip()]
    files = {"f.txt": "\n".join(lines) + "\n"}
    found = _scan(files, re.escape(needle))
    expected = [f"f.txt:{n}: {line}" for n, line in enumerate(lines, 1) if needle in line]
    assert found == ("\n".join(expected) or "(no matches)")


def _scan(files: dict[str, str], pattern: str) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in files.items():
            (root / name).write_text(text)
        found = scan(compile_pattern(pattern), [(name, str(root / name)) for name in files])
        return "\n".join(found) or "(no matches)"


# Thirty-two of these in a row (513 characters, within RE2's program limit) cost RE2 about
# 1 ms per byte of a long line of words that does not end in "!": this line's scan would take
# minutes (14 KB alone took 6 s here).
SLOW = r"(?:\w+\s*){1000}" * 32 + "!"
SLOW_LINE = "ab " * 40_000 + "\n"


async def test_a_search_ends_in_time_whatever_the_pattern(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    (root / "slow.txt").write_text(SLOW_LINE)
    began = time.monotonic()
    text, ok = await workspace(root, Conn()).run("search", _pattern(SLOW))
    took = time.monotonic() - began
    assert ok
    assert took < search.MAX_SEARCH_SECONDS  # the contract: an answer within the limit
    assert text.endswith(
        "(The search was cut short: it ran out of its 10 s. The results are incomplete: "
        "narrow the pattern or the path and search again.)"
    )


async def test_a_search_cut_short_keeps_what_it_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    (root / "a.txt").write_text("abc !\n")  # searched first: files go in name order
    (root / "slow.txt").write_text(SLOW_LINE)
    monkeypatch.setattr(search, "MAX_SEARCH_SECONDS", 2.0)
    text, ok = await workspace(root, Conn()).run("search", _pattern("c !|" + SLOW))
    assert ok
    assert text.splitlines()[0] == "a.txt:1: abc !"
    assert "cut short: it ran out of its 2 s" in text


async def test_a_cancelled_search_s_worker_is_gone_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    (root / "slow.txt").write_text(SLOW_LINE)
    workers: list[asyncio.subprocess.Process] = []
    start = asyncio.create_subprocess_exec

    async def recorded(*args: Any, **kw: Any) -> asyncio.subprocess.Process:
        workers.append(await start(*args, **kw))
        return workers[-1]

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recorded)
    task = asyncio.create_task(workspace(root, Conn()).run("search", _pattern(SLOW)))
    for _ in range(500):  # the worker starts in about 60 ms
        if workers:
            break
        await asyncio.sleep(0.01)
    assert workers, "the search started no worker process"
    await asyncio.sleep(0.5)  # well into the long line
    assert workers[0].returncode is None
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < search.STOP_SECONDS
    assert workers[0].returncode == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):  # reaped, not left a zombie
        os.kill(workers[0].pid, 0)


async def test_a_search_stopped_at_its_hit_limit_says_so(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    (root / "many.txt").write_text("hit\n" * (matching.MAX_HITS + 1))
    text, ok = await workspace(root, Conn()).run("search", '{"pattern": "^hit$"}')
    assert ok
    lines = text.splitlines()
    assert lines[: matching.MAX_HITS] == [f"many.txt:{n}: hit" for n in range(1, 201)]
    assert lines[matching.MAX_HITS :] == [
        "(The search was cut short: it stopped at 200 matches. The results are incomplete: "
        "narrow the pattern or the path and search again.)"
    ]
    (root / "many.txt").write_text("hit\n" * matching.MAX_HITS)  # exactly the limit: all found
    text, ok = await workspace(root, Conn()).run("search", '{"pattern": "^hit$"}')
    assert "cut short" not in text
    assert len(text.splitlines()) == matching.MAX_HITS


async def test_a_search_of_too_many_files_says_which_it_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    (root / "more.py").write_text("x = 2\n")
    monkeypatch.setattr(workspace_module, "MAX_SEARCHED", 1)
    text, ok = await workspace(root, Conn()).run("search", '{"pattern": "x = "}')
    assert ok
    assert text.splitlines() == [
        "code.py:1: x = 1",
        "(The search was cut short: only the first 1 files were searched. The results are "
        "incomplete: narrow the pattern or the path and search again.)",
    ]


def test_an_orphaned_worker_s_own_limit_comes_after_the_search_s() -> None:
    # A backstop for an agent that died without killing its worker, never the usual end.
    assert matching.MAX_WORKER_CPU_SECONDS > search.MAX_SEARCH_SECONDS


# ---- commands -------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    """True once the process has exited (a zombie waiting for its reaper has exited too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def _until_gone(pid: int) -> bool:
    """Whether the process exits: a SIGKILL sent lands when the kernel next runs it, so this
    looks again for a while (far beyond any kill's delivery) before saying it did not."""
    for _ in range(3000):
        if _gone(pid):
            return True
        await asyncio.sleep(0.01)
    return False


# A command whose child ignores SIGTERM: only a SIGKILL to the whole group stops it.
STUBBORN = "bash -c 'trap \"\" TERM; echo $$ > child.pid; while true; do sleep 0.2; done' & wait"


async def _started(root: Path) -> int:
    pid_file = root / "child.pid"
    while not pid_file.exists() or not pid_file.read_text().strip():
        await asyncio.sleep(0.01)
    return int(pid_file.read_text())


async def test_a_cancelled_command_is_killed_with_its_whole_group(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    conn = Conn()
    call = asyncio.ensure_future(workspace(root, conn).run("run_command", _command(STUBBORN)))
    child = await _started(root)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await _until_gone(child)
    assert conn.updates[-1].status == "failed"  # the client hears the tool call ended


async def test_a_command_past_its_time_is_killed_with_its_whole_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    monkeypatch.setattr(commands, "COMMAND_TIMEOUT", 0.5)
    text, ok = await workspace(root, Conn()).run("run_command", _command(STUBBORN))
    assert not ok
    assert text.startswith("Timed out after 0 s.") or text.startswith("Timed out after 1 s.")
    assert await _until_gone(int((root / "child.pid").read_text()))


async def test_a_cancelled_command_in_the_client_terminal_is_killed_and_released(
    tmp_path: Path,
) -> None:
    root, _ = project(tmp_path)
    conn = Conn()
    call = asyncio.ensure_future(
        workspace(root, conn, terminal=True).run("run_command", _command("sleep 1000"))
    )
    while "wait" not in conn.terminal_calls:
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert conn.terminal_calls == ["create", "wait", "kill", "release"]


async def test_a_command_cancelled_while_the_client_starts_its_terminal_is_stopped(
    tmp_path: Path,
) -> None:
    root, _ = project(tmp_path)
    conn = Conn()
    call = asyncio.ensure_future(
        workspace(root, conn, terminal=True).run("run_command", _command("sleep 1000"))
    )
    while "create" not in conn.terminal_calls:
        await asyncio.sleep(0)
    call.cancel()  # the client has not answered terminal/create yet
    with pytest.raises(asyncio.CancelledError):
        await call
    assert conn.terminal_calls == ["create", "kill", "release"]


async def test_a_command_in_the_client_terminal_past_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    monkeypatch.setattr(commands, "COMMAND_TIMEOUT", 0.05)
    conn = Conn()
    text, ok = await workspace(root, conn, terminal=True).run("run_command", _command("sleep 1000"))
    assert not ok
    assert text == "Timed out after 0 s.\npartial output"
    assert conn.terminal_calls == ["create", "wait", "kill", "output", "release"]


async def test_a_command_runs_and_reports_its_exit_code(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    text, ok = await workspace(root, Conn()).run("run_command", _command("echo hi; exit 3"))
    assert (text, ok) == ("exit code 3\nhi\n", False)
    assert os.getpgid(0) == os.getpgid(os.getpid())  # the test's own group untouched


def _command(line: str) -> str:
    return '{"command": ' + _json(line) + "}"


# ---- permission -----------------------------------------------------------------------------


async def test_allow_always_is_remembered_for_that_tool_in_the_session(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    conn = Conn(choice="allow_always")
    ws = workspace(root, conn)
    for n in range(3):
        text, ok = await ws.run("write_file", f'{{"path": "f{n}.txt", "content": "x"}}')
        assert ok, text
    assert [title for title, _ in conn.asked] == ["Write f0.txt"]
    assert conn.asked[0][1] == ["allow_once", "allow_always", "reject_once"]
    # commands are allowed separately: the first still asks
    conn.choice = "allow"
    await ws.run("run_command", _command("true"))
    await ws.run("run_command", _command("true"))
    assert [title for title, _ in conn.asked] == ["Write f0.txt", "Run `true`", "Run `true`"]
    # another session asks again
    conn.choice = "reject"
    text, ok = await workspace(root, conn).run("write_file", '{"path": "g.txt", "content": "x"}')
    assert not ok
    assert not (root / "g.txt").exists()


@pytest.mark.parametrize("choice", ["allow", "reject", None])
async def test_without_allow_always_every_write_asks(choice: str | None, tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    conn = Conn(choice=choice)
    ws = workspace(root, conn)
    for n in range(2):
        await ws.run("write_file", f'{{"path": "f{n}.txt", "content": "x"}}')
    assert len(conn.asked) == 2
    assert (root / "f1.txt").exists() == (choice == "allow")


async def test_a_path_too_long_to_resolve_is_refused(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    text, ok = await workspace(root, Conn()).run("read_file", _path("a/" * 300_000))
    assert not ok
    assert "paths of up to 4096 are accepted" in text


def _path(path: str) -> str:
    return '{"path": ' + _json(path) + "}"


async def test_a_named_pipe_in_the_project_blocks_no_tool(tmp_path: Path) -> None:
    """Opening a FIFO waits for a writer that never comes: no tool opens one."""
    root, _ = project(tmp_path)
    os.mkfifo(root / "pipe")
    ws = workspace(root, Conn())
    text, ok = await ws.run("search", '{"pattern": "x"}')
    assert (text, ok) == ("code.py:1: x = 1", True)
    for name, arguments in [
        ("read_file", '{"path": "pipe"}'),
        ("write_file", '{"path": "pipe", "content": "x"}'),
    ]:
        text, ok = await ws.run(name, arguments)
        assert (text, ok) == (f"{name} failed: pipe is not a regular file", False)


async def test_a_command_s_endless_output_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = project(tmp_path)
    monkeypatch.setattr(commands, "MAX_KEPT_BYTES", 1000)
    text, ok = await workspace(root, Conn()).run("run_command", _command("yes | head -c 5000000"))
    assert ok
    assert text == "exit code 0\n" + "y\n" * 500


# ---- what a write shows before it is approved ----------------------------------------------


def wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@pytest.mark.parametrize("existed", [True, False])
async def test_a_write_shows_its_diff_and_location_before_it_is_approved(
    existed: bool, tmp_path: Path
) -> None:
    root, _ = project(tmp_path)
    if not existed:
        (root / "code.py").unlink()
    conn = Conn()
    text, ok = await workspace(root, conn).run(
        "write_file", '{"path": "code.py", "content": "x = 2\\n"}'
    )
    assert ok, text
    path = str(root / "code.py")
    wanted = {"type": "diff", "path": path, "newText": "x = 2\n"}
    if existed:
        wanted["oldText"] = "x = 1\nTOKEN = 'public'\n"
    started = wire(conn.updates[0])
    assert started["title"] == "Write code.py"
    assert started["content"] == [wanted]
    assert started["locations"] == [{"path": path}]
    [subject] = conn.subjects
    assert subject.title == started["title"]  # the same title in the permission request
    asked = wire(subject)
    assert asked["content"] == [wanted]
    assert asked["locations"] == [{"path": path}]
    assert wire(conn.updates[-1])["content"][0] == wanted  # the diff stays on show


@pytest.mark.parametrize("kind", ["big", "binary"])
async def test_a_file_too_big_or_not_text_shows_its_location_without_a_diff(
    kind: str, tmp_path: Path
) -> None:
    root, _ = project(tmp_path)
    data = b"x" * ((1 << 20) + 1) if kind == "big" else b"\xff\xfe\x00binary"
    (root / "blob").write_bytes(data)
    conn = Conn(choice="reject")
    await workspace(root, conn).run("write_file", '{"path": "blob", "content": "y"}')
    started = wire(conn.updates[0])
    assert "content" not in started
    assert started["locations"] == [{"path": str(root / "blob")}]
    assert "content" not in wire(conn.subjects[0])
    assert (root / "blob").read_bytes() == data  # rejected: unchanged


async def test_a_write_outside_the_project_shows_nothing_of_it(tmp_path: Path) -> None:
    root, _ = project(tmp_path)
    conn = Conn()
    _, ok = await workspace(root, conn).run(
        "write_file", '{"path": "../outside/secret.txt", "content": "y"}'
    )
    assert not ok
    started = wire(conn.updates[0])
    assert "content" not in started
    assert "locations" not in started
    assert conn.subjects == []
