"""A streamed call's preview, built from what is new since the last one, is the core's answer
for the whole final prefix: for every call, fragmentation and rhythm of previews."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from registry import OUR_TOOLS, tools_of
from strategies import PRIORITIES, STATUSES, entry

from llm_plans import Limits
from llm_plans._core.apply import apply
from llm_plans._core.arguments import Decoded
from llm_plans._core.builder import Rules
from llm_plans._core.outcome import Applied, Read, Rejected
from llm_plans._core.plans import Book, Stored
from llm_plans._core.tool import PlanTool
from llm_plans._streaming.partial_json import FinalPrefix
from llm_plans._streaming.preview import Built, grown, preview
from llm_plans.dialects.llm_plans import CREATE_PLAN
from streaming.test_partial_json import fed_in_pieces

INF = "__INF__"  # stands for 1e999 in the text: JSON that decodes to an infinity
TODO_WRITE = tools_of("claude_todos")["TodoWrite"]
TOOLS = {**OUR_TOOLS, "TodoWrite": TODO_WRITE}

# Entries of every kind: valid, repairable (a status or priority synonym, padding the
# validator strips, a step as a string), and hostile (unknown fields, wrong types, empty or
# too long text, an infinite number in _meta, not an object at all).
strange_entries = st.sampled_from(
    [
        {"content": "  padded  ", "status": "done"},
        {"content": "x", "priority": "med"},
        {"content": "x", "status": "finished", "priority": "HIGH"},
        {"content": "", "status": "pending"},
        {"content": "   "},
        {"content": 7},
        {"content": "x", "note": "unknown field"},
        {"content": "x", "status": "sleeping"},
        {"content": "x" * 40},
        {"content": "x", "_meta": {"n": INF}},
        {"content": "x", "_meta": None},
        {"status": "pending"},
        "a step as text",
        None,
        [1, 2],
    ]
)
any_entry = st.one_of(entry(), entry(), entry(), strange_entries)


@st.composite
def call(draw: st.DrawFn) -> tuple[PlanTool, str]:
    """A plan tool and the JSON text of its arguments."""
    name = draw(st.sampled_from(["create_plan", "create_plan", "update_plan", "TodoWrite"]))
    tool = TOOLS[name]
    # Half the calls are all valid entries (the preview's own way), half mixed.
    listed = draw(st.lists(entry() if draw(st.booleans()) else any_entry, max_size=8))
    if name == "TodoWrite":
        todos = [
            {"content": e.get("content", "x"), "status": e.get("status", "pending")}
            if isinstance(e, dict)
            else e
            for e in listed
        ]
        if draw(st.booleans()):
            todos = [{**t, "activeForm": "Doing it"} for t in todos if isinstance(t, dict)]
        args: dict[str, Any] = {"todos": todos}
        return TODO_WRITE, json.dumps(args)
    args = {}
    keys = ["type", "id", "entries", "content", "uri", "note", "changes"]
    for key in draw(st.permutations(keys)):
        if key == "type" and (name == "create_plan" or draw(st.booleans())):
            args["type"] = draw(st.sampled_from(["items"] * 5 + ["item", "markdown", None]))
        elif key == "id" and (name == "update_plan" or draw(st.booleans())):
            args["id"] = draw(
                st.sampled_from(["taken", "taken", "p", "p", "ghost", "", None, "md"])
            )
        elif key == "entries":
            args["entries"] = listed
        elif key in ("content", "uri") and draw(st.integers(0, 3)) == 0:
            args[key] = draw(st.sampled_from([None, "text"]))
        elif key == "note" and draw(st.integers(0, 7)) == 0:
            args["note"] = 1
        elif key == "changes" and name == "update_plan" and draw(st.integers(0, 7)) == 0:
            args["changes"] = [{"step": 1, "status": "completed"}]
    indent = draw(st.sampled_from([None, None, 1]))
    text = json.dumps(args, indent=indent, ensure_ascii=draw(st.booleans()))
    return tool, text.replace(json.dumps(INF), "1e999")


@st.composite
def books(draw: st.DrawFn, rules: Rules) -> Book:
    """A book with some of: an items plan `taken`, a markdown plan `md`, a plan-1."""
    book = Book()
    for plan_id, extra in (
        ("taken", {"type": "items", "entries": [{"content": "old", "status": "completed"}]}),
        ("md", {"type": "markdown", "content": "- a"}),
        (None, {"type": "items", "entries": [{"content": "generated"}]}),
    ):
        if draw(st.booleans()):
            done = apply(book, CREATE_PLAN, {"id": plan_id, **extra}, rules)
            assert isinstance(done, Applied)
            book = done.book
    return book


def assert_same(got: Applied | Rejected | Read, expected: Applied | Rejected | Read) -> None:
    assert type(got) is type(expected)
    if isinstance(expected, Rejected):
        assert isinstance(got, Rejected)
        assert got.text == expected.text
    elif isinstance(expected, Read):
        assert got == expected
    else:
        assert isinstance(got, Applied)
        assert (got.tool, got.plan_id, got.changed) == (
            expected.tool,
            expected.plan_id,
            expected.changed,
        )
        assert (got.plan is None) == (expected.plan is None)
        assert got.plan is None or got.plan.same(expected.plan)
        assert list(got.book.plans) == list(expected.book.plans)
        for plan_id, plan in expected.book.plans.items():
            assert got.book.plans[plan_id].same(plan)
        assert (got.book.next_number, got.book.last_task) == (
            expected.book.next_number,
            expected.book.last_task,
        )
        assert got.text() == expected.text()


@given(
    st.data(),
    call(),
    st.lists(st.integers(1, 12), min_size=1, max_size=5),
    st.lists(st.booleans(), min_size=1, max_size=7),
    st.sampled_from([Limits(), Limits(max_entries=4, max_entry_chars=30, max_plans=3)]),
    st.sampled_from([(), ("plan-1",), ("plan-2", "p")]),
    st.sampled_from([None, "plan-2", "plan-5"]),
)
def test_a_preview_built_from_what_is_new_is_the_cores_answer_for_the_whole_prefix(
    data: st.DataObject,
    tool_and_text: tuple[PlanTool, str],
    sizes: list[int],
    asks: list[bool],
    limits: Limits,
    held: tuple[str, ...],
    own_id: str | None,
) -> None:
    tool, text = tool_and_text
    rules = Rules(limits, list_id="main")
    book = data.draw(books(rules))
    # The scanner as the session's streams make it for this tool.
    scanner = FinalPrefix(list_keys=tool.previews.list_keys, text_keys=tool.previews.text_keys)
    built = Built()
    for _ in fed_in_pieces(scanner, text, sizes, asks):
        lane = grown_lane(scanner, book, tool, rules, built)
        fields = scanner.final()
        if fields is None:
            return  # broken text: no preview, as today
        expected = apply(book, tool, Decoded(fields), rules, reserved_ids=held, own_id=own_id)
        if lane is not None:
            assert_lane_is(lane, expected)
        else:
            got = preview(book, tool, fields, rules, built, reserved_ids=held, own_id=own_id)
            assert_same(got, expected)
        if data.draw(st.integers(0, 4)) == 0 and isinstance(expected, Applied):
            book = expected.book  # another call committed between two previews


def grown_lane(
    scanner: FinalPrefix, book: Book, tool: PlanTool, rules: Rules, built: Built
) -> Stored | None:
    """The usual preview, asked first as the session asks it: the last one with more steps."""
    new = scanner.grown(built.sent) if built.plan is not None else None
    return None if new is None else grown(book, tool, new, rules, built)


def assert_lane_is(lane: Stored, expected: Applied | Rejected | Read) -> None:
    """A preview grown from its new steps is the plan `apply` gives for the whole prefix."""
    assert isinstance(expected, Applied)
    assert expected.plan is not None
    assert lane.same(expected.plan)
    assert lane.statuses == expected.plan.statuses


usual_entry = st.fixed_dictionaries(
    {
        "content": st.text(min_size=1, max_size=10).filter(str.strip),
        "priority": st.sampled_from(PRIORITIES),
        "status": st.sampled_from(STATUSES),
    }
)


@given(
    st.data(),
    st.sampled_from([OUR_TOOLS["create_plan"], OUR_TOOLS["update_plan"]]),
    st.lists(st.one_of(*[usual_entry] * 7, entry()), min_size=2, max_size=9),
    st.lists(st.integers(1, 30), min_size=1, max_size=4),
    st.sampled_from([Limits(), Limits(max_entries=5, max_entry_chars=10, max_plans=3)]),
    st.sampled_from([(), ("plan-1", "plan-2")]),
    st.integers(0, 3).map(lambda k: k == 0),
)
def test_the_usual_preview_grown_from_its_new_steps_is_the_cores_answer(
    data: st.DataObject,
    tool: PlanTool,
    steps: list[dict[str, Any]],
    sizes: list[int],
    limits: Limits,
    held: tuple[str, ...],
    turn_keys: bool,
) -> None:
    # The lane every streamed items plan takes: for any steps, fragmentation, id, limits and
    # commits in between, a preview grown from its new steps is `apply`'s answer.
    rules = Rules(limits)
    book = data.draw(books(rules))
    args: dict[str, Any] = {"type": "items"}
    if tool.name == "update_plan":
        args["id"] = "taken"
        if "taken" not in book.plans:
            done = apply(book, CREATE_PLAN, {"id": "taken", "type": "items", "entries": steps})
            book = done.book if isinstance(done, Applied) else book
    elif data.draw(st.booleans()):
        args["id"] = data.draw(st.sampled_from(["taken", "p", "p", None]))
    args["entries"] = steps
    pairs = list(args.items())  # in the schema's order, as models send them, or any other
    text = json.dumps(dict(data.draw(st.permutations(pairs)) if turn_keys else pairs))
    scanner, built, own_id = FinalPrefix(), Built(), None
    at, turn, grew = 0, 0, 0
    while at < len(text):
        size = sizes[turn % len(sizes)]
        at, turn = at + size, turn + 1
        if not scanner.feed(text[at - size : at]):
            continue
        lane = grown_lane(scanner, book, tool, rules, built)
        fields = scanner.final()
        assert fields is not None
        expected = apply(book, tool, Decoded(fields), rules, reserved_ids=held, own_id=own_id)
        if lane is not None:
            assert_lane_is(lane, expected)
            grew += 1
        else:
            got = preview(book, tool, fields, rules, built, reserved_ids=held, own_id=own_id)
            assert_same(got, expected)
        if isinstance(expected, Applied) and expected.plan and fields.get("id") is None:
            own_id = expected.plan.id  # as the session keeps a generated id
        if data.draw(st.integers(0, 6)) == 0 and isinstance(expected, Applied):
            book = expected.book  # another call committed between two previews
    event(f"grown previews: {min(grew, 3)}")


def test_the_usual_preview_is_the_last_one_grown() -> None:
    # Step by step, a plan's previews after the first are the last one with the new steps,
    # worked out from those alone; a book changed in between, or a step that needs repair,
    # take `preview`'s way, and the next usual step is grown again.
    rules = Rules()
    steps = [{"content": f"Step {k}", "status": "pending", "priority": "low"} for k in range(8)]
    steps[5] = {"content": "Step 5", "status": "done"}  # a synonym: repaired
    text = json.dumps({"type": "items", "id": "p", "entries": steps})
    scanner, built, book = FinalPrefix(), Built(), Book()
    ways = []
    for char in text:
        if not scanner.feed(char):
            continue
        new = scanner.grown(built.sent) if built.plan is not None else None
        lane = None if new is None else grown(book, CREATE_PLAN, new, rules, built)
        fields = scanner.final()
        assert fields is not None
        if "entries" not in fields:
            continue  # no step yet: a plan without steps shows nothing
        expected = apply(book, CREATE_PLAN, Decoded(fields), rules)
        assert isinstance(expected, Applied)
        assert expected.plan is not None
        if lane is not None:
            ways.append("grown")
            assert lane.same(expected.plan)
        else:
            ways.append("preview")
            assert_same(preview(book, CREATE_PLAN, fields, rules, built), expected)
        if len(ways) == 3:
            other = apply(book, CREATE_PLAN, {"type": "items", "entries": [{"content": "x"}]})
            assert isinstance(other, Applied)
            book = other.book  # another call committed: the next preview is worked out anew
    # Steps 0 to 2, the book changes, 3 and 4; step 5 is repaired, and from then on the list
    # is (the repair is the whole list's), as are the closed list and the finished call.
    assert ways == ["preview", "grown", "grown", "preview", "grown"] + ["preview"] * 5


def test_a_usual_step_past_the_limit_is_not_grown_but_refused() -> None:
    rules = Rules(Limits(max_entries=2))
    steps = [{"content": f"Step {k}", "status": "pending", "priority": "low"} for k in range(3)]
    scanner, built, book = FinalPrefix(), Built(), Book()
    plans: list[Stored | Applied | Rejected | Read | None] = []
    for char in json.dumps({"type": "items", "id": "p", "entries": steps})[:-2]:
        if not scanner.feed(char):
            continue
        if (new := scanner.grown(built.sent)) is not None:
            plans.append(grown(book, CREATE_PLAN, new, rules, built))
        elif (fields := scanner.final()) and "entries" in fields:
            plans.append(preview(book, CREATE_PLAN, fields, rules, built))
    assert isinstance(plans[0], Applied)
    assert isinstance(plans[1], Stored)
    assert len(plans[1].entries) == 2  # grown
    assert plans[2] is None  # the third step is past the limit: `preview` decides
    assert isinstance(preview(book, CREATE_PLAN, scanner.final() or {}, rules, built), Rejected)


def test_the_entries_built_before_are_reused_not_rebuilt() -> None:
    rules = Rules()
    scanner = FinalPrefix()
    built = Built()
    text = json.dumps(
        {"type": "items", "id": "p", "entries": [{"content": str(k)} for k in range(9)]}
    )
    shown = []
    for start in range(0, len(text), 7):
        if scanner.feed(text[start : start + 7]):
            fields = scanner.final()
            assert fields is not None
            outcome = preview(Book(), CREATE_PLAN, fields, rules, built)
            if isinstance(outcome, Applied) and outcome.plan is not None:
                shown.append(outcome.plan.entries)
    assert len(shown) > 3
    for before, after in itertools.pairwise(shown):
        # Every entry but the last one shown before is the very object built then.
        assert all(a is b for a, b in zip(before[:-1], after, strict=False))
