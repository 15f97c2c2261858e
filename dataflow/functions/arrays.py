"""Kernels of the array functions (signatures: `planner.functions.arrays`).

Arrays are their canonical text (`dataflow.arrays`). Each distinct array text is read once per
batch; element-wise work (ANY/ALL comparisons) then runs as Arrow kernels over all elements of
the batch flattened into one array, reduced per row with NumPy. Building and editing arrays
(ARRAY[...], append, cat) writes text per row in Python: no vectorised form of PostgreSQL's
array text exists.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow import arrays
from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call
from dataflow.types import SqlType


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _lists(a: pa.Array, element: SqlType) -> list[list[Any] | None]:
    """Each row's elements (None for a NULL array), reading each distinct text once."""
    cache: dict[str, list[Any]] = {}
    out = []
    for text in _arr(a).to_pylist():
        if text is None:
            out.append(None)
            continue
        v = cache.get(text)
        if v is None:
            v = cache[text] = arrays.read(text, element)
        out.append(v)
    return out


def _element(expr: Call, i: int = 0) -> SqlType:
    return expr.args[i].type.element


def _text_result(rows: list[list[Any] | None], element: SqlType) -> pa.Array:
    return pa.array([None if r is None else arrays.write(r, element) for r in rows], pa.string())


def _python(a: pa.Array) -> list[Any]:
    return _arr(a).to_pylist()


def _plain_text(a: pa.Array, element: SqlType) -> pa.Array | None:
    """Element values as their array text, vectorised, for types whose text never needs quotes
    (integers and floats); None for the others."""
    if not (element.is_integer or element.kind.value in ("float4", "float8")):
        return None
    from dataflow.scalar import cast_array
    from dataflow.types import TEXT
    return pc.fill_null(cast_array(_arr(a), TEXT), "NULL")


def _build(vals: list[pa.Array], expr: Call) -> pa.Array:
    element = expr.type.element
    texts = [_plain_text(v, element) for v in vals]
    if all(t is not None for t in texts):  # numbers: joined by Arrow, no Python per row
        joined = pc.binary_join_element_wise(*texts, ",")
        return pc.binary_join_element_wise("{", joined, "}", "")
    cols = [_python(v) for v in vals]
    return pa.array([arrays.write(list(row), element) for row in zip(*cols)], pa.string())


def _get(vals: list[pa.Array], expr: Call) -> pa.Array:
    lists = _lists(vals[0], _element(expr))
    idx = _python(vals[1])
    out = []
    for l, i in zip(lists, idx):
        out.append(l[i - 1] if l is not None and i is not None and 1 <= i <= len(l) else None)
    return pa.array(out, expr.type.arrow) if out else pa.nulls(0, expr.type.arrow)


def _quantified(any_: bool) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        from dataflow.scalar import _FUNCS  # the comparison kernels
        x, arr = _arr(vals[0]), _arr(vals[1])
        element = _element(expr, 1)
        compare = _FUNCS[expr.args[2].value]
        if len(arr) > 1:
            encoded = pc.dictionary_encode(arr)
            if 8 * len(encoded.dictionary) <= len(arr):
                return _quantified_shared(x, encoded, element, lambda a, b: compare([a, b], expr), any_)
        lists = _lists(arr, element)
        n = len(lists)
        lengths = np.array([0 if l is None else len(l) for l in lists], np.int64)
        flat = [e for l in lists if l is not None for e in l]
        rows = np.repeat(np.arange(n), lengths)
        elems = pa.array(flat, element.arrow) if flat else pa.nulls(0, element.arrow)
        cmp = compare([x.take(pa.array(rows, pa.int64())), elems], expr) if len(rows) else pa.array([], pa.bool_())
        true = pc.fill_null(cmp, False).to_numpy(zero_copy_only=False)
        null = cmp.is_null().to_numpy(zero_copy_only=False)
        hit = true if any_ else ~(true | null)  # ANY looks for a true, ALL for a false
        has_hit = np.zeros(n, bool)
        has_null = np.zeros(n, bool)
        np.logical_or.at(has_hit, rows, hit)
        np.logical_or.at(has_null, rows, null)
        # A hit decides; else a NULL comparison makes NULL; else ANY is false and ALL true (also
        # for an empty array, whatever x is).
        result = np.where(has_hit, any_, not any_)
        valid = np.array([l is not None for l in lists], bool) & ~(has_null & ~has_hit)
        return pa.array(result, pa.bool_(), mask=~valid)
    return run


def _quantified_shared(x: pa.Array, encoded: pa.DictionaryArray, element: SqlType,
                       compare: Callable[[pa.Array, pa.Array], pa.Array], any_: bool) -> pa.Array:
    """x op ANY/ALL (arrays) when many rows hold the same array (a constant, a parameter): per
    distinct array, its rows are compared with one element at a time. Pairing every row with
    every element of its array, as the general path does, would hold rows x elements values
    at once (100k rows against a 5,000-element parameter: 500M, gigabytes)."""
    n = len(x)
    result = np.zeros(n, bool)
    valid = np.zeros(n, bool)  # a NULL array (no code) answers NULL
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    for k, text in enumerate(encoded.dictionary.to_pylist()):
        rows = np.flatnonzero(codes == k)
        if not len(rows):
            continue
        xs = x.take(pa.array(rows))
        has_hit = np.zeros(len(rows), bool)
        has_null = np.zeros(len(rows), bool)
        for value in dict.fromkeys(arrays.read(text, element)):  # (each distinct element once)
            other = pa.nulls(len(rows), element.arrow) if value is None else \
                pa.repeat(pa.scalar(value, element.arrow), len(rows))
            cmp = _arr(compare(xs, other))
            true = pc.fill_null(cmp, False).to_numpy(zero_copy_only=False)
            has_hit |= true if any_ else ~(true | cmp.is_null().to_numpy(zero_copy_only=False))
            has_null |= cmp.is_null().to_numpy(zero_copy_only=False)
        result[rows] = np.where(has_hit, any_, not any_)
        valid[rows] = ~(has_null & ~has_hit)
    return pa.array(result, pa.bool_(), mask=~valid)


def _int_of(lists, vals, fn) -> pa.Array:
    out = []
    for l, d in zip(lists, _python(vals[1]) if len(vals) > 1 else [1] * len(lists)):
        out.append(None if l is None or d is None else fn(l, d))
    return pa.array(out, pa.int32())


def _length(kind: str) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        lists = _lists(vals[0], _element(expr))
        if kind == "cardinality":
            return pa.array([None if l is None else len(l) for l in lists], pa.int32())
        if kind == "ndims":
            return pa.array([None if l is None or not l else 1 for l in lists], pa.int32())
        # array_length / array_upper / array_lower(a, dim): NULL for an empty array or dim <> 1
        value = {"length": len, "upper": len, "lower": lambda l: 1}[kind]
        return _int_of(lists, vals, lambda l, d: value(l) if d == 1 and l else None)
    return run


def _to_string(vals: list[pa.Array], expr: Call) -> pa.Array:
    element = _element(expr)
    lists = _lists(vals[0], element)
    seps = _python(vals[1])
    nulls = _python(vals[2]) if len(vals) > 2 else [None] * len(lists)
    out = []
    for l, sep, null in zip(lists, seps, nulls):
        if l is None or sep is None:
            out.append(None)
            continue
        parts = [arrays.element_text(v, element) if v is not None else null for v in l]
        out.append(sep.join(p for p in parts if p is not None))
    return pa.array(out, pa.string())


def _edit_fast(kind: str, vals: list[pa.Array], element: SqlType) -> pa.Array | None:
    """array || number and number || array as string edits, vectorised: '{1,2}' -> '{1,2,3}'
    ('{}' and NULL arrays start empty)."""
    if kind not in ("append", "prepend"):
        return None
    arr, elem = (vals[0], vals[1]) if kind == "append" else (vals[1], vals[0])
    text = _plain_text(elem, element)
    if text is None:
        return None
    inner = pc.utf8_slice_codeunits(pc.fill_null(_arr(arr), "{}"), 1, -1)  # between the braces
    empty = pc.equal(pc.utf8_length(inner), 0)
    sep = pc.if_else(empty, "", ",")
    body = (pc.binary_join_element_wise(inner, sep, text, "") if kind == "append"
            else pc.binary_join_element_wise(text, sep, inner, ""))
    return pc.binary_join_element_wise("{", body, "}", "")


def _edit(kind: str) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        element = expr.type.element
        fast = _edit_fast(kind, vals, element)
        if fast is not None:
            return fast
        if kind == "prepend":
            elems, lists = _python(vals[0]), _lists(vals[1], element)
        else:
            lists = _lists(vals[0], element)
        out: list[list[Any] | None] = []
        if kind in ("append", "remove", "position"):
            elems = _python(vals[1])
        if kind == "cat":
            others = _lists(vals[1], element)
            for a, b in zip(lists, others):
                out.append(b if a is None else a if b is None else a + b)
            return _text_result(out, element)
        for l, e in zip(lists, elems):
            if kind == "append":  # a NULL array is an empty one here, as in PostgreSQL
                out.append((l or []) + [e])
            elif kind == "prepend":
                out.append([e] + (l or []))
            else:  # remove: every element equal to e (NULLs removed by a NULL e)
                out.append(None if l is None else [x for x in l if not (x == e if e is not None else x is None)])
        return _text_result(out, element)
    return run


def _position(vals: list[pa.Array], expr: Call) -> pa.Array:
    lists = _lists(vals[0], _element(expr))
    elems = _python(vals[1])
    out = []
    for l, e in zip(lists, elems):
        if l is None:
            out.append(None)
            continue
        found = next((i + 1 for i, x in enumerate(l) if (x is None and e is None) or (x is not None and x == e)), None)
        out.append(found)
    return pa.array(out, pa.int32())


def _set_op(kind: str) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        element = _element(expr)
        a, b = _lists(vals[0], element), _lists(vals[1], element)
        out = []
        for x, y in zip(a, b):
            if x is None or y is None:
                out.append(None)
                continue
            xs = {v for v in x if v is not None}
            ys = {v for v in y if v is not None}
            if kind == "contains":  # NULL elements never match, as in PostgreSQL
                out.append(all(v is not None and v in xs for v in y))
            elif kind == "contained":
                out.append(all(v is not None and v in ys for v in x))
            else:
                out.append(bool(xs & ys))
        return pa.array(out, pa.bool_())
    return run


def _string_to_array(vals: list[pa.Array], expr: Call) -> pa.Array:
    texts, seps = _python(vals[0]), _python(vals[1])
    nulls = _python(vals[2]) if len(vals) > 2 else [None] * len(texts)
    out = []
    for t, sep, null in zip(texts, seps, nulls):
        if t is None:
            out.append(None)
            continue
        if t == "":
            parts = []
        elif sep is None:
            parts = list(t)
        elif sep == "":
            parts = [t]
        else:
            parts = t.split(sep)
        out.append([None if null is not None and p == null else p for p in parts])
    from dataflow.types import TEXT
    return _text_result(out, TEXT)


def _element_text(vals: list[pa.Array], expr: Call) -> pa.Array:
    """Each value as it appears inside an array's text (quoted where needed, NULL as NULL):
    the pieces array_agg joins."""
    element = expr.args[0].type
    fast = _plain_text(vals[0], element)
    if fast is not None:
        return fast
    return pa.array([arrays.write([v], element)[1:-1] for v in _python(vals[0])], pa.string())


def _collect_wrap(vals: list[pa.Array], expr: Call) -> pa.Array:
    """'{' + joined pieces + '}' (or '[' ... ']'); NULL (no rows) stays NULL."""
    brackets = expr.args[1].value
    joined = _arr(vals[0])
    return pc.binary_join_element_wise(brackets[0], joined, brackets[1], "")


_MAX_ARRAY_SIZE = 134217727  # PostgreSQL's MaxArraySize


def _fill_length(dims: str | None, lbounds: str | None, with_lbounds: bool) -> int:
    """array_fill's element count from its dimensions and lower bounds (texts of int[]), with
    PostgreSQL's errors; more than one dimension or a lower bound other than 1 is refused."""
    from dataflow.errors import unsupported
    if dims is None or (with_lbounds and lbounds is None):
        raise SqlError("22004", "dimension array or low bound array cannot be null")
    d = arrays.split(dims)
    if any(x is None for x in d):
        raise SqlError("22004", "dimension values cannot be null")
    if len(d) > 6:
        raise SqlError("54000", f"number of array dimensions ({len(d)}) exceeds the maximum allowed (6)")
    lb = [1] * len(d)
    if with_lbounds:
        lbs = arrays.split(lbounds)
        if any(x is None for x in lbs):
            raise SqlError("22004", "dimension values cannot be null")
        if len(lbs) != len(d):
            raise SqlError("2202E", "wrong number of array subscripts",
                           detail="Low bound array has different size than dimensions array.")
        lb = [int(x) for x in lbs]
    sizes = [int(x) for x in d]
    total = 1
    for n in sizes:
        if n < 0 or total * n > _MAX_ARRAY_SIZE:
            raise SqlError("54000", f"array size exceeds the maximum allowed ({_MAX_ARRAY_SIZE})")
        total *= n
    if not sizes or total == 0:
        return 0
    if len(sizes) > 1:
        raise unsupported("array_fill() of more than one dimension")
    if lb[0] != 1:
        raise unsupported("arrays with a lower bound other than 1")
    return total


def _fill(vals: list[pa.Array], expr: Call) -> pa.Array:
    """array_fill(value, dims [, lower_bounds]): the value's array text repeated, once per
    distinct (value, dims, bounds) in Python (building array text has no vectorised form)."""
    element = expr.type.element
    cols = [_python(v) for v in vals]
    with_lbounds = len(vals) > 2
    cache: dict[tuple, str] = {}
    out = []
    for row in zip(*cols):
        r = cache.get(row)
        if r is None:
            n = _fill_length(row[1], row[2] if with_lbounds else None, with_lbounds)
            piece = arrays.write([row[0]], element)[1:-1]
            r = cache[row] = "{" + ",".join([piece] * n) + "}"
        out.append(r)
    return pa.array(out, pa.string())


def _same_element(x: Any, e: Any) -> bool:
    """Element equality as PostgreSQL's `=` (NaN equals NaN; NULL matches a NULL `from`)."""
    if x is None or e is None:
        return x is None and e is None
    return x == e or (x != x and e != e)


def _replace(vals: list[pa.Array], expr: Call) -> pa.Array:
    """array_replace(array, from, to): each distinct array read once, the edit per row in
    Python (array text has no vectorised form)."""
    element = expr.type.element
    lists = _lists(vals[0], element)
    olds, news = _python(vals[1]), _python(vals[2])
    out: list[list[Any] | None] = []
    for l, old, new in zip(lists, olds, news):
        out.append(None if l is None else [new if _same_element(x, old) else x for x in l])
    return _text_result(out, element)


KERNELS = {
    "array_element_text": _element_text, "collect_wrap": _collect_wrap,
    "array_build": _build, "array_get": _get, "array_any": _quantified(True), "array_all": _quantified(False),
    "array_length": _length("length"), "array_upper": _length("upper"), "array_lower": _length("lower"),
    "array_ndims": _length("ndims"), "cardinality": _length("cardinality"), "array_to_string": _to_string,
    "array_append": _edit("append"), "array_prepend": _edit("prepend"), "array_remove": _edit("remove"),
    "array_cat": _edit("cat"), "array_position": _position, "array_contains": _set_op("contains"),
    "array_contained": _set_op("contained"), "array_overlap": _set_op("overlap"),
    "string_to_array": _string_to_array, "array_fill": _fill, "array_replace": _replace,
}
