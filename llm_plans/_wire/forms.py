"""The `session/update` payloads, built in one place for each wire form.

Built as plain dicts rather than through the ACP SDK's models: this is the hot path, the
stored entries are already in ACP's shape, and tests check every form against the stable
shapes ACP settled on 2026-11-20 and the schemas the SDKs publish. No SDK release models the
stable shapes yet (a markdown plan's `path`), so they exist only as these dicts."""

from __future__ import annotations

import enum
import json
import operator
import warnings
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii as _escaped
from typing import Any, NamedTuple, Protocol, runtime_checkable

from .._core.plans import CONTENT, PRIORITY, STATUS, Stored, extra_of
from .._errors import ConfigurationError
from .._limits import Limits

DEFAULT_ENTRY_CHARS = Limits().max_entry_chars

Json = dict[str, Any]


class WireForm(str, enum.Enum):
    """How plans reach a client, chosen from the protocol version it negotiated in
    `initialize` and the capabilities it advertised there.

    `WireForm("v2")` looks a form up by its value, as `PlanSession(form="v2")` does.

    Args:
        value: A form's value: `"legacy"`, `"documents"`, `"schema"` or `"v2"`.
        names: Python's functional Enum API (making a new enum); not for WireForm.
        module: As `names`.
        qualname: As `names`.
        type: As `names`.
        start: As `names`.
        boundary: As `names`.
    """

    DOCUMENTS = "documents"
    """The spec documents' draft, for a client that advertised `planCapabilities` (not `plan`):
    `plan_update` / `plan_removed` keyed by `id`, and file plans as `file` with `uri`."""
    SCHEMA = "schema"
    """ACP v1's stable plan operations (since 2026-11-20), for a client that advertised
    `plan`: items and markdown plans keyed by `planId`, and `plan_removed`. A file plan goes
    as a markdown plan of its file's text, with the file's absolute `path`."""
    LEGACY = "legacy"
    """One `plan` update with every entry of every plan: the client advertised neither."""
    V2 = "v2"
    """ACP v2, for a client that negotiated `protocolVersion` 2: what `SCHEMA` sends, with
    `cancelled` a status of its own."""
    V2_UNSTABLE = "v2-unstable"
    """Deprecated: v2's baseline now carries markdown plans and `plan_removed`, which this
    form was for. A session given it sends `V2` (and says so with a DeprecationWarning)."""


V1_FORMS = (WireForm.DOCUMENTS, WireForm.SCHEMA, WireForm.LEGACY)
"""The forms of ACP v1, which has no `cancelled` status."""

CANCELLED_PREFIX = "Cancelled: "
"""What a cancelled step's content starts with in the v1 forms, where it shows as completed."""


def as_read(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A step as a client reads it back: a v1 `completed` step whose content starts with
    `Cancelled: ` is cancelled (its content without the prefix); any other as it is. So a
    step whose own text starts so reads as cancelled too."""
    content = entry.get("content")
    if (
        entry.get("status") == "completed"
        and isinstance(content, str)
        and content.startswith(CANCELLED_PREFIX)
    ):
        return {**entry, "content": content[len(CANCELLED_PREFIX) :], "status": "cancelled"}
    return dict(entry)


@runtime_checkable
class Negotiated(Protocol):
    """What `initialize` settled, as `ClientCapabilitiesRecorder` keeps it."""

    capabilities: Json | None
    protocol_version: int | None


def parse_form(form: WireForm | str) -> WireForm:
    """A wire form given by name, or a ConfigurationError listing the names."""
    try:
        return WireForm(form)
    except ValueError:
        names = ", ".join(repr(f.value) for f in WireForm)
        raise ConfigurationError(f"unknown wire form {form!r}; use one of {names}") from None


def settled_form(form: WireForm) -> WireForm:
    """The form a session sends for `form`: `V2` for the deprecated `V2_UNSTABLE`, with a
    DeprecationWarning, since v2's baseline carries everything that form was for."""
    if form is WireForm.V2_UNSTABLE:
        warnings.warn(
            'the "v2-unstable" wire form is deprecated: ACP v2\'s baseline now carries markdown '
            'plans and plan_removed; use form="v2" (the session sends it)',
            DeprecationWarning,
            stacklevel=3,
        )
        return WireForm.V2
    return form


def form_for(capabilities: Any, protocol_version: int | None = None) -> WireForm:
    """The wire form for a client: v2 when it negotiated `protocolVersion` 2 or later, else
    the v1 form its `clientCapabilities` (a dict, an ACP SDK model, or None) ask for.

    `capabilities` may also be a `ClientCapabilitiesRecorder`, which brings the negotiated
    version with it (an explicit `protocol_version` wins)."""
    if isinstance(capabilities, Negotiated) and not isinstance(capabilities, Mapping):
        if protocol_version is None:
            protocol_version = capabilities.protocol_version
        capabilities = capabilities.capabilities
    if protocol_version is not None:
        if type(protocol_version) is not int or protocol_version < 0:
            raise ConfigurationError(
                "protocol_version must be the protocolVersion number initialize negotiated "
                f"(1 or 2), or None; got {protocol_version!r}"
            )
        # v2 has no plan capability: a client that speaks it takes plan updates as such.
        if protocol_version >= 2:
            return WireForm.V2
    caps = _as_dict(capabilities)
    # The stable capability first: a client that advertised both takes the stable form.
    if isinstance(caps.get("plan"), Mapping):
        return WireForm.SCHEMA
    if isinstance(caps.get("planCapabilities"), Mapping):
        return WireForm.DOCUMENTS
    return WireForm.LEGACY


def takes_subagents(capabilities: Any, form: WireForm) -> bool:
    """Whether a client takes subagent sessions (ACP, stable since 2026-11-20): every v2
    client does; a v1 client that advertised `subagents: {}` in its raw capabilities (a dict,
    or a `ClientCapabilitiesRecorder`: the SDK's `ClientCapabilities` model drops the key)."""
    if form is WireForm.V2:
        return True
    if isinstance(capabilities, Negotiated) and not isinstance(capabilities, Mapping):
        capabilities = capabilities.capabilities
    return isinstance(capabilities, Mapping) and isinstance(capabilities.get("subagents"), Mapping)


def _as_dict(capabilities: Any) -> Mapping[str, Any]:
    if capabilities is None:
        return {}
    if isinstance(capabilities, Mapping):
        return capabilities
    dump = getattr(capabilities, "model_dump", None)
    if callable(dump):
        # by_alias gives the wire names; extras (such as a `planCapabilities` the SDK's model
        # does not declare) are kept when the model allows them.
        dumped = dump(by_alias=True, mode="json")
        if isinstance(dumped, Mapping):
            return dumped
    raise ConfigurationError(
        "client_capabilities must be the clientCapabilities dict from initialize, "
        "an acp.schema.ClientCapabilities, a ClientCapabilitiesRecorder, or None; got "
        f"{type(capabilities).__name__}"
    )


def shown_entries(
    plan: Stored, form: WireForm, max_chars: int = DEFAULT_ENTRY_CHARS
) -> tuple[Json, ...]:
    """An items plan's entries as a client of `form` shows them.

    In every form a step in progress whose `_meta["llm_plans"]["activeForm"]` is a non-empty
    string (Claude's wording of a step while it runs) shows that text. In the v1 forms, which
    have no `cancelled`, a cancelled step keeps its place as completed with its content
    prefixed `Cancelled: `, so it reads neither as done nor as still to do; its text is cut so
    that prefix and text together are at most `max_chars` (a client's entry limit). `_meta`
    goes out unchanged. A plan that needs neither (the usual case) sends its stored entries as
    they are.
    """
    cancelled = form in V1_FORMS and plan.status_counts()["cancelled"] > 0
    active = _active_steps(plan)
    if not cancelled and not active:
        return plan.entries
    shown = list(plan.entries)
    for step, text in active.items():
        shown[step] = {**shown[step], "content": text}
    if cancelled:
        for step, status in enumerate(plan.statuses):
            if status == "cancelled":
                entry = shown[step]
                content = entry["content"]
                if not content.startswith(CANCELLED_PREFIX):  # a step that already says so
                    content = CANCELLED_PREFIX + content
                if len(content) > max_chars:
                    content = content[: max_chars - 3] + "..."
                shown[step] = {**entry, "content": content, "status": "completed"}
    return tuple(shown)


def _active_steps(plan: Stored) -> dict[int, str]:
    # The steps in progress are few (usually one): look only at those.
    found: dict[int, str] = {}
    for number in plan.in_progress():
        entry = plan.entries[number - 1]
        if "_meta" not in entry:
            continue
        text = extra_of(entry).get("activeForm")
        if isinstance(text, str) and text.strip():
            found[number - 1] = text
    return found


class Document(NamedTuple):
    """A file plan as the stable forms send it: a markdown plan of the file's text."""

    content: str
    """The file's whole text, or `Plan file: <path>` when it cannot be read."""
    path: str | None
    """The file's absolute path (the plan's `file:` URI, percent-decoded)."""


def plan_update(
    form: WireForm,
    plan: Stored,
    document: Document | None = None,
    max_chars: int = DEFAULT_ENTRY_CHARS,
) -> Json:
    """A `plan_update` carrying the complete plan.

    In the stable forms (`schema`, `v2`) a file plan goes as the markdown plan `document`
    (which the caller's `Flattener` reads); the spec documents' form sends its `uri`."""
    body: Json = {"type": plan.type, _id_key(form): plan.id}
    if plan.type == "items":
        body["entries"] = list(shown_entries(plan, form, max_chars))
    elif plan.type == "markdown":
        body["content"] = plan.content
    elif form is WireForm.DOCUMENTS:
        body["uri"] = plan.uri
    else:
        if document is None:
            raise ValueError(f"the {form.value} form sends a file plan as its file's text")
        body["type"] = "markdown"
        body["content"] = document.content
        if document.path is not None:
            body["path"] = document.path
    if plan.meta is not None:
        body["_meta"] = plan.meta
    return {"sessionUpdate": "plan_update", "plan": body}


def plan_removed(form: WireForm, plan_id: str) -> Json:
    """A `plan_removed` for one plan."""
    return {"sessionUpdate": "plan_removed", _id_key(form): plan_id}


def legacy_plan(entries: list[Json]) -> Json:
    """The legacy `plan` update: the complete list the client replaces its plan with."""
    return {"sessionUpdate": "plan", "entries": entries}


def notification(session_id: str, update: Json) -> Json:
    """The params of a `session/update` notification."""
    return {"sessionId": session_id, "update": update}


# What compact JSON (the ACP SDK's transports write it) spends on each entry's keys and
# punctuation: `{"content":,"priority":,"status":},` (its texts' quotes come with the texts).
_ENTRY = 35
_TEXTS = ("planId", "id", "content", "uri", "path")


def weight(session_id: str, update: Json) -> int:
    """The bytes of one `session/update` notification's params as compact JSON, reckoned
    without serialising them (tests/wire/test_forms.py holds them equal). The texts count as
    `json.dumps` escapes them, so a preview budget counts what really goes out."""
    return Scale().weigh(session_id, update)


class Scale:
    """Weighs notifications as `weight` does, remembering the entries it weighed last: a
    streamed call's previews carry the last preview's entries (the same objects) and a few
    more, and only those more are weighed again."""

    def __init__(self) -> None:
        self._entries: list[Json] = []
        self._weight = 0

    def weigh(self, session_id: str, update: Json) -> int:
        body = update.get("plan", update)  # the legacy update carries its entries itself
        entries = body.get("entries") or []
        known, count = self._entries, len(self._entries)
        if count and len(entries) >= count and all(map(operator.is_, entries, known)):
            # (`map` stops at the shorter: the known entries are the new ones' beginning)
            heavy = self._weight + _entries_weight(entries[count:])
        else:
            heavy = _entries_weight(entries)
        self._entries, self._weight = entries, heavy
        size = _frame(update, body) + len(_escaped(session_id)) + heavy - (1 if entries else 0)
        for key in _TEXTS:
            text = body.get(key)
            if type(text) is str:
                size += len(_escaped(text))
        if "_meta" in body:
            size += len(_compact(body["_meta"]))
        return size


_FRAMES: dict[tuple[Any, ...], int] = {}


def _frame(update: Json, body: Json) -> int:
    """The bytes of the notification's shape alone: its keys and words, its texts' and
    `_meta`'s places empty. Worked out once per shape (there are a few)."""
    key = (update["sessionUpdate"], body.get("type"), *body)
    size = _FRAMES.get(key)
    if size is None:
        bare: Json = {
            k: [] if k == "entries" else None if k in _TEXTS or k == "_meta" else v
            for k, v in body.items()
        }
        shape = {**update, "plan": bare} if "plan" in update else bare
        # Each `null` stands where a text (with its quotes) or `_meta` will be counted.
        nulls = sum(1 for k in bare if k in _TEXTS or k == "_meta")
        size = len(_compact(notification("", shape))) - 2 - 4 * nulls
        _FRAMES[key] = size
    return size


def _entries_weight(entries: list[Json]) -> int:
    if len(entries) < 4:  # a preview's new entries: one by one costs least
        size = 0
        for e in entries:
            size += _ENTRY + len(_escaped(e["content"])) + len(e["priority"])
            size += len(e["status"]) + 4
            if len(e) != 3 and "_meta" in e:
                size += len(_compact(e["_meta"])) + 9
        return size
    # Each text joined into one, escaped in one call: a call per entry costs five times.
    # (the joined text's two quotes stand for one entry's; the others' are added)
    size = (_ENTRY + 6) * len(entries) + len(_escaped("".join(map(CONTENT, entries)))) - 2
    size += len("".join(map(PRIORITY, entries))) + len("".join(map(STATUS, entries)))
    if sum(map(len, entries)) != 3 * len(entries):  # some entry has `_meta`
        size += sum(len(_compact(e["_meta"])) + 9 for e in entries if "_meta" in e)
    return size


def plan_of(update: Json) -> str | None:
    """The id of the plan a `plan_update` or `plan_removed` is about; None for the legacy
    update (every plan's entries), whatever the form's key for it."""
    body = update.get("plan", update)
    plan_id = body.get("planId", body.get("id"))
    return plan_id if isinstance(plan_id, str) else None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _id_key(form: WireForm) -> str:
    if form is WireForm.LEGACY:
        raise ValueError("the legacy form has no plan_update or plan_removed")
    return "id" if form is WireForm.DOCUMENTS else "planId"
