"""Dependencies point one way: the providers build on the session, never the reverse."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import llm_plans

PACKAGE = Path(llm_plans.__file__).parent


def _imports(path: Path) -> set[str]:
    """Every module a file imports (relative imports resolved), at any depth or guard."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    here = parts[:-1]  # the package a relative import starts from (for __init__ too)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(here[: len(here) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_no_core_module_imports_the_providers() -> None:
    # Scans every import, lazy ones inside functions and TYPE_CHECKING ones included.
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(m for m in _imports(path) if ".providers" in m)
        for path in PACKAGE.glob("_*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_providers_do_not_import_the_session_module() -> None:
    for path in (PACKAGE / "providers").glob("*.py"):
        assert "llm_plans._session" not in _imports(path), path.name


def test_importing_the_session_loads_no_provider_module() -> None:
    code = (
        "import sys, llm_plans._session, llm_plans\n"
        "print([m for m in sys.modules if m.startswith('llm_plans.providers')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
