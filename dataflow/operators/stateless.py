"""Stateless operators: they transform each update independently, so they never shuffle and are
correct at every time for free. Get, Constant, Map, Filter, Project, Union, Negate (FlatMap:
`dataflow.operators.flat_map`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dataflow.batch import (DIFF, TIME, advance_times, as_schema, batch_from_rows, concat, consolidate, make_batch,
                           negate)
from dataflow.expr import ScalarExpr
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.operators.temporal import TemporalFilter, split_temporal
from dataflow.scalar import compile_expr, compile_filter, conform
from dataflow.types import SqlType


def _row_cols(batch: pa.Table) -> list:
    return [batch.column(i) for i in range(batch.num_columns - 2)]


@dataclass
class GetOp(Operator):
    id: str
    schema: pa.Schema
    rt: Runtime

    def step(self, ctx: StepContext) -> pa.Table:
        return self._conform(ctx.inputs.get(self.id))

    def step_whole(self, ctx: StepContext) -> pa.Table | None:
        whole = ctx.whole.get(self.id)
        if whole is None:
            return self.schema.empty_table() if self.id in ctx.quiet else None
        return self._conform(whole)

    def _conform(self, b: pa.Table | None) -> pa.Table:
        if b is None or b.num_rows == 0:
            return self.schema.empty_table()
        return as_schema(advance_times(b, self.rt.as_of), self.schema)


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

    def step_whole(self, ctx: StepContext) -> pa.Table | None:
        b = self.input.step_whole(ctx)
        return None if b is None else self.rt.guarded(self.schema, lambda: self._apply(b))

    def _apply(self, b: pa.Table) -> pa.Table:
        if b.num_rows == 0:
            return self.schema.empty_table()
        cols = _row_cols(b)
        for e, f in zip(self.exprs, self.fns):
            # Later expressions may refer to earlier outputs (positions past the input arity).
            cur = make_batch(cols, b[TIME], b[DIFF])
            cols.append(conform(f(cur), e.type))
        return as_schema(make_batch(cols, b[TIME], b[DIFF]), self.schema)


class FilterOp(Operator):
    def __init__(self, input: Operator, predicates: tuple[ScalarExpr, ...], schema: pa.Schema, rt: Runtime):
        self.input, self.schema, self.rt = input, schema, rt
        plain, bounds = split_temporal(tuple(predicates))
        self.preds = [compile_filter(p) for p in plain]
        # Temporal predicates (mz_now() compared with the row) become validity intervals.
        self.temporal = TemporalFilter(bounds, schema) if bounds else None

    def step(self, ctx: StepContext) -> pa.Table:
        b = self.input.step(ctx)
        b = self.rt.guarded(self.schema, lambda: self._apply(b))
        if self.temporal is not None:
            b = self.rt.guarded(self.schema, lambda: self.temporal.apply(b, ctx.upper))
        return b

    def step_whole(self, ctx: StepContext) -> pa.Table | None:
        if self.temporal is not None:
            return None
        b = self.input.step_whole(ctx)
        return None if b is None else self.rt.guarded(self.schema, lambda: self._apply(b))

    def _apply(self, b: pa.Table) -> pa.Table:
        # Predicates narrow the batch one after another, so `x <> 0` listed before `10 / x > 1`
        # protects the division.
        for p in self.preds:
            if b.num_rows == 0:
                break
            b = p(b)
        return b


class ProjectOp(Operator):
    def __init__(self, input: Operator, columns: tuple[int, ...], schema: pa.Schema, rt: Runtime):
        self.input, self.columns, self.schema, self.rt = input, columns, schema, rt

    def step(self, ctx: StepContext) -> pa.Table:
        return self._apply(self.input.step(ctx))

    def step_whole(self, ctx: StepContext) -> pa.Table | None:
        b = self.input.step_whole(ctx)
        return None if b is None else self._apply(b)

    def _apply(self, b: pa.Table) -> pa.Table:
        cols = [b.column(i) for i in self.columns]
        return make_batch(cols, b[TIME], b[DIFF])


class UnionOp(Operator):
    """Multiset union. With `cancels` (an input is negated: `A − B` as in outer joins' unmatched
    rows, EXCEPT, a global aggregate's default row) the step's output is consolidated, so a row
    added and removed at the same time never reaches the expressions above, which would
    otherwise evaluate it (and could raise an error for a row that never exists)."""

    def __init__(self, inputs: list[Operator], schema: pa.Schema, rt: Runtime, cancels: bool = False,
                 path: str = "union"):
        self.inputs, self.schema, self.rt, self.cancels, self.path = inputs, schema, rt, cancels, path

    def step(self, ctx: StepContext) -> pa.Table:
        if self.quiet(ctx):
            return self.schema.empty_table()
        out = concat([i.step(ctx) for i in self.inputs if not i.quiet(ctx)], schema=self.schema)
        if not self.cancels:
            return out
        # A row and its negation may come from different workers: bring equal rows together
        # (every worker takes part in the exchange of a step its inputs changed in) before
        # they cancel.
        out = self.rt.shuffle(f"{self.path}/cancel", out, tuple(range(len(self.schema) - 2)))
        return consolidate(out) if out.num_rows > 1 else out


class NegateOp(Operator):
    def __init__(self, input: Operator, schema: pa.Schema, rt: Runtime):
        self.input, self.schema, self.rt = input, schema, rt

    def step(self, ctx: StepContext) -> pa.Table:
        return negate(self.input.step(ctx))
