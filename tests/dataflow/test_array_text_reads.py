"""Reading an integer array's text (dataflow/arrays.py): plainly written arrays are parsed
once for all of a statement's readers (`plain_ints`), and each reader still gets values of its
own, equal to the element-by-element reading of PostgreSQL's input rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dataflow import arrays
from dataflow.errors import SqlError
from dataflow.types import INT2, INT4, INT8, TEXT

KINDS = [(INT2, 2 ** 15), (INT4, 2 ** 31), (INT8, 2 ** 63)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(KINDS), st.lists(st.integers(-2 ** 64, 2 ** 64), max_size=12), st.booleans())
def test_plain_integer_arrays_read_as_element_by_element(kind, values, plus):
    element, bound = kind
    text = "{" + ",".join(("+" if plus and v >= 0 else "") + str(v) for v in values) + "}"
    in_range = all(-bound <= v < bound for v in values)
    generic = lambda t, _e: int(t)  # noqa: E731 - the element-by-element path (any cast)
    if in_range:
        assert arrays.read(text, element) == values == arrays.read(text, element, cast=generic)
    else:
        with pytest.raises(SqlError) as info:
            arrays.read(text, element)
        assert info.value.sqlstate == "22003"


def test_each_reader_gets_its_own_list():
    text = "{" + ",".join(map(str, range(5_000))) + "}"
    first = arrays.read(text, INT8)
    first.append(-1)
    first[0] = 99
    assert arrays.read(text, INT8) == list(range(5_000))
    assert arrays.plain_ints(text, INT8.kind) == tuple(range(5_000))


def test_texts_that_are_not_plain_take_the_full_path():
    assert arrays.read("{1, 2,NULL}", INT4) == [1, 2, None]
    assert arrays.read('{"3",4}', INT4) == [3, 4]
    assert arrays.plain_ints("{1, 2}", INT4.kind) is None
    assert arrays.read("{a,b}", TEXT) == ["a", "b"]
