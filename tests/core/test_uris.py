"""File-plan paths: bounded before anything resolves them, and never resolved past the
workspace, whatever path (long, deep, `..`, symlinks, loops) the model sends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_plans import Limits, PlanSession
from llm_plans._core.uris import file_uri, resolved_inside
from llm_plans.testing import RecordingSend

LIMITS = Limits()


class Lookups:
    """Counts the file-system lookups path resolution makes, and the bytes they walk."""

    def __init__(self) -> None:
        self.calls = 0
        self.bytes = 0


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Lookups:
    seen = Lookups()
    real_lstat = os.lstat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.calls += 1
        seen.bytes += len(os.fsencode(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    return seen


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("uris")
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("- secret\n")
    os.symlink(tmp_path / "outside.md", root / "escape.md")
    os.symlink(tmp_path, root / "up")
    os.symlink(root / "loop-b", root / "loop-a")
    os.symlink(root / "loop-a", root / "loop-b")
    os.symlink(root / "docs", root / "docs-link")
    return root


def deep(workspace: Path, components: int) -> str:
    return str(workspace) + "/a" * components + "/plan.md"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/" + "a/" * 200_000 + "p.md", "the location is 400005 characters long; at most 12304"),
        ("file:///x?" + "q" * 20_000, "the location is 20010 characters long; at most 12304"),
        ("/" + "abcdefghijklmnopqrstuvwxyz/" * 160, "the path is 4321 bytes long; at most 4096"),
        ("file:///" + "%C3%A9" * 2048, "the path is 4097 bytes long; at most 4096 bytes are"),
        ("/" + "é" * 2100 + ".md", "the path is 4204 bytes long"),
        ("/" + "a/" * 257 + "p.md", "the path has 258 components; at most 256 are accepted"),
        ("file:///" + "%61%2F" * 700 + "p.md", "the path has 701 components"),
    ],
)
async def test_long_or_deep_paths_are_refused_with_the_bound(path: str, message: str) -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call("create_plan", {"type": "file", "uri": path})
    assert not result.ok
    assert message in result.content
    assert "Send the plain absolute path of the plan file" in result.content
    assert len(result.content) < 1_000  # the path is quoted cut, not whole


async def test_a_malformed_uri_is_told_what_is_accepted() -> None:
    session = PlanSession(RecordingSend(), session_id="s")
    result = await session.call("create_plan", {"type": "file", "uri": "file://[::1/p.md"})
    assert "not a valid URI (Invalid IPv6 URL); send an absolute path or a file: URI" in (
        result.content
    )


def test_a_refused_path_is_never_resolved(workspace: Path, lookups: Lookups) -> None:
    with pytest.raises(ValueError, match="at most 4096 bytes"):
        file_uri(str(workspace) + "/a" * 262_144, workspace, LIMITS)
    with pytest.raises(ValueError, match="at most 256 are accepted"):
        file_uri(deep(workspace, 1_000), workspace, LIMITS)
    assert lookups.calls == 0


def test_resolution_work_is_bounded_by_the_limits(workspace: Path, lookups: Lookups) -> None:
    # The most a path can cost is one lookup per component, each of at most the whole path:
    # the cap on both is what keeps the quadratic walk of realpath small.
    path = deep(workspace, LIMITS.max_path_components - len(workspace.parts))
    file_uri(path, workspace, LIMITS)
    # One lookup per component of the path, and of the workspace to compare with.
    assert 0 < lookups.calls <= LIMITS.max_path_components + len(workspace.parts)
    assert lookups.bytes <= lookups.calls * LIMITS.max_path_bytes


def test_the_legacy_read_never_resolves_a_path_past_the_limits(
    workspace: Path, lookups: Lookups
) -> None:
    # A path that was stored by other means (a snapshot from a session with looser limits)
    # costs nothing at later notifications: it is not resolved at all.
    assert resolved_inside(Path(deep(workspace, 5_000)), workspace, LIMITS) is None
    assert resolved_inside(Path("/" + "x" * 10_000), None, LIMITS) is None
    assert lookups.calls == 0


def test_limits_are_configurable(workspace: Path) -> None:
    tight = Limits(max_path_bytes=len(str(workspace)) + 20, max_path_components=8)
    assert file_uri(f"{workspace}/docs/plan.md", workspace, tight)
    with pytest.raises(ValueError, match="bytes long"):
        file_uri(f"{workspace}/docs/" + "p" * 30, workspace, tight)


def test_links_and_dots_cannot_leave_the_workspace(workspace: Path) -> None:
    for path in ("escape.md", "up/outside.md", "up/ws/../outside.md", "docs/../../outside.md"):
        with pytest.raises(ValueError, match="inside the workspace"):
            file_uri(f"{workspace}/{path}", workspace, LIMITS)
    for path in ("loop-a/plan.md", "docs-link/plan.md", "docs/./x/../plan.md"):
        uri = file_uri(f"{workspace}/{path}", workspace, LIMITS)
        assert uri.startswith(workspace.as_uri())


_COMPONENTS = st.sampled_from(
    ["..", ".", "", "docs", "docs-link", "escape.md", "up", "loop-a", "a" * 200, "%2F", "ws"]
)


@given(
    parts=st.lists(_COMPONENTS, max_size=40),
    repeat=st.sampled_from([1, 10, 300]),
    as_uri=st.booleans(),
)
def test_any_path_is_refused_or_stays_inside(
    workspace: Path, parts: list[str], repeat: int, as_uri: bool
) -> None:
    raw = str(workspace) + "/" + "/".join(parts * repeat)
    sent = "file://" + raw if as_uri else raw
    try:
        uri = file_uri(sent, workspace, LIMITS)
    except ValueError as exc:
        message = str(exc)
        uri = ""
    if not uri:
        assert message.endswith(".")
        return
    resolved = resolved_inside(Path(uri.removeprefix("file://")), workspace, LIMITS)
    real = Path(os.path.realpath(workspace))
    assert resolved is not None
    assert resolved == real or real in resolved.parents


async def test_later_notifications_do_not_resolve_a_refused_path(
    workspace: Path, lookups: Lookups
) -> None:
    send = RecordingSend()
    session = PlanSession(send, session_id="s", workspace=workspace, client_capabilities={})
    huge = {"type": "file", "uri": deep(workspace, 200_000)}
    assert not (await session.call("create_plan", huge)).ok
    assert (await session.call("create_plan", {"type": "file", "uri": f"{workspace}/p.md"})).ok
    before = lookups.calls
    for _ in range(3):
        assert (await session.call("create_plan", {"type": "markdown", "content": "- x"})).ok
    # One legacy read per notification of the one stored file plan, each a short walk of
    # the plan's path and the workspace's.
    assert lookups.calls - before <= 3 * 2 * (len(workspace.parts) + 1)


@pytest.mark.parametrize("uri", ["file:///tmp/a%00b.md", "file:///tmp/a%0Ab%1B%5B31m.md"])
def test_percent_encoded_control_characters_are_refused(uri: str) -> None:
    with pytest.raises(ValueError, match="control characters"):
        file_uri(uri, None, Limits())
