"""Every parameter of the public API is named in a Google-style `Args:` section.

What is walked: each name in the `__all__` of `llm_plans`, `llm_plans.tools`,
`llm_plans.providers`, `llm_plans.testing`, `llm_plans.view`, `llm_plans.dialects` and of
every public module of `llm_plans.dialects`, `llm_plans.integrations` and
`llm_plans.providers` (a module with no `__all__` offers the public names it defines, as the
API reference renders it). For each:

- a function: every parameter, in its own docstring's `Args:`;
- a class: every parameter a call of it takes (`inspect.signature`: a pydantic model's or
  dataclass's fields, by alias; a framework class's fields it inherits too), in the class
  docstring's `Args:`; and every public method it defines or inherits from a class of
  llm_plans (classmethods, staticmethods, async methods, `__call__`, and the framework
  callbacks it overrides), in the method's own `Args:`. Properties take no parameters and are
  skipped. A Protocol's methods are what users implement, so they count like any other;
- `self`, `cls`, `*args` and `**kwargs` are never required (they may be documented).

An Enum's call is Python's `EnumType.__call__` (`WireForm("v2")`, or the functional API),
documented like any other, but its parameters vary by Python version, so an entry for one
this version lacks is not stale. An exception or Protocol without a constructor of its own has
none to document. A field's own docstring does not stand in for
its `Args:` entry: the class docstring is where a reader of `help()` or an editor's hover
looks. (The docs build is told not to warn on `Args:` for a pydantic model's fields, which
griffe reads against pydantic's `__init__(**data)`.)

Docstrings are parsed as the API reference parses them, by griffe's Google parser, so a
parameter merely mentioned in prose does not count; an `Args:` entry naming no parameter
(stale documentation) fails as well.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import griffe
import pytest
from pydantic import BaseModel

MODULES = [
    "llm_plans",
    "llm_plans.tools",
    "llm_plans.providers",
    "llm_plans.testing",
    "llm_plans.view",
    "llm_plans.dialects",
]
# Each public module of these packages is walked too (found from the package itself, so a new
# dialect or integration is held to this without being listed here).
PACKAGES = ["llm_plans.dialects", "llm_plans.integrations", "llm_plans.providers"]


_STARS: dict[inspect._ParameterKind, str] = {
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.VAR_KEYWORD: "**",
}
_VARIADIC = tuple(_STARS)


def public_modules() -> list[str]:
    names = list(MODULES)
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(path) if m.name[0] != "_"]
    return names


def load(name: str) -> ModuleType:
    """The module; a skip, saying which, when it needs a framework that is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing = error.name or getattr(error.__cause__, "name", None) or ""
        if not name.startswith("llm_plans.integrations.") or missing.startswith("llm_plans"):
            raise
        pytest.skip(
            f"{name} needs {missing}, which is not installed (the dev extra installs it, as CI "
            f"does): {error}"
        )


def public_names(module: ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if name[0] != "_" and getattr(value, "__module__", None) == module.__name__
    ]


def args_section(docstring: str | None) -> list[str]:
    """The names the docstring's `Args:` sections document (`*args` and `**kwargs` with their
    stars), as the API reference reads them."""
    if not docstring:
        return []
    parsed = griffe.Docstring(inspect.cleandoc(docstring), parser="google")
    sections = parsed.parse(warn_missing_types=False, warn_unknown_params=False)
    kind = griffe.DocstringSectionKind.parameters
    return [p.name for section in sections if section.kind is kind for p in section.value]


def check(
    where: str,
    parameters: list[inspect.Parameter],
    docstring: str | None,
) -> Iterator[str]:
    """What is wrong with `docstring` as the `Args:` of `parameters` at `where`."""
    named = args_section(docstring)
    missing = [
        p.name
        for p in parameters
        if p.kind not in _VARIADIC and p.name not in {"self", "cls"} and p.name not in named
    ]
    if missing:
        yield f"{where}: no Args: entry for {', '.join(missing)}"
    known = {_STARS.get(p.kind, "") + p.name for p in parameters}
    stale = [name for name in named if name not in known]
    if stale:
        yield f"{where}: Args: names {', '.join(stale)}, which it does not take"


def constructor(cls: type) -> list[inspect.Parameter]:
    """The parameters a call of the class takes, as `inspect.signature` shows them (a pydantic
    model's or dataclass's fields, a model's by their alias)."""
    if not any("__init__" in vars(klass) for klass in cls.__mro__ if _ours(klass)) and not (
        issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls)
    ):
        # An exception, a Protocol or a subclass of a framework class with no constructor of
        # its own: its parameters are documented where that constructor is.
        return []
    return list(inspect.signature(cls).parameters.values())


def _ours(klass: type) -> bool:
    return klass.__module__.split(".")[0] == "llm_plans"


def methods(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    """The public methods llm_plans defines for `cls` (on it or a base), but properties and
    overrides of a framework's methods."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        for name, value in vars(klass).items():
            if (name[0] == "_" and name != "__call__") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, staticmethod | classmethod):
                yield name, value.__func__
            elif inspect.isfunction(value):
                yield name, value


def problems(module: ModuleType) -> Iterator[str]:
    for name in public_names(module):
        value = getattr(module, name)
        where = f"{module.__name__}.{name}"
        if inspect.isclass(value):
            found = check(where, constructor(value), value.__doc__)
            if issubclass(value, enum.Enum):
                # EnumType.__call__'s parameters are Python's and vary by version: an entry
                # for one this version lacks is no stale documentation.
                found = (problem for problem in found if "which it does not take" not in problem)
            yield from found
            for method_name, method in methods(value):
                parameters = list(inspect.signature(method).parameters.values())
                yield from check(f"{where}.{method_name}", parameters, method.__doc__)
        elif inspect.isroutine(value):
            parameters = list(inspect.signature(value).parameters.values())
            yield from check(where, parameters, value.__doc__)


@pytest.mark.parametrize("name", public_modules())
def test_every_public_parameter_is_named_in_args(name: str) -> None:
    found = list(problems(load(name)))
    assert found == [], "\n".join(found)


def test_a_parameter_named_only_in_prose_does_not_count() -> None:
    def prose(path: str, strict: bool) -> None:
        """Reads `path`; `strict` says how.

        Args:
            path: The file.
        """

    def stale(path: str) -> None:
        """Reads a file.

        Args:
            path: The file.
            mode: Gone.
        """

    def whole(path: str, *rest: str, strict: bool = False, **extra: str) -> None:
        """Reads a file.

        Args:
            path: The file.
            *rest: More files.
            strict (bool): Fail on the first error.
                Otherwise keep going.
        """

    def issues(function: Callable[..., Any]) -> list[str]:
        parameters = list(inspect.signature(function).parameters.values())
        return list(check(function.__name__, parameters, function.__doc__))

    assert issues(prose) == ["prose: no Args: entry for strict"]
    assert issues(stale) == ["stale: Args: names mode, which it does not take"]
    assert issues(whole) == []
