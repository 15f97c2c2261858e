"""FlatMap: a set-returning function evaluated for each input row (stateless, like Map).

Every function is a *kernel* over the whole batch that answers `(counts, columns)`: how many
result rows each input row has, and the result rows' columns, input row 0's first, in order.
The operator then repeats each input row `counts[i]` times (one `take`), appends the columns and,
WITH ORDINALITY, each result row's position among its input row's results (1, 2, ...), all in
NumPy over the batch.

Kernels over documents (arrays, jsonb/json) read each *distinct* document of the batch once
(`_per_document`: the argument is dictionary-encoded, each distinct text is read, and the rows'
results are gathered from the distinct ones by index arithmetic); reading one document's text
is Python (PostgreSQL's array and JSON text forms have no vectorised reader in Arrow), but json's
C scanner does the JSON part. Errors for documents of the wrong kind are raised only for
documents some row of the batch has, as PostgreSQL raises them only for rows it evaluates.
"""

from __future__ import annotations

from itertools import chain
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import DIFF, TIME, make_batch
from dataflow.errors import SqlError, SqlState
from dataflow.expr import ScalarExpr
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.scalar import compile_expr
from dataflow.types import SqlType

Result = tuple[np.ndarray, list[pa.Array]]  # (result rows per input row, result columns)

_JSON_SETS = ("jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys", "jsonb_each",
              "jsonb_each_text", "json_each", "json_each_text")
FUNCTIONS = ("generate_series", "unnest", "generate_subscripts", "regexp_matches") + _JSON_SETS


def _arr_of(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _valid(a: pa.Array) -> np.ndarray:
    return a.is_valid().to_numpy(zero_copy_only=False)


def _within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for each i, concatenated."""
    total = int(counts.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


class FlatMapOp(Operator):
    def __init__(self, input: Operator, func: str, args: tuple[ScalarExpr, ...], types: tuple[SqlType, ...],
                 ordinality: bool, schema: pa.Schema, rt: Runtime):
        if func not in FUNCTIONS:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"table function {func} not yet supported")
        self.input, self.schema, self.rt, self.func = input, schema, rt, func
        self.types, self.ordinality = types, ordinality
        self.fns = [compile_expr(a) for a in args]
        self.arg_types = [a.type for a in args]

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        return self.rt.guarded(self.schema, lambda: self._apply(b))

    def _apply(self, b: pa.Table) -> pa.Table:
        if b.num_rows == 0:
            return self.schema.empty_table()
        counts, cols = self._kernel(b)
        out = b.take(pa.array(np.repeat(np.arange(b.num_rows, dtype=np.int64), counts)))
        if self.ordinality:
            cols = cols + [pa.array(_within(counts) + 1, pa.int64())]
        return make_batch([out.column(i) for i in range(out.num_columns - 2)] + cols, out[TIME], out[DIFF])

    def _kernel(self, b: pa.Table) -> Result:
        args = [_arr_of(f(b)) for f in self.fns]
        if self.func == "generate_series":
            if pa.types.is_timestamp(self.types[0].arrow):
                return _series_timestamps(args, self.types[0])
            return _series(args, self.types[0])
        if self.func == "unnest":
            return _unnest(args, self.types)
        if self.func == "regexp_matches":
            from dataflow.functions.strings import regexp_matches
            regex, groups, glob = (a[0].as_py() for a in args[1:])
            counts, texts = regexp_matches(args[0], regex, groups, glob)
            return counts, [texts]
        if self.func == "generate_subscripts":
            # 1..length in dimension 1, the only one arrays have here; no rows in any other.
            from dataflow import arrays
            texts = pc.if_else(pc.equal(args[1], 1), args[0], pa.nulls(len(args[0]), args[0].type))
            return _per_document(texts, lambda t: (list(range(1, len(arrays.split(t)) + 1)),), self.types)
        return _per_document(args[0], _json_reader(self.func), self.types)


def _series(args: list[pa.Array], type: SqlType) -> Result:
    """generate_series(start, stop[, step]) over integers."""
    args = [a.cast(pa.int64()) for a in args]
    valid = np.ones(len(args[0]), bool)
    for a in args:
        valid &= _valid(a)
    vals = [pc.fill_null(a, 1).to_numpy() for a in args]
    start, stop = vals[0], vals[1]
    step = vals[2] if len(vals) > 2 else np.ones_like(start)
    if ((step == 0) & valid).any():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "step size cannot equal zero")
    step = np.where(step == 0, 1, step)
    counts = np.where(valid, np.maximum((stop - start) // step + 1, 0), 0)
    rep = np.repeat(np.arange(len(start)), counts)
    series = start[rep] + step[rep] * _within(counts)
    return counts, [pa.array(series).cast(type.arrow)]


def _series_timestamps(args: list[pa.Array], type: SqlType) -> Result:
    """generate_series(start, stop, interval): each value is the previous plus the step, as
    PostgreSQL adds it (Jan 31 + 1 mon + 1 mon is Mar 29), until it passes stop. One pass
    over the still-running rows per generated value."""
    from dataflow import interval
    from dataflow.functions.datetime import shift

    start, stop, step = args
    valid = _valid(start) & _valid(stop) & _valid(step)
    us = pc.fill_null(start.cast(pa.timestamp("us", tz=start.type.tz)).view(pa.int64()), 0).to_numpy(zero_copy_only=False)
    end = pc.fill_null(stop.cast(pa.timestamp("us", tz=stop.type.tz)).view(pa.int64()), 0).to_numpy(zero_copy_only=False)
    months, days, micros = interval.split(step)
    span = interval.span_key(step)
    if ((span == 0) & valid).any():
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "step size cannot equal zero")
    rows, values, total = [], [], 0
    active = np.flatnonzero(valid)
    cur = us[active]
    while len(active):
        up = span[active] > 0
        keep = np.where(up, cur <= end[active], cur >= end[active])
        active, cur = active[keep], cur[keep]
        total += len(active)
        if total > 50_000_000:
            raise SqlError("54000", "generate_series would return too many rows")
        rows.append(active)
        values.append(cur)
        cur = shift(cur, months[active], days[active], micros[active], 1)
    rep = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    series = np.concatenate(values) if values else np.zeros(0, np.int64)
    order = np.argsort(rep, kind="stable")  # each input row's values together, in order
    series = series[order]
    counts = np.bincount(rep, minlength=len(start)).astype(np.int64)
    col = pa.array(series, pa.int64()).view(pa.timestamp("us", tz=type.arrow.tz)).cast(type.arrow)
    return counts, [col]


def _unnest(args: list[pa.Array], types: tuple[SqlType, ...]) -> Result:
    """unnest(a1, a2, ...): row k of an input row holds each array's k-th element, NULL where an
    array is shorter than the longest (one array: its elements)."""
    from dataflow import arrays

    parts = [_per_document(a, lambda t, e=t: (arrays.read(t, e),), (t,)) for a, t in zip(args, types)]
    if len(parts) == 1:
        return parts[0]
    counts = np.max(np.stack([c for c, _ in parts]), axis=0)
    offsets = np.cumsum(counts) - counts
    cols = []
    for c, (col,) in parts:
        # Element k of row i goes to output position offsets[i] + k; other positions stay NULL.
        index = np.full(int(counts.sum()), -1, np.int64)
        index[np.repeat(offsets, c) + _within(c)] = np.arange(int(c.sum()))
        cols.append(col.take(pa.array(index, mask=index < 0)))
    return counts, cols


def _per_document(docs: pa.Array, read: Callable[[str], tuple[list, ...]], types: tuple[SqlType, ...]) -> Result:
    """A function of one document argument (NULL: no rows): `read(text)` gives one document's
    result columns as lists; each distinct document of the batch is read once."""
    encoded = pc.dictionary_encode(docs)
    distinct = encoded.dictionary.to_pylist()
    results = [read(d) for d in distinct]
    doc_counts = np.array([len(r[0]) for r in results], np.int64)
    doc_offsets = np.cumsum(doc_counts) - doc_counts
    index = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = index >= 0
    index = np.where(valid, index, 0)
    counts = np.where(valid, doc_counts[index] if len(distinct) else 0, 0).astype(np.int64)
    take = pa.array(np.repeat(doc_offsets[index] if len(distinct) else np.zeros(len(index), np.int64), counts)
                    + _within(counts))
    cols = []
    for k, t in enumerate(types):
        values = pa.array(list(chain.from_iterable(r[k] for r in results)), t.arrow)
        cols.append(values.take(take))
    return counts, cols


def _json_reader(func: str) -> Callable[[str], tuple[list, ...]]:
    """The result columns of a json/jsonb set function for one document, with PostgreSQL's
    errors for a document of the wrong kind."""
    from dataflow import jsonb

    def each(text: str) -> tuple[list, ...]:
        kind = jsonb.top_kind(text)
        if kind != "object":
            if func.startswith("jsonb"):
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot call {func} on a non-object")
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot deconstruct an array as an object"
                           if kind == "array" else "cannot deconstruct a scalar")
        pairs = jsonb.members(text)
        keys = [k for k, _ in pairs]
        if func.endswith("_text"):
            return keys, [jsonb.value_text(v) for _, v in pairs]
        return keys, [v for _, v in pairs]

    def elements(text: str) -> tuple[list, ...]:
        doc = jsonb.parse(text)
        if func == "jsonb_object_keys":
            if not isinstance(doc, dict):
                kind = "a scalar" if not isinstance(doc, list) else "an array"
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot call jsonb_object_keys on {kind}")
            return (sorted(doc, key=lambda k: (len(k.encode()), k.encode())),)
        if not isinstance(doc, list):
            what = "a scalar" if not isinstance(doc, dict) else "a non-array"
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot extract elements from {what}")
        if func == "jsonb_array_elements_text":
            return ([jsonb.as_text(v) for v in doc],)
        return ([jsonb.canonical(v) for v in doc],)

    return each if "_each" in func else elements
