"""Every parameter of the public API is named in a Google-style `Args:` section.

What is walked: each name in the `__all__` of `llm_plans`, `llm_plans.tools`,
`llm_plans.providers`, `llm_plans.testing`, `llm_plans.view` and of every public module of
`llm_plans.dialects` and `llm_plans.integrations` (a module with no `__all__` offers the
public names it defines, as the API reference renders it). For each:

- a function: every parameter, in its own docstring's `Args:`;
- a class: every constructor parameter, in the class docstring's `Args:` (the API reference
  merges `__init__` into the class); and every public method it defines or inherits from a
  class of llm_plans (classmethods, staticmethods and async methods too), in the method's own
  `Args:`. Properties take no parameters and are skipped. A Protocol's methods are what users
  implement, so they count like any other method;
- `self`, `cls`, `*args` and `**kwargs` are never required (they may be documented).

Choices:

- A pydantic model's or dataclass's constructor parameters are its fields. A field may be
  documented instead by its own docstring (the docstring under it, or a pydantic
  `description`): that is where the API reference shows it, and for the tools' argument
  models it is the schema description the model reads. For a pydantic model it is the only
  way: griffe, which builds the API reference, sees pydantic's `__init__(**data)` and warns
  on an `Args:` entry for a field, which fails the strict docs build.
- Tool-argument models (our tools' and each dialect tool's, and the models nested in them:
  found from the tool registry) are held to what their own field docstrings say and nothing
  more: those docstrings are the schema texts snapshot tests pin, and a dialect's models
  mirror another agent's tool definition, whose fields the tool description the model reads
  (`prompts/<dialect>/<tool>.md`) explains. An undocumented field there is no failure, a
  stale `Args:` entry still is.
- A pydantic model's fields and the methods a class overrides from a framework's class (a
  LangChain `BaseTool` field, a LangChain callback, a pydantic-ai toolset method) take the
  framework's parameters, documented by it, and called by it rather than by the user; only
  what llm_plans itself declares is checked.
- An Enum's members, and an exception or Protocol without a constructor of its own, have no
  constructor parameters to document.

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
import typing
from collections.abc import Callable, Iterator
from functools import cache
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
PACKAGES = ["llm_plans.dialects", "llm_plans.integrations"]


_STARS = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
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
        pytest.skip(f"{name} needs {missing}, which is not installed: {error}")


def public_names(module: ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if name[0] != "_" and getattr(value, "__module__", None) == module.__name__
    ]


@cache
def griffe_package() -> griffe.Module:
    # Static analysis, for what introspection cannot see: the docstrings under class fields.
    return griffe.load("llm_plans", resolve_aliases=False)  # type: ignore[return-value]


def args_section(docstring: str | None) -> list[str]:
    """The names the docstring's `Args:` sections document (`*args` and `**kwargs` with their
    stars), as the API reference reads them."""
    if not docstring:
        return []
    parsed = griffe.Docstring(inspect.cleandoc(docstring), parser="google")
    sections = parsed.parse(warn_missing_types=False, warn_unknown_params=False)
    kind = griffe.DocstringSectionKind.parameters
    return [p.name for section in sections if section.kind is kind for p in section.value]


@cache
def tool_argument_models() -> frozenset[type[BaseModel]]:
    """Every model a plan tool's arguments are validated by, and the models nested in them."""
    from llm_plans._dialects import DIALECTS
    from llm_plans._registry import TOOLS

    found: set[type[BaseModel]] = set()
    todo: list[type[BaseModel]] = [tool.arguments for tool in TOOLS.values()]
    todo += [tool.definition for dialect in DIALECTS.values() for tool in dialect.tools]
    while todo:
        model = todo.pop()
        if model in found:
            continue
        found.add(model)
        for info in model.model_fields.values():
            todo += [t for t in _types_in(info.annotation) if issubclass(t, BaseModel)]
    return frozenset(found)


def _types_in(annotation: Any) -> Iterator[type]:
    if isinstance(annotation, type):
        yield annotation
    for argument in typing.get_args(annotation):
        yield from _types_in(argument)


def field_docstring(cls: type, name: str) -> str | None:
    """A field's own docstring, as griffe reads it (for pydantic, also its description)."""
    if issubclass(cls, BaseModel) and cls.model_fields[name].description:
        return cls.model_fields[name].description
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        path = f"{klass.__module__}.{klass.__qualname__}".removeprefix("llm_plans.")
        member = griffe_package()[path].members.get(name)
        if member is not None and member.docstring is not None:
            return str(member.docstring.value)
    return None


def check(
    where: str,
    parameters: list[inspect.Parameter],
    docstring: str | None,
    documented_elsewhere: Callable[[str], bool] = lambda name: False,
) -> Iterator[str]:
    """What is wrong with `docstring` as the `Args:` of `parameters` at `where`."""
    named = args_section(docstring)
    missing = [
        p.name
        for p in parameters
        if p.kind not in _VARIADIC
        and p.name not in {"self", "cls"}
        and p.name not in named
        and not documented_elsewhere(p.name)
    ]
    if missing:
        yield f"{where}: no Args: entry for {', '.join(missing)}"
    known = {_STARS.get(p.kind, "") + p.name for p in parameters}
    stale = [name for name in named if name not in known]
    if stale:
        yield f"{where}: Args: names {', '.join(stale)}, which it does not take"


def constructor(cls: type) -> tuple[list[inspect.Parameter], Callable[[str], bool]]:
    """The class's constructor parameters, and which of them are documented elsewhere than in
    its `Args:` (by a field docstring, or by a framework)."""
    if issubclass(cls, enum.Enum):
        return [], lambda name: False
    if issubclass(cls, BaseModel) and "__init__" not in vars(cls):
        parameters = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in cls.model_fields
        ]
        if cls in tool_argument_models():
            return parameters, lambda name: True
        ours = {
            name
            for klass in cls.__mro__
            if _ours(klass)
            for name in getattr(klass, "__annotations__", {})
        }
        return parameters, lambda name: name not in ours or field_docstring(cls, name) is not None
    if dataclasses.is_dataclass(cls):
        # Its __init__ (written by dataclasses, or by hand to the same effect) takes the
        # fields, which may carry docstrings.
        fields = {f.name for f in dataclasses.fields(cls)}
        parameters = list(inspect.signature(cls).parameters.values())
        return parameters, lambda name: name in fields and field_docstring(cls, name) is not None
    if not any("__init__" in vars(klass) for klass in cls.__mro__ if _ours(klass)):
        # An exception, a Protocol or a subclass of a framework class with no constructor of
        # its own: its parameters are documented where that constructor is.
        return [], lambda name: False
    return list(inspect.signature(cls).parameters.values()), lambda name: False


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
            if name[0] == "_" or name in seen:
                continue
            seen.add(name)
            if any(hasattr(base, name) for base in cls.__mro__ if not _ours(base)):
                continue  # the framework's method, called by the framework
            if isinstance(value, staticmethod | classmethod):
                yield name, value.__func__
            elif inspect.isfunction(value):
                yield name, value


def problems(module: ModuleType) -> Iterator[str]:
    for name in public_names(module):
        value = getattr(module, name)
        where = f"{module.__name__}.{name}"
        if inspect.isclass(value):
            parameters, documented_by_field = constructor(value)
            yield from check(where, parameters, value.__doc__, documented_by_field)
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
