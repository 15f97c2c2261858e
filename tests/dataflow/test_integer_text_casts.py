"""Integer columns read from text (COPY, casts): the vectorised path (`_cast_from_text`, with its
byte-level shortcut for digits and '-') gives PostgreSQL's value or error for every value, the
same as the per-value rule `int_of_text` and the type's bounds."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings, strategies as st

from dataflow.errors import SqlError
from dataflow.scalar import _cast_from_text, int_of_text
from dataflow.types import INT2, INT4, INT8

BOUNDS = {INT2: 2 ** 15, INT4: 2 ** 31, INT8: 2 ** 63}
TEXTS = st.one_of(
    st.integers(-2 ** 64, 2 ** 64).map(str),
    st.text(alphabet="0123456789-", max_size=6),  # (the shortcut's alphabet: '1-2', '-', '')
    st.text(alphabet="0123456789-+ x\t", max_size=6),
    st.none(),
)
# Every value in one small alphabet, so that the byte-level shortcut is taken (or just missed:
# an 'x' makes 0x hex, which Arrow reads and PostgreSQL 15 does not).
NEAR_DIGITS = st.one_of(st.integers(-10 ** 6, 10 ** 6).map(str), st.none())
COLUMNS = st.one_of(st.lists(TEXTS, min_size=17, max_size=40), st.lists(NEAR_DIGITS, min_size=17, max_size=40),
                    st.lists(st.integers(-2 ** 64, 2 ** 64).map(str), min_size=17, max_size=40))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(BOUNDS)), COLUMNS)  # (17 or more values: past the few-values path)
def test_vectorised_integer_input_matches_the_rule(t, texts):
    # A malformed value is reported before an out-of-range one, wherever they stand.
    values = [None if text is None else int_of_text(text) for text in texts]
    if any(text is not None and v is None for text, v in zip(texts, values)):
        expected = "22P02"
    elif any(v is not None and not -BOUNDS[t] <= v < BOUNDS[t] for v in values):
        expected = "22003"
    else:
        expected = values
    try:
        got = _cast_from_text(pa.array(texts, pa.string()), t).to_pylist()
    except SqlError as e:
        got = e.sqlstate
    assert got == expected, (texts, got)


def test_one_odd_value_among_plain_ones():
    plain = [str(i) for i in range(-10, 10)]
    for odd, code in [("0x10", "22P02"), ("0x1f", "22P02"), ("0X1F", "22P02"), ("-", "22P02"), ("1-2", "22P02"), ("", "22P02"),
                      ("--1", "22P02"), ("9223372036854775808", "22003"), (" 7", None), ("+7", None)]:
        try:
            got = _cast_from_text(pa.array(plain + [odd], pa.string()), INT8).to_pylist()[-1]
        except SqlError as e:
            got = e.sqlstate
        assert got == (code or int(odd)), (odd, got)
