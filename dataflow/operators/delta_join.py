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
arranges the same input by the same key, or an index's, probed in place where an input reads
an index on the key it is probed by (`IndexSide`). Between two probes the running rows are exchanged
to the workers owning the next key; every worker makes the same exchanges in the same order,
and an input that changed on no worker (`Operator.quiet`) sends nothing at all.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.arrangement import Arrangement
from dataflow.batch import DIFF, as_schema, concat, hash_columns
from dataflow.operators.base import Operator, Runtime, StepContext
from dataflow.operators.join import (ArrangedInput, SideChain, _drop_null_keys, index_matches, index_rebuilt,
                                     join_delta)
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


class ArrangedSide:
    """An input the join arranges itself (`ArrangedInput`, shared with other joins of the
    dataflow): before this step in its arrangement, this step's changes beside it."""

    def __init__(self, arranged: ArrangedInput) -> None:
        self.arranged = arranged

    @property
    def delta(self) -> pa.Table:
        return self.arranged.delta

    def step(self, ctx: StepContext) -> None:
        self.arranged.step(ctx)

    def end_step(self) -> None:
        # (the delta as an arrangement, for probes of the state after the step, is built again
        # if another join still needs it in this step; kept, it would double the input's
        # memory after hydration until the next change)
        self.arranged.drop_delta_arrangement()

    def probe(self, rows: pa.Table, key: tuple[int, ...], hashes, after: bool, upper: int,
              limit: int) -> list[pa.Table | None]:
        a = self.arranged
        out = [join_delta(rows, key, a.arrangement, True, hashes, limit)]
        if after and a.delta is not None and a.delta.num_rows:
            out.append(join_delta(rows, key, a.delta_arrangement(), True, hashes, limit))
        return out


class IndexSide:
    """An input read from an index this worker maintains, probed in place on the index's key
    (a shared arrangement, as `join.SharedJoinOp` reads one): the index has stepped to at least
    this step's upper, so its arrangement holds the input *after* this step, and possibly later
    updates, which the time filter drops. The state before the step is that minus the step's
    changes (the index's own updates, already partitioned by its key):

        rows ⋈ S_before  =  rows ⋈ S_after[< upper]  -  rows ⋈ dS

    `op` reads the index under the input's chain of projections, filters and maps; a match's
    index row goes through that chain (`SideChain`)."""

    def __init__(self, op: Operator, key: tuple[int, ...], arrangement, current, width: int, chain: tuple) -> None:
        self.op, self.key, self.arrangement, self.current = op, key, arrangement, current
        self.width, self.side = width, SideChain(chain)
        self.delta: pa.Table | None = None
        self._delta_arrangement: Arrangement | None = None

    def step(self, ctx: StepContext) -> None:
        # (one IndexSide per join and key, stepped once per step by its join)
        self.delta = _drop_null_keys(self.op.step(ctx), self.key)
        self._delta_arrangement = None

    def end_step(self) -> None:
        # (after hydration the step's changes are the whole index: not kept until the next step)
        self.delta = self.op.schema.empty_table()
        self._delta_arrangement = None

    def probe(self, rows: pa.Table, key: tuple[int, ...], hashes, after: bool, upper: int,
              limit: int) -> list[pa.Table | None]:
        if not self.current():
            raise index_rebuilt()
        out: list[pa.Table | None] = []
        full = join_delta(rows, key, self.arrangement, True, hashes, limit)
        if full is not None:
            out.append(index_matches(full, upper, self.side, self.width, False))
        if not after and self.delta.num_rows:
            if self._delta_arrangement is None:
                self._delta_arrangement = Arrangement(self.key)
                self._delta_arrangement.insert(self.delta)
            undo = join_delta(rows, key, self._delta_arrangement, True, hashes, limit)
            if undo is not None:
                out.append(undo.set_column(undo.num_columns - 1, DIFF, pc.negate(undo[DIFF])))
        return out


Side = ArrangedSide | IndexSide


class DeltaJoinOp(Operator):
    def __init__(self, plan: DeltaJoin, inputs: list[Operator], sides: dict[tuple[int, tuple[int, ...]], Side],
                 schema: pa.Schema, rt: Runtime, path: str):
        self.inputs, self.sides, self.schema, self.rt, self.path = inputs, sides, schema, rt, path
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
        for side in self.sides.values():
            side.step(ctx)
        parts = []
        for source, stages in enumerate(self.paths):
            if self.inputs[source].quiet(ctx):
                continue  # (decided alike on every worker: none makes this path's exchanges)
            if ctx.first and source:
                # Before the first step every input is empty: the join of the step's changes
                # is the join of all inputs after it, which any one path computes when it
                # probes every input in its state after the step. The first input's path does
                # (the order the binary chain had: the planner puts filtered relations first),
                # instead of one join per input of which all but one find nothing.
                continue
            parts.append(self._run_path(source, stages, ctx, all_after=ctx.first))
        for side in self.sides.values():
            side.end_step()
        return concat(parts, self.schema)

    def _source_delta(self, source: int, key: tuple[int, ...], ctx: StepContext) -> pa.Table:
        """Input `source`'s changes in this step, partitioned by `key`: those of its
        arrangement (or index) by that key when the join has one."""
        side = self.sides.get((source, key))
        if side is not None:
            return side.delta
        return self.rt.shuffle_input(f"{self.path}/delta-{source}", self.inputs[source], ctx, key)

    def _run_path(self, source: int, stages: tuple[DeltaStage, ...], ctx: StepContext,
                  all_after: bool = False) -> pa.Table:
        rows = self._source_delta(source, stages[0].stream_key, ctx)
        for n, stage in enumerate(stages):
            if n:
                rows = self.rt.shuffle(f"{self.path}/delta-{source}.{n}", rows, stage.stream_key)
            schema = self.stage_schemas[source][n]
            rows = self.rt.guarded(schema, lambda rows=rows, stage=stage, schema=schema:
                                   self._probe(rows, stage, all_after or stage.input < source, ctx.upper, schema))
        width = rows.num_columns
        return rows.select(self.reorder[source] + [width - 2, width - 1]).rename_columns(self.schema.names)

    def _probe(self, rows: pa.Table, stage: DeltaStage, after: bool, upper: int, schema: pa.Schema) -> pa.Table:
        """`rows` ⋈ the stage's input, in its state before this step or (`after`) after it."""
        rows = _drop_null_keys(rows, stage.stream_key)
        if rows.num_rows == 0:
            return schema.empty_table()
        hashes = hash_columns(rows, stage.stream_key)  # (one hash of the keys for both states)
        side = self.sides[(stage.input, stage.lookup_key)]
        out = side.probe(rows, stage.stream_key, hashes, after, upper, self.rt.step_limit_bytes)
        return concat([as_schema(o, schema) for o in out if o is not None], schema)
