"""NDJSON framing: whatever the chunking, every byte comes out once, in order, and each line
short enough to read comes out whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from llm_plans._proxy.lines import Lines, Piece

BYTES = st.binary(max_size=400).map(lambda b: b.replace(b"\r", b"\n"))  # plenty of newlines


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def run(data: bytes, cuts: list[int], max_line: int) -> list[Piece]:
    lines = Lines(max_line)
    out = [piece for chunk in chunked(data, cuts) for piece in lines.feed(chunk)]
    return out + lines.end()


@given(BYTES, st.lists(st.integers(0, 400)), st.integers(1, 64))
def test_every_byte_once_in_order(data: bytes, cuts: list[int], max_line: int) -> None:
    assert b"".join(piece.data for piece in run(data, cuts, max_line)) == data


@given(BYTES, st.lists(st.integers(0, 400)), st.integers(1, 64))
def test_short_lines_come_whole_whatever_the_chunks(
    data: bytes, cuts: list[int], max_line: int
) -> None:
    whole = [piece.data for piece in run(data, cuts, max_line) if piece.whole]
    expected = [line + b"\n" for line in data.split(b"\n")[:-1] if len(line) <= max_line]
    assert whole == expected


def test_a_line_too_long_to_read_passes_in_pieces_and_the_next_one_is_whole() -> None:
    lines = Lines(max_line=8)
    pieces = lines.feed(b"0123456789") + lines.feed(b"abc\n{}\n")
    assert pieces == [Piece(b"0123456789", False), Piece(b"abc\n", False), Piece(b"{}\n", True)]


def test_a_last_line_without_its_newline_passes_as_it_is() -> None:
    lines = Lines()
    assert lines.feed(b'{"a":1}\n{"jsonrpc":"2.0","met') == [Piece(b'{"a":1}\n', True)]
    assert lines.end() == [Piece(b'{"jsonrpc":"2.0","met', False)]
    assert lines.end() == []
