"""Stateless operators: they transform each update independently, so they never shuffle and are
correct at every time for free. Get, Constant, Map, Filter, Project, FlatMap, Union, Negate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dataflow.batch import (DIFF, TIME, advance_times, batch_from_rows, concat, consolidate, make_batch,
                           negate)
from dataflow.errors import SqlError, SqlState
from dataflow.expr import ScalarExpr
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.operators.temporal import TemporalFilter, split_temporal
from dataflow.scalar import compile_expr, compile_predicate, conform
from dataflow.types import SqlType


def _row_cols(batch: pa.Table) -> list:
    return [batch.column(i) for i in range(batch.num_columns - 2)]


@dataclass
class GetOp(Operator):
    id: str
    schema: pa.Schema
    rt: Runtime

    def step(self, ctx: StepContext) -> pa.Table:
        b = ctx.inputs.get(self.id)
        if b is None or b.num_rows == 0:
            return self.schema.empty_table()
        b = advance_times(b, self.rt.as_of)
        if b.schema != self.schema:
            if b.schema.types == self.schema.types:  # only names or nullability flags differ
                return pa.Table.from_arrays(b.columns, schema=self.schema)
            b = b.rename_columns(self.schema.names).cast(self.schema)
        return b


@dataclass
class ConstantOp(Operator):
    rows: tuple
    types: tuple[SqlType, ...]
    schema: pa.Schema
    rt: Runtime

    def step(self, ctx: StepContext) -> pa.Table:
        # Only worker 0 emits the constant, so N workers don't produce it N times.
        if not ctx.first or self.rt.exchange.worker_index != 0:
            return self.schema.empty_table()
        return self.rt.guarded(self.schema, lambda: batch_from_rows(list(self.rows), self.types,
                                                                     self.rt.as_of).cast(self.schema))


class MapOp(Operator):
    def __init__(self, input: Operator, exprs: tuple[ScalarExpr, ...], schema: pa.Schema, rt: Runtime):
        self.input, self.schema, self.rt = input, schema, rt
        self.exprs = exprs
        self.fns = [compile_expr(e) for e in exprs]

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        return self.rt.guarded(self.schema, lambda: self._apply(b))

    def _apply(self, b: pa.Table) -> pa.Table:
        if b.num_rows == 0:
            return self.schema.empty_table()
        cols = _row_cols(b)
        for e, f in zip(self.exprs, self.fns):
            # Later expressions may refer to earlier outputs (positions past the input arity).
            cur = make_batch(cols, b[TIME], b[DIFF])
            cols.append(conform(f(cur), e.type))
        return make_batch(cols, b[TIME], b[DIFF]).cast(self.schema)


class FilterOp(Operator):
    def __init__(self, input: Operator, predicates: tuple[ScalarExpr, ...], schema: pa.Schema, rt: Runtime):
        self.input, self.schema, self.rt = input, schema, rt
        plain, bounds = split_temporal(tuple(predicates))
        self.preds = [compile_predicate(p) for p in plain]
        # Temporal predicates (mz_now() compared with the row) become validity intervals.
        self.temporal = TemporalFilter(bounds, schema) if bounds else None

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        b = self.rt.guarded(self.schema, lambda: self._apply(b))
        if self.temporal is not None:
            b = self.rt.guarded(self.schema, lambda: self.temporal.apply(b, ctx.upper))
        return b

    def _apply(self, b: pa.Table) -> pa.Table:
        # Predicates narrow the batch one after another, so `x <> 0` listed before `10 / x > 1`
        # protects the division.
        for p in self.preds:
            if b.num_rows == 0:
                break
            b = b.filter(pa.array(p(b)))
        return b


class ProjectOp(Operator):
    def __init__(self, input: Operator, columns: tuple[int, ...], schema: pa.Schema, rt: Runtime):
        self.input, self.columns, self.schema, self.rt = input, columns, schema, rt

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        cols = [b.column(i) for i in self.columns]
        return make_batch(cols, b[TIME], b[DIFF])


class FlatMapOp(Operator):
    """generate_series(start, stop[, step]) appended as one column; output row i repeats input
    row i once per generated value (whole-array repeat, no per-row loop)."""

    def __init__(self, input: Operator, func: str, args: tuple[ScalarExpr, ...], type: SqlType,
                 schema: pa.Schema, rt: Runtime):
        if func not in ("generate_series", "unnest", "generate_subscripts") and not func.startswith("jsonb_"):
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"table function {func} not yet supported")
        self.input, self.schema, self.rt, self.type, self.func = input, schema, rt, type, func
        self.fns = [compile_expr(a) for a in args]
        self.arg_types = [a.type for a in args]

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        return self.rt.guarded(self.schema, lambda: self._apply(b))

    def _apply(self, b: pa.Table) -> pa.Table:
        if b.num_rows == 0:
            return self.schema.empty_table()
        if self.func in ("unnest", "generate_subscripts") or self.func.startswith("jsonb_"):
            return self._unnest(b)
        if pa.types.is_timestamp(self.type.arrow):
            return self._timestamps(b)
        args = [f(b).cast(pa.int64()) for f in self.fns]
        valid = np.ones(b.num_rows, bool)
        for a in args:
            valid &= a.is_valid().to_numpy(zero_copy_only=False)
        vals = [pc.fill_null(a, 1).to_numpy() for a in args]
        start, stop = vals[0], vals[1]
        step = vals[2] if len(vals) > 2 else np.ones_like(start)
        if ((step == 0) & valid).any():
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "step size cannot equal zero")
        step = np.where(step == 0, 1, step)
        counts = np.where(valid, np.maximum((stop - start) // step + 1, 0), 0)
        total = int(counts.sum())
        rep = np.repeat(np.arange(b.num_rows), counts)
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        series = start[rep] + step[rep] * within
        out = b.take(pa.array(rep))
        cols = _row_cols(out) + [pa.array(series).cast(self.type.arrow)]
        return make_batch(cols, out[TIME], out[DIFF])


    def _timestamps(self, b: pa.Table) -> pa.Table:
        """generate_series(start, stop, interval): each value is the previous plus the step, as
        PostgreSQL adds it (Jan 31 + 1 mon + 1 mon is Mar 29), until it passes stop. One pass
        over the still-running rows per generated value."""
        from dataflow import interval
        from dataflow.functions.datetime import shift

        start, stop, step = (_arr_of(f(b)) for f in self.fns)
        valid = (start.is_valid().to_numpy(zero_copy_only=False) & stop.is_valid().to_numpy(zero_copy_only=False)
                 & step.is_valid().to_numpy(zero_copy_only=False))
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
        rep, series = rep[order], series[order]
        out = b.take(pa.array(rep))
        col = pa.array(series, pa.int64()).view(pa.timestamp("us", tz=self.type.arrow.tz)).cast(self.type.arrow)
        return make_batch(_row_cols(out) + [col], out[TIME], out[DIFF])


    def _unnest(self, b: pa.Table) -> pa.Table:
        """unnest(array): each input row once per element, in order (each distinct array text
        read once)."""
        from dataflow import arrays

        texts = _arr_of(self.fns[0](b)).to_pylist()
        read = arrays.read if self.func == "unnest" else _json_set(self.func)
        if self.func == "generate_subscripts":
            # generate_subscripts(array, dim): 1..length for the one dimension arrays have here.
            element = self.arg_types[0].element
            dims = _arr_of(self.fns[1](b)).to_pylist()
            texts = [t if d == 1 else None for t, d in zip(texts, dims)]
            read = lambda t, _type: list(range(1, len(arrays.read(t, element)) + 1))  # noqa: E731
        cache: dict[str, list] = {}
        lists = []
        for t in texts:
            if t is None:
                lists.append([])
            else:
                if t not in cache:
                    cache[t] = read(t, self.type)
                lists.append(cache[t])
        counts = np.array([len(x) for x in lists], np.int64)
        rep = np.repeat(np.arange(b.num_rows), counts)
        flat = [v for x in lists for v in x]
        out = b.take(pa.array(rep, pa.int64()))
        col = pa.array(flat, self.type.arrow) if flat else pa.nulls(0, self.type.arrow)
        return make_batch(_row_cols(out) + [col], out[TIME], out[DIFF])


def _json_set(func: str):
    """The rows of a jsonb set function for one document (PostgreSQL's errors for the wrong kind)."""
    from dataflow import jsonb

    def read(text: str, _type) -> list:
        doc = jsonb.parse(text)
        if func == "jsonb_object_keys":
            if not isinstance(doc, dict):
                kind = "a scalar" if not isinstance(doc, list) else "an array"
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot call jsonb_object_keys on {kind}")
            return sorted(doc, key=lambda k: (len(k.encode()), k.encode()))
        if not isinstance(doc, list):
            what = "a scalar" if not isinstance(doc, dict) else "a non-array"
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot extract elements from {what}")
        if func == "jsonb_array_elements_text":
            return [jsonb.as_text(v) for v in doc]
        return [jsonb.canonical(v) for v in doc]
    return read


def _arr_of(x):
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


class UnionOp(Operator):
    """Multiset union. With `cancels` (an input is negated: `A − B` as in outer joins' unmatched
    rows, EXCEPT, a global aggregate's default row) the step's output is consolidated, so a row
    added and removed at the same time never reaches the expressions above, which would
    otherwise evaluate it (and could raise an error for a row that never exists)."""

    def __init__(self, inputs: list[Operator], schema: pa.Schema, rt: Runtime, cancels: bool = False,
                 path: str = "union"):
        self.inputs, self.schema, self.rt, self.cancels, self.path = inputs, schema, rt, cancels, path

    def step(self, ctx: StepContext) -> pa.Table:
        out = concat([i.step(ctx) for i in self.inputs], schema=self.schema)
        if not self.cancels:
            return out
        # A row and its negation may come from different workers: bring equal rows together
        # (every worker takes part in the exchange every step) before they cancel.
        out = self.rt.shuffle(f"{self.path}/cancel", out, tuple(range(len(self.schema) - 2)))
        return consolidate(out) if out.num_rows > 1 else out


class NegateOp(Operator):
    def __init__(self, input: Operator, schema: pa.Schema, rt: Runtime):
        self.input, self.schema, self.rt = input, schema, rt

    def step(self, ctx: StepContext) -> pa.Table:
        return negate(self.input.step(ctx))
