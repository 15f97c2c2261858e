"""Integer arrays: a binary array parameter of int2/int4/int8 without NULLs is read in one step
(a DELETE's 5 000 ids), and array text of plain integers without the element-by-element parser;
both must give exactly what the general paths give, and out-of-range elements still take the
general path, which refuses them in PostgreSQL's words."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings, strategies as st

from dataflow import arrays
from dataflow.errors import SqlError
from dataflow.types import INT2, INT4, INT8, array_of
from server.pgwire import codec

FORMATS = {INT2.oid: ">h", INT4.oid: ">i", INT8.oid: ">q"}
BOUNDS = {INT2.oid: 2 ** 15, INT4.oid: 2 ** 31, INT8.oid: 2 ** 63}


def _binary(element, values) -> bytes:
    fmt = FORMATS[element.oid]
    out = struct.pack(">iii", 1 if values else 0, 0, element.oid)
    if values:
        out += struct.pack(">ii", len(values), 1)
    for v in values:
        out += struct.pack(">i", -1) if v is None else struct.pack(">i", struct.calcsize(fmt)) + struct.pack(fmt, v)
    return out


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([INT2, INT4, INT8]), st.data())
def test_binary_int_arrays_read_as_element_by_element(element, data):
    bound = BOUNDS[element.oid]
    values = data.draw(st.lists(st.one_of(st.integers(-bound, bound - 1), st.none()), max_size=40))
    text = codec._decode_array_binary(_binary(element, values), array_of(element).oid)
    assert text == arrays.write(values, element)
    assert arrays.read(text, element) == values
    # the element-by-element reader agrees on the text
    assert arrays._read_ints(arrays.split(text), element) == values


@pytest.mark.parametrize("text,element", [("{40000}", INT2), ("{-2147483649}", INT4), ("{9223372036854775808}", INT8)])
def test_out_of_range_elements_are_refused(text, element):
    with pytest.raises(SqlError) as e:
        arrays.read(text, element)
    assert "out of range" in str(e.value)


def test_plain_integer_text_reads_as_the_parser_does():
    rng = random.Random(7)
    for _ in range(200):
        values = [rng.randrange(-2 ** 31, 2 ** 31) for _ in range(rng.randrange(0, 12))]
        text = "{" + ",".join(("+" if v >= 0 and rng.random() < 0.2 else "") + str(v) for v in values) + "}"
        assert arrays.read(text, INT4) == values == arrays._read_ints(arrays.split(text), INT4)
