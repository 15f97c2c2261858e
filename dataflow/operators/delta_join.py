"""Delta join: an inner equi-join of several inputs that arranges only its inputs.

A chain of binary joins, ((A ⋈ B) ⋈ C), keeps an arrangement of each running result (A ⋈ B by
C's key): often the largest state of a query. The delta join keeps the inputs' arrangements
only (each input by each key it is probed on) and sends each input's changes along its own
path of probes (`DeltaJoin.paths`), by the product rule over an order of the inputs:

    d(A ⋈ B ⋈ C) = dA ⋈ B ⋈ C  +  A' ⋈ dB ⋈ C  +  A' ⋈ B' ⋈ dC

where X is an input before this step and X' = X + dX after it: input i's path probes inputs
before i in their state after the step and inputs after i in their state before it, so every
combination of updates is joined exactly once. A match's time is the latest of its updates'
and its diff their product, as in `join.JoinOp`: within a step holding several times the
output accumulated to any time t is exactly the join at t. NULL keys never match.

Example, with A = {(1,)}, B = {(1, 2)}, C empty, and a step inserting (2,) into C: A's and
B's paths have nothing to send; C's path probes B by its second column (A's and B's states
after the step, with no change) and then A by B's first: one row (1, 1, 2, 2).

The arrangements are `join.ArrangedInput`s, shared with any other join of the dataflow that
arranges the same input by the same key. Between two probes the running rows are exchanged
to the workers owning the next key; every worker makes the same exchanges in the same order,
and an input that changed on no worker (`Operator.quiet`) sends nothing at all.
"""

from __future__ import annotations

import pyarrow as pa

from dataflow.batch import concat, hash_columns
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.operators.join import ArrangedInput, _drop_null_keys, join_delta
from dataflow.plan import DeltaJoin, DeltaStage, output_types
from dataflow.types import arrow_schema


def path_inputs(plan: DeltaJoin, source: int) -> list[int]:
    """The inputs of `source`'s path in the order its running rows hold their columns."""
    return [source] + [stage.input for stage in plan.paths[source]]


def path_columns(plan: DeltaJoin, source: int) -> list[int]:
    """For each output column of the join, its position in the rows `source`'s path ends
    with."""
    widths = [len(output_types(p)) for p in plan.inputs]
    at, start = 0, {}
    for i in path_inputs(plan, source):
        start[i] = at
        at += widths[i]
    return [start[i] + c for i in range(len(plan.inputs)) for c in range(widths[i])]


class DeltaJoinOp(Operator):
    def __init__(self, plan: DeltaJoin, inputs: list[Operator], arranged: dict[tuple[int, tuple[int, ...]], ArrangedInput],
                 schema: pa.Schema, rt: Runtime, path: str):
        self.inputs, self.arranged, self.schema, self.rt, self.path = inputs, arranged, schema, rt, path
        self.paths = plan.paths
        types = [output_types(p) for p in plan.inputs]
        # The schema of each path's running rows after each stage, and the output's order.
        self.stage_schemas: list[list[pa.Schema]] = []
        self.reorder: list[list[int]] = []
        for source, stages in enumerate(plan.paths):
            running = list(types[source])
            schemas = []
            for stage in stages:
                running += types[stage.input]
                schemas.append(arrow_schema(running))
            self.stage_schemas.append(schemas)
            self.reorder.append(path_columns(plan, source))

    def step(self, ctx: StepContext) -> pa.Table:
        for a in self.arranged.values():
            a.step(ctx)
        parts = []
        for source, stages in enumerate(self.paths):
            if self.inputs[source].quiet(ctx):
                continue  # (decided alike on every worker: none makes this path's exchanges)
            parts.append(self._run_path(source, stages, ctx))
        return concat(parts, self.schema)

    def _source_delta(self, source: int, key: tuple[int, ...], ctx: StepContext) -> pa.Table:
        """Input `source`'s changes in this step, shuffled by `key`: an arrangement's delta
        when the join arranges that input by that key anyway."""
        arranged = self.arranged.get((source, key))
        if arranged is not None:
            return arranged.delta
        return self.rt.shuffle_input(f"{self.path}/delta-{source}", self.inputs[source], ctx, key)

    def _run_path(self, source: int, stages: tuple[DeltaStage, ...], ctx: StepContext) -> pa.Table:
        rows = self._source_delta(source, stages[0].stream_key, ctx)
        for n, stage in enumerate(stages):
            if n:
                rows = self.rt.shuffle(f"{self.path}/delta-{source}.{n}", rows, stage.stream_key)
            after = stage.input < source
            rows = self.rt.guarded(self.stage_schemas[source][n],
                                   lambda rows=rows, stage=stage, after=after, n=n:
                                   self._probe(rows, stage, after, self.stage_schemas[source][n]))
        width = rows.num_columns
        return rows.select(self.reorder[source] + [width - 2, width - 1]).rename_columns(self.schema.names)

    def _probe(self, rows: pa.Table, stage: DeltaStage, after: bool, schema: pa.Schema) -> pa.Table:
        """`rows` ⋈ the stage's input, in its state before this step or (`after`) after it."""
        rows = _drop_null_keys(rows, stage.stream_key)
        if rows.num_rows == 0:
            return schema.empty_table()
        arranged, limit = self.arranged[(stage.input, stage.lookup_key)], self.rt.step_limit_bytes
        states = [arranged.arrangement]
        if after and arranged.delta is not None and arranged.delta.num_rows:
            states.append(arranged.delta_arrangement())
        hashes = hash_columns(rows, stage.stream_key)  # (one hash of the keys for both states)
        out = [join_delta(rows, stage.stream_key, state, True, hashes, limit) for state in states]
        return concat([o.rename_columns(schema.names).cast(schema) for o in out if o is not None], schema)
