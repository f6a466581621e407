"""docs/install.md's install lines work outside a clone: the wheel built as the page says and
installed by its file name with an extra, and the repository's URL pinned by commit (here a
temporary clone's `file://` URL), each into a fresh virtualenv where the extra's modules then
import."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import extras_check
import pytest
from wheel_build import ROOT, RUN_FRESH_VIRTUALENVS, clean_env, fresh_virtualenv

import llm_plans

PAGE = ROOT / "docs" / "install.md"
WHO, WHAT = ("AUTHOR", "COMMITTER"), ("NAME", "EMAIL")  # for a commit on any machine
INSTALL_TIMEOUT = 1200  # a cold pip cache on a slow machine; never a timed assertion
needs_virtualenvs = pytest.mark.skipif(
    not RUN_FRESH_VIRTUALENVS,
    reason="building the wheel and a fresh virtualenv per form takes minutes: CI runs it "
    "(CI=true), or set LLM_PLANS_EXTRAS_CHECK=1",
)


def page_lines() -> list[str]:
    """Every command line of the page's shell and text blocks."""
    text = PAGE.read_text()
    blocks = re.findall(r"```(?:bash|text)\n(.*?)```", text, flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def the_line(pattern: str) -> list[str]:
    """The one documented line matching `pattern`, split as the shell splits it."""
    (line,) = [line for line in page_lines() if re.search(pattern, line)]
    return shlex.split(line)


def requirement(pattern: str) -> tuple[str, str]:
    """The quoted requirement of a `pip install` line, and the extra it names."""
    *command, quoted = the_line(pattern)
    assert command == ["python", "-m", "pip", "install"], command
    extra = re.search(r"\[([\w-]+)\]", quoted)
    assert extra is not None, quoted
    return quoted, extra[1]


def test_the_wheel_line_names_the_wheel_of_this_version() -> None:
    quoted, extra = requirement(r"\.whl\[")
    # the file name `pip wheel` gives this version: pure Python, any platform
    assert quoted == f"dist/llm_plans-{llm_plans.__version__}-py3-none-any.whl[{extra}]"
    assert extra in extras_check.EXTRAS


def test_the_url_line_is_pinned_by_commit_not_by_a_tag() -> None:
    quoted, extra = requirement(r"git\+")
    assert quoted == f"llm-plans[{extra}] @ git+<url>@<commit>"
    # no release is tagged yet: a tag in the docs would name nothing
    assert not any(re.search(r"@v\d", line) for line in page_lines())


def imports_of(extra: str) -> list[str]:
    """The modules the extra promises: those the docs' blocks import, by the extra that
    installs each (tests/support/extras_check.py)."""
    return sorted(
        m for m, e in extras_check.MODULE_EXTRA.items() if e in extras_check.INCLUDES[extra]
    )


def check_installed(python: Path, extra: str) -> None:
    """The fresh virtualenv's llm_plans is its own, of this version, and what the extra
    installs imports there."""
    modules = imports_of(extra)
    assert modules, extra
    code = (
        f"import {', '.join(modules)}, llm_plans\n"
        "print(llm_plans.__file__)\nprint(llm_plans.__version__)"
    )
    out = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=python.parents[1],  # not the checkout, whose llm_plans must not be the one imported
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    where, version = out.stdout.split()
    assert Path(where).is_relative_to(python.parents[1]), where
    assert version == llm_plans.__version__


@needs_virtualenvs
def test_the_wheel_built_and_installed_as_the_page_says(tmp_path: Path) -> None:
    source = tmp_path / "clone"
    # The page runs in a clone: a copy of this checkout's sources, without its build output.
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(".*", "dist", "site", "node_modules", "__pycache__"),
    )
    build = the_line(r"pip wheel")
    assert build[:3] == ["python", "-m", "pip"], build
    # As written, with build isolation: the build backend comes from the index.
    subprocess.run(
        [sys.executable, *build[1:]],
        cwd=source,
        check=True,
        capture_output=True,
        timeout=INSTALL_TIMEOUT,
        env=clean_env(),
    )
    quoted, extra = requirement(r"\.whl\[")
    python = fresh_virtualenv(tmp_path / "venv", str(source / quoted), timeout=INSTALL_TIMEOUT)
    check_installed(python, extra)


@needs_virtualenvs
def test_the_repository_url_pinned_by_commit(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to clone (CI runs from one)")
    clone = tmp_path / "repository"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    commit = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # A later commit on the default branch: the pin, not the branch, decides what installs.
    (clone / "llm_plans" / "_version.py").write_text('__version__ = "9.9.9"\n')
    subprocess.run(
        ["git", "-C", str(clone), "commit", "-qam", "not the pinned commit"],
        check=True,
        timeout=60,
        env=clean_env() | {f"GIT_{who}_{what}": "test" for who in WHO for what in WHAT},
    )
    quoted, extra = requirement(r"git\+")
    pinned = quoted.replace("<url>", clone.as_uri()).replace("<commit>", commit)
    python = fresh_virtualenv(tmp_path / "venv", pinned, timeout=INSTALL_TIMEOUT)
    check_installed(python, extra)  # of the pinned commit's version, not the later one's
