"""The argument scanner: what of a streamed call is final, for any fragmentation, in linear work."""

from __future__ import annotations

import doctest
import itertools
import json
import math
import time
from collections.abc import Iterator
from typing import Any

import jiter
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import llm_plans._streaming.partial_json
from llm_plans._streaming.partial_json import FinalPrefix

LIST_KEYS = ("entries", "changes")
TEXT_KEYS = ("content",)

# Any character a str can hold in UTF-8: control characters, quotes, backslashes, astral ones.
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=8,
)
entries = st.lists(
    st.dictionaries(st.sampled_from(["content", "status", "step"]) | texts, json_values, max_size=3)
    | texts,
    max_size=5,
)
markdown = st.lists(texts, max_size=6).map("\n".join)


@st.composite
def arguments(draw: st.DrawFn) -> dict[str, Any]:
    """Plausible plan arguments, with now and then a value of another type or an unknown key."""
    keys = st.sampled_from(["type", "id", "uri", *LIST_KEYS, *TEXT_KEYS]) | texts
    out: dict[str, Any] = {}
    for key in draw(st.lists(keys, unique=True, max_size=7)):
        if key in LIST_KEYS:
            out[key] = draw(entries | json_values)
        elif key in TEXT_KEYS:
            out[key] = draw(markdown | json_values)
        else:
            out[key] = draw(texts | st.none() | json_values)
    return out


@st.composite
def serialised(draw: st.DrawFn) -> str:
    value = draw(arguments())
    ensure_ascii = draw(st.booleans())
    layout = draw(st.sampled_from(["compact", "spaced", "indented"]))
    if layout == "compact":
        return json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":"))
    indent = draw(st.integers(0, 4)) if layout == "indented" else None
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)


@st.composite
def fragmented(draw: st.DrawFn) -> list[str]:
    """Serialised arguments cut anywhere: in strings, escapes, numbers, between surrogates."""
    text = draw(serialised())
    if draw(st.booleans()):
        return list(text)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=40))))
    bounds = [0, *cuts, len(text)]
    return [text[start:stop] for start, stop in itertools.pairwise(bounds) if start < stop]


def scan(fragments: list[str], **keys: Any) -> FinalPrefix:
    scanner = FinalPrefix(**keys)
    for fragment in fragments:
        scanner.feed(fragment)
    return scanner


def fed_in_pieces(
    scanner: FinalPrefix, text: str, sizes: list[int], asks: list[bool]
) -> Iterator[FinalPrefix]:
    """Feeds `text` to `scanner` in pieces of `sizes` (taken in turn), yielding the scanner
    after each piece `asks` (taken in turn) says to look at, and after the last."""
    at, turn = 0, 0
    while at < len(text):
        size = sizes[turn % len(sizes)]
        scanner.feed(text[at : at + size])
        at, turn = at + size, turn + 1
        if asks[turn % len(asks)] or at >= len(text):
            yield scanner


def assert_consistent(partial: dict[str, Any], full: dict[str, Any]) -> None:
    """What `partial` shows of `full`: complete keys in full, a list or text in progress last."""
    assert list(partial) == list(full)[: len(partial)]
    for position, (key, value) in enumerate(partial.items()):
        if value == full[key] or position < len(partial) - 1:
            assert value == full[key]
        elif key in LIST_KEYS and isinstance(value, list):
            assert value
            assert value == full[key][: len(value)]
        else:
            assert key in TEXT_KEYS
            assert isinstance(value, str)
            assert full[key].startswith(value + "\n")


@given(fragmented())
def test_final_is_consistent_after_every_fragment_and_whole_at_the_end(
    fragments: list[str],
) -> None:
    full = json.loads("".join(fragments))
    scanner = FinalPrefix()
    before = scanner.final()
    assert before == {}
    for fragment in fragments:
        new = scanner.feed(fragment)
        after = scanner.final()
        assert after is not None
        assert not scanner.broken
        assert_consistent(after, full)
        if after != before:
            assert new, "feed says when final() changed"
        before = after
    assert scanner.final() == full
    assert scanner.complete


@given(fragmented(), st.integers(0, 10))
def test_seldom_calling_final_sees_the_same(fragments: list[str], every: int) -> None:
    # The text in progress is decoded line by line when final() is called: any rhythm of calls
    # gives the same result.
    scanner = FinalPrefix()
    for count, fragment in enumerate(fragments):
        scanner.feed(fragment)
        if every and count % every == 0:
            scanner.final()
    assert scanner.final() == json.loads("".join(fragments))


def test_the_example_runs() -> None:
    result = doctest.testmod(llm_plans._streaming.partial_json)
    assert result.attempted == 3
    assert result.failed == 0


def test_escapes_and_surrogate_pairs_split_across_fragments() -> None:
    text = json.dumps({"content": 'é\n"😀"\\n\n\t\n', "entries": ["😀", "\\"]}, ensure_ascii=True)
    assert "\\ud83d\\ude00" in text
    for size in range(1, 14):
        scanner = scan([text[at : at + size] for at in range(0, len(text), size)])
        assert scanner.final() == json.loads(text)


def test_lines_of_text_in_progress() -> None:
    scanner = FinalPrefix()
    assert not scanner.feed('{"content": "# T')
    assert scanner.final() == {}
    assert not scanner.feed("itle\\")  # `\n` split after its backslash
    assert scanner.feed("n- one\\")
    assert scanner.final() == {"content": "# Title"}
    assert not scanner.feed('"\\\\n')  # an escaped quote; an escaped backslash before `n`
    assert scanner.final() == {"content": "# Title"}
    assert scanner.feed("\\n")
    assert scanner.final() == {"content": '# Title\n- one"\\n'}
    assert scanner.feed('"')
    assert scanner.final() == {"content": '# Title\n- one"\\n\n'}


def test_an_element_is_final_at_its_closing_brace() -> None:
    text = '{"entries"  :\n [ {"content": "a"} ,\n\t{"content": "b", "x": {"y": 1}}\n, "c" ,4 ]  }'
    ends = {text.index('"a"}') + 3: 1, text.index("1}}") + 2: 2, text.index('"c"') + 2: 3}
    ends[text.index("4 ]") + 2] = 4  # a number is final at the bracket after it
    scanner = FinalPrefix()
    for at, char in enumerate(text):
        new = scanner.feed(char)
        final = scanner.final()
        assert final is not None
        shown = len(final.get("entries", []))
        assert shown == max([count for end, count in ends.items() if end <= at], default=0)
        if at in ends:
            assert new
    assert scanner.complete


@given(
    # Objects and strings: a number or literal element is final only at the `,` or `]` after it.
    st.lists(st.dictionaries(texts, json_values, max_size=3) | texts, min_size=1, max_size=5),
    st.data(),
)
def test_any_element_is_final_at_its_last_character(
    elements: list[Any], data: st.DataObject
) -> None:
    def space() -> str:
        return data.draw(st.text(" \t\r\n", max_size=3))

    ensure_ascii = data.draw(st.booleans())
    text = "{" + space() + '"entries"' + space() + ":" + space() + "[" + space()
    ends = []
    for position, element in enumerate(elements):
        if position:
            text += "," + space()
        indent = data.draw(st.none() | st.integers(0, 2))
        text += json.dumps(element, ensure_ascii=ensure_ascii, indent=indent)
        ends.append(len(text) - 1)  # the closing brace or quote
        text += space()
    text += "]" + space() + "}"
    scanner = FinalPrefix()
    for at, char in enumerate(text):
        new = scanner.feed(char)
        final = scanner.final()
        assert final is not None
        shown = sum(end <= at for end in ends)
        assert final.get("entries", []) == elements[:shown]
        if at in ends:
            assert new
    assert scanner.final() == {"entries": elements}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "p", "type": nu', {"id": "p"}),
        ('{"id": "p", "type": null', {"id": "p"}),
        ('{"id": "p", "type": null ', {"id": "p"}),
        ('{"id": "p", "type": null ,', {"id": "p", "type": None}),
        ('{"id": "p", "entries": [', {"id": "p"}),
        ('{"id": "p", "entries": []', {"id": "p", "entries": []}),
        ('{"id": "p", "entries": [1, 2', {"id": "p", "entries": [1]}),
        ('{"id": "p", "entries": [{"a": [', {"id": "p"}),
        ('{"id": "p", "entries": {"a": 1', {"id": "p"}),
        ('{"id": "p", "content": "no line yet', {"id": "p"}),
        ('{"id": "p", "content": "\\nx', {"id": "p", "content": ""}),
        ('{"content": ["not", "text"', {}),
        ('{"uri": "/tmp/pl', {}),
        ("", {}),
        ("  {  ", {}),
    ],
)
def test_what_is_final_in_unfinished_arguments(text: str, expected: dict[str, Any]) -> None:
    for fragments in ([text], list(text)):
        scanner = scan(fragments)
        assert scanner.final() == expected
        assert not scanner.broken
        assert not scanner.complete


def test_keys_to_follow_are_configurable() -> None:
    text = '{"steps": ["a", "b", "c"], "body": "x\\ny\\nz'
    scanner = scan([text], list_keys=["steps"], text_keys={"body"})
    assert scanner.final() == {"steps": ["a", "b", "c"], "body": "x\ny"}
    assert scan(['{"steps": ["a", "b"'], list_keys=(), text_keys=()).final() == {}


DEEP = 100_000


@pytest.mark.parametrize(
    "text",
    [
        "[" * DEEP,
        '{"entries": ' + "[" * DEEP,
        '{"a": ' + '{"a": ' * DEEP,
        '{"a": NaN}',
        '{"a": [Infinity]}',
        '{"a": -Infinity}',
        '{"a": "\\udfff"}',
        '{"content": "\\udfff\\nmore\\nlines',
        '{"content": "\\ud83d\\ndone"}',
        '{"a": "\udfff"}',
        '{"content": "a\udfff',
        '{"a": "\ud83d\ude00"}',
        '{"a": 1, "a": 2}',
        '{"a": 1, "\\u0061": 2}',
        '{"entries": [{"a": 1, "a": 2}]}',
        "[1, 2]",
        '"text"',
        "42",
        "{} x",
        "{}}",
        '{"a": 1}{',
        '{"a" 1}',
        '{"a": 1,}',
        '{"entries": [1,]}',
        '{"entries": [1 2]}',
        '{"entries": [,]}',
        '{"a": tru}',
        '{"a": 01}',
        '{"a": "\\x"}',
        '{"a": "raw\ncontrol"}',
        '{"content": "bad \\q escape\\nnext\\n',
        '{"a": [1}]}',
        "{1: 2}",
        "{,}",
        "\ufeff{}",
    ],
)
def test_hostile_input_breaks_the_scanner_without_raising(text: str) -> None:
    for fragments in ([text], list(text)):
        scanner = scan(fragments)
        assert scanner.final() is None
        assert scanner.broken
        assert not scanner.complete
        assert not scanner.feed('"}')  # a broken scanner only counts
        assert scanner.final() is None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' + "[" * 60 + "]" * 60 + "}",
        '{"entries": [' + "[" * 60 + "]" * 60 + "]}",
        '{"a": "\\ud83d\\ude00", "b": 1e308, "c": -0.0, "d": 1E-400}',
        ' \t\r\n{ \t\r\n"a"\n:\n1\n}\n ',
    ],
)
def test_unusual_but_valid_arguments(text: str) -> None:
    for fragments in ([text], list(text)):
        scanner = scan(fragments)
        assert scanner.final() == json.loads(text)
        assert scanner.complete


def jiter_oracle(text: str) -> Any:
    """The arguments as a whole-document decode reads them, or None if they are not valid.

    A number too large for a float (1e309) is valid JSON that jiter reads as an infinity; the
    scanner, which judges structure only, must agree. The core refuses infinities where they
    can reach a plan (`_core.repair.finite`), on every path alike.
    """
    try:
        value = jiter.from_json(text.encode(), allow_inf_nan=False, catch_duplicate_keys=True)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@given(
    serialised(),
    st.integers(0, 10**6),
    st.sampled_from(["delete", "insert", "replace"]),
    st.sampled_from(list('{}[]",:\\ n0e.-utfx\udfff')),
    st.integers(1, 9),
)
def test_damaged_arguments_agree_with_a_whole_document_decode(
    text: str, position: int, edit: str, char: str, size: int
) -> None:
    at = position % (len(text) + 1)
    if edit == "delete":
        text = text[:at] + text[at + 1 :]
    else:
        text = text[:at] + char + text[at + (edit == "replace") :]
    scanner = scan([text[start : start + size] for start in range(0, len(text), size)])
    expected = jiter_oracle(text)
    if expected is None:
        assert scanner.broken or not scanner.complete
    else:
        assert scanner.complete
        assert scanner.final() == expected


@given(st.text(max_size=60), st.integers(1, 5))
def test_any_text_never_raises(text: str, size: int) -> None:
    scanner = scan([text[start : start + size] for start in range(0, len(text), size)])
    assert scanner.broken or scanner.final() is not None


def markdown_arguments(lines: int) -> str:
    body = "\n".join(
        f'{n}. A "step" with C:\\path\\to\\file, é and 😀\tdone {"x" * (n % 50)}'
        for n in range(lines)
    )
    return json.dumps({"type": "markdown", "id": "plan", "content": body})


def work(text: str, size: int) -> int:
    """Turns of the scanning loop to scan `text` in fragments of `size`."""
    scanner = FinalPrefix()
    for start in range(0, len(text), size):
        scanner.feed(text[start : start + size])
    assert scanner.complete
    return scanner.steps


@pytest.mark.parametrize(
    "build",
    [
        markdown_arguments,
        lambda count: json.dumps(
            {"entries": [{"content": f'entry "{n}"\n', "status": "pending"} for n in range(count)]},
            indent=2,
        ),
        lambda count: json.dumps({"content": "\n" * count * 20}),
        lambda count: json.dumps({"content": "\\n" * count * 20}),
        lambda count: json.dumps({"entries": [[[n]] for n in range(count * 10)]}),
    ],
    ids=["markdown", "entries", "newlines", "escaped-backslashes", "nested"],
)
@pytest.mark.parametrize("size", [1, 8, 1000])
def test_work_grows_linearly(build: Any, size: int) -> None:
    short, long = build(500), build(2_000)
    assert len(long) <= 4.5 * len(short)
    short_steps, long_steps = work(short, size), work(long, size)
    assert long_steps <= 4.5 * short_steps


def test_throughput_of_500_kb_of_markdown_in_8_byte_fragments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = markdown_arguments(6_000)
    assert len(text) > 500_000
    fragments = [text[start : start + 8] for start in range(0, len(text), 8)]
    started, cpu = time.perf_counter(), time.process_time()
    scanner = FinalPrefix()
    for fragment in fragments:
        scanner.feed(fragment)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert scanner.final() == json.loads(text)
    with capsys.disabled():  # reported, not asserted: no timing in CI assertions
        rate = len(text) / cpu / 1e6 if cpu else math.inf
        print(
            f"\n{len(text):,} chars in {len(fragments):,} fragments: {elapsed * 1000:.0f} ms,"
            f" {cpu * 1000:.0f} ms of CPU ({rate:.1f} M chars/s)"
        )


def one_parse(scanner: FinalPrefix) -> Any:
    """What the final prefix decodes to in one parse of the whole closed prefix (the scanner
    decodes its list's elements piece by piece): the reference the pieces must match."""
    if scanner._final_at == 0:
        return {}
    text = "".join(scanner._parts)[: scanner._final_at] + scanner._closers
    return jiter_oracle(text)


@st.composite
def damaged(draw: st.DrawFn) -> str:
    """Serialised arguments, now and then with one character deleted, inserted or replaced."""
    text = draw(serialised())
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(list('{}[]",:\\ n0e.-utfx')))
        text = text[:at] + char + text[at + draw(st.integers(0, 1)) :]
    return text


@given(damaged(), st.lists(st.integers(1, 9), min_size=1), st.lists(st.booleans(), min_size=1))
@example('{"changes": [ , "type": ""}', [1], [True])  # a comma the first decode finds broken
def test_decoding_the_list_piece_by_piece_equals_one_parse_of_the_prefix(
    text: str, sizes: list[int], asks: list[bool]
) -> None:
    # Whatever the fragmentation and whenever final() is asked, the list's elements decoded
    # in pieces give exactly what one parse of the closed prefix gives, broken or not; and
    # the elements decoded before are the same objects (a preview reuses what it built).
    before = None
    for scanner in fed_in_pieces(FinalPrefix(), text, sizes, asks):
        got = scanner.final()  # first: decoding the pieces may find the text broken (`[ ,`)
        expected = None if scanner.broken else one_parse(scanner)
        assert got == expected
        assert (got is None) == scanner.broken
        if got is not None and before is not None and scanner._list_open >= 0:
            # The first list value is the one decoded in pieces (a plan has one).
            old, new = before.get(scanner._list_key), got.get(scanner._list_key)
            if isinstance(old, list) and isinstance(new, list) and old and new:
                assert all(a is b for a, b in zip(old, new, strict=False))
        before = got


@given(damaged(), st.lists(st.integers(1, 9), min_size=1), st.lists(st.booleans(), min_size=1))
def test_what_grew_is_the_lists_new_elements_and_all_that_is_new(
    text: str, sizes: list[int], asks: list[bool]
) -> None:
    # Whenever `grown(had)` answers, the final part is the one the caller had (`had` its
    # list's elements) with the new elements after them, the very objects `final()` gives,
    # and nothing else new; it does not answer a caller whose elements are not the scanner's.
    before: dict[str, Any] | None = None
    for scanner in fed_in_pieces(FinalPrefix(), text, sizes, asks):
        listed = None if before is None else before.get(scanner._list_key)
        had = listed if isinstance(listed, list) else []
        new = scanner.grown(had)
        assert scanner.grown([*had[:-1], object()] if had else []) is None
        got = scanner.final()
        count = len(had)
        if new is not None:
            assert new
            assert before is not None
            assert got is not None
            assert isinstance(listed, list)
            assert got == {**before, scanner._list_key: [*listed, *new]}
            assert list(got) == list(before)
            assert all(a is b for a, b in zip(got[scanner._list_key][count:], new, strict=True))
        before = got


def test_a_plan_streamed_step_by_step_grows_by_its_steps() -> None:
    steps = [{"content": f"Step {k}, with a }} and a ]", "status": "pending"} for k in range(6)]
    text = json.dumps({"type": "items", "id": "p", "entries": steps, "uri": None})
    scanner = FinalPrefix()
    grew: list[list[Any]] = []
    for char in text:
        if scanner.feed(char):
            fields = scanner.final()
            assert fields is not None
            if grew and (new := scanner.grown([e for step in grew for e in step])) is not None:
                grew.append(new)
            elif fields.get("entries") and not grew:
                grew.append(fields["entries"])
    assert grew == [[step] for step in steps]  # each at its closing brace, none after `]`


@pytest.mark.parametrize("size", [1, 2, 3, 100])
def test_a_comma_before_the_first_element_breaks_the_scanner(size: int) -> None:
    # `[,` is not JSON, whatever follows; asked when the comma has come (a preview would be),
    # the scanner must not take it for the end of an element.
    text = '{"type": "items", "entries": [, {"content": "a"}, {"content": "b"}'
    scanner = FinalPrefix()
    for start in range(0, len(text), size):
        scanner.feed(text[start : start + size])
        scanner.final()
    assert scanner.final() is None
    assert scanner.broken


@pytest.mark.parametrize(
    ("text", "ended", "commas"),
    [
        ('{"entries": ["Write the tests, then', 0, True),  # a comma inside a step
        ('{"entries": ["Write the tests", "Ship', 1, True),
        ('{"entries": ["a", "b"], "id": "p",', 2, False),  # the list has closed
        ('{"entries": [{"content": "a"},', 0, False),  # steps are objects
        ('{"entries": [{"content": "a, b", "status":', 0, False),  # inside the first one
        ('{"type": "items", "id": "p",', 0, True),  # the list may still come
        ('{"type": "markdown", "content": "- one, two', 0, False),  # a text streams
    ],
)
def test_the_scanner_says_whether_a_comma_may_still_end_a_step_sent_as_text(
    text: str, ended: int, commas: bool
) -> None:
    """Steps sent as text end at a comma, not a brace: the scanner counts those that ended,
    and says when commas can end no more (so a stream stops looking at them)."""
    scanner = FinalPrefix()
    scanner.feed(text)
    assert scanner.text_elements == ended
    assert scanner.commas_may_end_steps is commas
