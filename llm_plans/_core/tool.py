"""What a plan tool is: one type for every tool of every dialect, ours included.

A tool is a value: the arguments the model is told and the validator that takes what models
send, how its calls change the plans (`run`), and the few facts about it that the parse and
the previews of a streamed call need. The session never asks whose tool it is; it asks the
tool. The tools themselves live in `llm_plans.dialects`, one module per dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter

from .builder import Rules
from .plans import Book, Stored
from .prompts import prompt
from .results import CUT_OFF_LIST

if TYPE_CHECKING:
    from .outcome import Applied, Read

DEFAULT_LIST_ID = "main"
"""The id of the one items plan single-list dialects write (ACP v2's name for a v1 plan)."""


# Not frozen, as Applied: one is made on every call and never changed, and a frozen
# dataclass's __init__ costs about 0.7 µs more (the benchmarks' `per-call` section).
@dataclass(slots=True)
class Call:
    """One validated call of a plan tool, with the state it applies to."""

    tool: PlanTool
    args: dict[str, Any]
    book: Book
    rules: Rules
    reserved_ids: Collection[str] = ()
    """Ids that streams in flight show, which a generated id must avoid."""
    own_id: str | None = None
    """The id this call's own previews showed, which a generated id keeps when still free."""
    texts_checked: bool = False
    """The parse found every entry's text within `limits.max_entry_chars` already."""

    @property
    def list_id(self) -> str:
        return self.rules.list_id or DEFAULT_LIST_ID

    @property
    def current(self) -> Stored | None:
        """The dialect's list as the session holds it, when it exists and is an items plan."""
        plan = self.book.plans.get(self.list_id)
        return plan if plan is not None and plan.type == "items" else None


def _as_sent(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Previews:
    """How a streamed call of a tool is shown before it ends; `Previews()`: it is not.

    A list dialect's (`Previews.of_list`) show the complete items of its list field,
    whenever there is one, whether or not the list exists yet.
    """

    list_keys: tuple[str, ...] = ()
    """Arrays whose complete elements a preview may show."""
    text_keys: tuple[str, ...] = ()
    """Text fields whose complete lines a preview may show (a markdown plan's content)."""
    steps_as_text: bool = False
    """A step may come as a JSON string (which the core repairs), so a `,` may end one."""
    showable: Callable[[Mapping[str, Any]], bool] | None = None
    """Whether the fields final so far say which plan a preview shows and have something
    to show; None: one of the `list_keys` holds an item."""
    plan_exists: bool | None = None
    """The previewed plan must exist (True: an update), must not (False: a create), or
    either (None: a list written whole)."""
    keeps_generated_id: bool = False
    """A call without an id keeps the id its first preview was given (a create)."""
    entry_by_entry: bool = False
    """Each preview validates and builds only the entries that became final since the last
    one (`_streaming.preview`); False: each preview is the whole call's answer."""

    @classmethod
    def of_list(cls, list_field: str) -> Previews:
        """A list dialect's: the complete items of `list_field`."""
        return cls(list_keys=(list_field,))

    def shows(self, fields: Mapping[str, Any]) -> bool:
        """Whether a preview can show something of a call whose final fields are `fields`."""
        if self.showable is not None:
            return self.showable(fields)
        return any(fields.get(key) for key in self.list_keys)


@dataclass(frozen=True, eq=False)
class PlanTool:
    """One plan tool: `create_plan`, Claude Code's `TodoWrite`, Codex's `update_plan`, ...."""

    dialect: str
    name: str
    """The name the model calls."""
    definition: type[BaseModel]
    """The arguments as the model is told them (the shape it was trained on)."""
    adapter: TypeAdapter[Any]
    """Validates the arguments models send (the definition, and variants of it), to a dict."""
    run: Callable[[Call], Applied | Read]
    """The call's effect, through the core's writers; raises `Rejection` for bad input."""
    repair: Callable[[Any], Any] = _as_sent
    """Common mistakes undone, for arguments that failed validation."""
    nested: Mapping[str, str] = field(default_factory=dict)
    """Accepted fields of the objects in each array, for "not a known field" problems."""
    plans_by_id: bool = False
    """The tool names the plan it acts on by id (ours); False: it acts on its dialect's one
    list, the plan at `rules.list_id`."""
    quick_parse: Callable[[bytes, int | None], Any] | None = None
    """A parse of the usual call's bytes in one pass that returns what the strict path
    would, and holds each entry's text to the given length; None when it cannot tell (the
    strict path then decides). None: the tool has none."""
    cut_off: str = CUT_OFF_LIST
    """What the model is told when the output token limit cut a call short."""
    previews: Previews = Previews()
    """How a streamed call is shown before it ends; `Previews()`: it is not."""

    @cached_property
    def needs_arguments(self) -> bool:
        """False for a tool whose every argument is optional (`TaskList`): a call with no
        arguments at all (empty text, None) is `{}` to it."""
        return any(f.is_required() for f in self.definition.model_fields.values())

    @cached_property
    def fields(self) -> tuple[str, ...]:
        """The top-level fields the tool accepts, for "not a known field" problems."""
        return tuple(self.definition.model_fields)

    @property
    def description(self) -> str:
        """The description the model reads, from `prompts/<dialect>/<name>.md`."""
        return prompt(f"{self.dialect}/{self.name}")


@dataclass(frozen=True)
class Dialect:
    """A family of plan tools, by the name `PlanSession(dialects=...)` takes."""

    name: str
    tools: tuple[PlanTool, ...]
    semantics: str
    """How a call changes the plans, for the docs' table: "full replacement", ...."""


DEFAULT_PREFIXES: tuple[str, ...] = ("", "mcp__plans__")
"""The plain names, and the names Claude Code and the Claude Agent SDK give the tools of an
MCP server registered under the key "plans" (`mcp__plans__create_plan`)."""


class Names:
    """Resolves tool names as the model sent them to a session's plan tools, for a set of
    prefixes (`tools` maps each plain name to its tool)."""

    def __init__(
        self, tools: Mapping[str, PlanTool], prefixes: Iterable[str] = DEFAULT_PREFIXES
    ) -> None:
        self.prefixes = tuple(dict.fromkeys(prefixes))
        self.tools = tools
        self._known: dict[str, PlanTool] = {
            prefix + name: tool for prefix in self.prefixes for name, tool in tools.items()
        }

    def resolve(self, name: object) -> PlanTool | None:
        """The plan tool `name` calls, or None when it names no plan tool."""
        return self._known.get(name) if isinstance(name, str) else None
