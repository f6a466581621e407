"""The package's layers, pinned as its public API is: which module may import which.

Every import statement of every module counts, wherever it stands (under `TYPE_CHECKING`,
inside a function), as written: importing `llm_plans._core.apply` is an edge to that module,
not to the packages Python also initialises on the way. docs/internals.md draws the layers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

import llm_plans

PACKAGE = Path(llm_plans.__file__).parent

TOP_LEVEL = {
    "__init__",
    "__main__",
    "tools",
    "view",
    "_session",
    "_lock",
    "_version",
    "_errors",
    "_limits",
    "_models",
}
"""The modules the top level may hold: the public ones, the session and its lock, and the
small ones every layer shares."""

FOLDERS = {"_core", "_streaming", "_wire", "_cli", "_proxy", "dialects", "providers"}
FOLDERS |= {"integrations"}
FOLDERS |= {"testing", "prompts"}

RULES: dict[str, tuple[str, ...]] = {
    # layer: what it may not import (a module, or every module under a package)
    "llm_plans._core": (
        "llm_plans._proxy",
        "llm_plans._streaming",
        "llm_plans._wire",
        "llm_plans._session",
        "llm_plans._lock",
        "llm_plans.providers",
        "llm_plans.integrations",
        "llm_plans.dialects",
        "llm_plans._cli",
        "llm_plans.tools",
        "llm_plans.view",
    ),
    "llm_plans._wire": (
        "llm_plans._proxy",
        "llm_plans._session",
        "llm_plans._streaming",
        "llm_plans.providers",
        "llm_plans.integrations",
        "llm_plans.dialects",
        "llm_plans._cli",
    ),
    "llm_plans._streaming": (
        "llm_plans._proxy",
        "llm_plans._session",
        "llm_plans.providers",
        "llm_plans.integrations",
        "llm_plans.dialects",
        "llm_plans._cli",
    ),
    "llm_plans.dialects": (
        "llm_plans._proxy",
        "llm_plans._session",
        "llm_plans._streaming",
        "llm_plans._wire",
        "llm_plans.providers",
        "llm_plans.integrations",
        "llm_plans._cli",
    ),
    # The providers reach the session only through their `Session` Protocol.
    "llm_plans.providers": (
        "llm_plans._proxy",
        "llm_plans",  # the package itself imports the session
        "llm_plans._session",
        "llm_plans._streaming",
        "llm_plans._wire",
        "llm_plans.dialects",
        "llm_plans.integrations",
        "llm_plans._cli",
    ),
    # The proxy builds plans through the session, as any agent does; only the CLI starts it.
    "llm_plans._proxy": (
        "llm_plans.providers",
        "llm_plans.integrations",
        "llm_plans._streaming",
        "llm_plans._cli",
        "llm_plans.tools",
    ),
    "llm_plans._session": ("llm_plans._proxy", "llm_plans._cli", "llm_plans.integrations"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> Iterator[str]:
    """Every llm_plans module `name` imports, absolute."""
    is_package = path.name == "__init__.py"
    known = modules()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "llm_plans")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "llm_plans":
                continue
            for alias in node.names:  # `from . import results` imports a module
                sub = f"{target}.{alias.name}"
                yield sub if sub in known else target


@cache
def graph() -> dict[str, frozenset[str]]:
    return {name: frozenset(_imports(name, path)) for name, path in modules().items()}


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_import_reader_sees_every_kind_of_import() -> None:
    # A check on the checker: relative, package-relative, TYPE_CHECKING-only and in-function
    # imports all appear as edges.
    edges = graph()
    assert "llm_plans._core.results" in edges["llm_plans._core.outcome"]  # from . import results
    assert "llm_plans._core.outcome" in edges["llm_plans._core.tool"]  # under TYPE_CHECKING
    assert "llm_plans._session" in edges["llm_plans.integrations._dialect"]  # TYPE_CHECKING
    assert "llm_plans._cli.agent" in edges["llm_plans._cli.main"]  # inside a function
    assert "llm_plans._session" in edges["llm_plans"]


def test_the_top_level_holds_only_the_public_modules_and_the_shared_ones() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top <= TOP_LEVEL, sorted(top - TOP_LEVEL)
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= FOLDERS, sorted(folders - FOLDERS)


@pytest.mark.parametrize("layer", sorted(RULES))
def test_each_layer_imports_only_what_is_below_it(layer: str) -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        if _under(module, layer)
        for target in sorted(targets)
        for banned in RULES[layer]
        if (target == banned if banned == "llm_plans" else _under(target, banned))
        and not _under(target, layer)
    ]
    assert wrong == []


def test_no_module_imports_itself_back_through_others() -> None:
    # Tarjan's strongly connected components: any component of more than one module (or a
    # module importing itself) is a circle.
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges[node]:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert circles == []


def _imported_dialects(code: str) -> list[str]:
    """The dialect modules imported after running `code` in a fresh interpreter."""
    script = (
        f"import sys\n{code}\n"
        "print(sorted(m for m in sys.modules if m.startswith('llm_plans.dialects.')"
        " and not m.startswith('llm_plans.dialects._')))"  # the dialects, not their helpers
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return eval(done.stdout)  # type: ignore[no-any-return]  # a list of names we printed


def test_importing_llm_plans_imports_no_dialect_but_ours() -> None:
    assert _imported_dialects("import llm_plans") == ["llm_plans.dialects.llm_plans"]


def test_a_session_imports_the_dialects_it_takes_and_no_other() -> None:
    code = (
        "from llm_plans import PlanSession\n"
        "from llm_plans.testing import RecordingSend\n"
        "PlanSession(RecordingSend(), session_id='s', dialects=['llm_plans', 'cursor'])"
    )
    assert _imported_dialects(code) == ["llm_plans.dialects.cursor", "llm_plans.dialects.llm_plans"]
    code = "from llm_plans import tools\ntools.openai_chat(dialect='claude_todos')"
    assert _imported_dialects(code) == [
        "llm_plans.dialects.claude_todos",
        "llm_plans.dialects.llm_plans",
    ]
