"""What every operator shares: the per-step context, the per-dataflow runtime, error capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from dataflow.batch import DIFF, TIME, concat, partition
from dataflow.errors import SqlError, SqlState
from dataflow.exchange import Exchange


# How much one operator may materialise in one step on one worker: a join whose output would be
# larger (a cross product of big inputs, often a forgotten join condition) fails the query with
# 53200 instead of running the worker out of memory and taking every dataflow on it down.
DEFAULT_STEP_LIMIT_BYTES = 1 << 30


@dataclass
class Runtime:
    """Per-dataflow services: the exchange, the as_of, the evaluation errors seen, and the
    per-step output bound of memory-hungry operators."""

    exchange: Exchange
    as_of: int
    errors: list[SqlError] = field(default_factory=list)
    step_limit_bytes: int = DEFAULT_STEP_LIMIT_BYTES
    # The indexes this worker maintains, by collection id: (key columns, arrangement). A join
    # that reads one on its key probes it in place (operators.join.SharedJoinOp).
    shared: dict = field(default_factory=dict)
    # The channels exchanged on in this step: workers match exchanges by (step, channel), so two
    # exchanges of one step on one channel would take each other's rows (or wait forever).
    step_channels: set[str] = field(default_factory=set)
    # Called before each piece of local work (`guarded`): the worker answers the fast-path
    # peeks that arrived meanwhile, so a read of another collection does not wait for the
    # rest of this dataflow's step. It reads only collections already stepped and touches no
    # state of this dataflow.
    pause: Callable[[], None] | None = None

    def shuffle(self, channel: str, batch: pa.Table, key: Sequence[int]) -> pa.Table:
        if self.exchange.worker_count == 1:
            return batch
        if channel in self.step_channels:
            raise AssertionError(f"exchange channel {channel!r} used twice in one step")
        self.step_channels.add(channel)
        return self.exchange.shuffle(channel, batch, tuple(key))

    def shuffle_input(self, channel: str, input: "Operator", ctx: "StepContext", key: Sequence[int]) -> pa.Table:
        """`input`'s output in this step, shuffled by `key`; nothing, without stepping `input`
        or exchanging, when its collections did not change on any worker (`Operator.quiet`).
        When every worker holds the whole of it (`Operator.step_whole`: a small table write
        through Map/Filter/Project), each takes its own part of the whole: what the exchange
        would have brought it, without the round between the workers."""
        if input.quiet(ctx):
            return input.schema.empty_table()
        ex = self.exchange
        if ctx.whole and ex.worker_count > 1:
            whole = input.step_whole(ctx)
            if whole is not None:
                return partition(whole, tuple(key), ex.worker_count)[ex.worker_index]
        return self.shuffle(channel, input.step(ctx), key)

    def guarded(self, schema: pa.Schema, fn: Callable[[], pa.Table]) -> pa.Table:
        """Run local (non-exchanging) work; on a SqlError record it and yield an empty batch so
        every worker still makes every later shuffle call."""
        if self.pause is not None:
            self.pause()
        try:
            return fn()
        except SqlError as e:
            # Without its traceback: the frames would keep the failed step's batches alive for
            # as long as the error is kept (a view answers its error until it is dropped).
            self.errors.append(e.with_traceback(None))
            return schema.empty_table()


@dataclass
class StepContext:
    inputs: dict[str, pa.Table]
    upper: int
    first: bool
    # Input collections that changed on no worker since the last step (the same set on every
    # worker): an operator reading only these has nothing to do, and no exchange to make.
    quiet: frozenset[str] = frozenset()
    # Input collections whose updates of this step every worker holds whole (the same batch on
    # each; a small table write: `AdvanceUpper.whole`). `inputs` still holds each one's own part.
    whole: dict[str, pa.Table] = field(default_factory=dict)
    # Outputs of operators read by several parents (`render.SharedOp`), computed once in this
    # step. Kept here, not in the operators, so they go with the step: an operator holding
    # the step (or its output) would keep a hydration's whole input alive until the next.
    outputs: dict[int, pa.Table] = field(default_factory=dict)


class Operator:
    schema: pa.Schema
    # The collections this operator's inputs read, all the way down (set by render, and only
    # in plans whose output changes only when their inputs do: no recursion, no mz_now()).
    reads: frozenset[str] | None = None

    def quiet(self, ctx: StepContext) -> bool:
        """Whether this operator outputs nothing in this step on every worker, known without
        running it: not the first step, and none of the collections it reads changed
        anywhere. Every worker decides alike, so all skip the same exchanges."""
        return not ctx.first and self.reads is not None and self.reads <= ctx.quiet

    def step_whole(self, ctx: StepContext) -> pa.Table | None:
        """This step's output of the whole replica, the same on every worker, when it is a
        row-by-row function of inputs every worker holds whole (`StepContext.whole`); None
        otherwise, decided alike on every worker, before anything is computed. Called instead
        of `step`, never as well."""
        return None

    def step(self, ctx: StepContext) -> pa.Table:  # pragma: no cover - interface
        raise NotImplementedError


def split_by_time(batch: pa.Table) -> list[tuple[int, pa.Table]]:
    """The batch's updates grouped by distinct time, in ascending time order."""
    if batch.num_rows == 0:
        return []
    times = batch[TIME].to_numpy()
    if (times == times[0]).all():
        return [(int(times[0]), batch)]
    order = np.argsort(times, kind="stable")
    st = times[order]
    uniq, starts = np.unique(st, return_index=True)
    ends = np.append(starts[1:], len(st))
    sorted_batch = batch.take(pa.array(order))
    return [(int(t), sorted_batch.slice(s, e - s)) for t, s, e in zip(uniq, starts, ends)]


def at_time(table: pa.Table, time: int, diff: np.ndarray | None = None) -> pa.Table:
    """Row columns of `table` (no time/diff) stamped with `time` and `diff` (default +1)."""
    n = table.num_rows
    d = np.ones(n, np.int64) if diff is None else diff.astype(np.int64)
    names = [f"c{i}" for i in range(table.num_columns)] + ["time", "diff"]
    return pa.Table.from_arrays(list(table.columns) + [pa.array(np.full(n, time, np.uint64)), pa.array(d)],
                                names=names)


def check_no_retractions(batch: pa.Table) -> None:
    """An operator planned over an input that only gains rows (planner/rules/append_only.py)
    keeps too little state to answer a retraction: one reaching it fails the dataflow rather
    than give a wrong answer."""
    if batch.num_rows and (batch[DIFF].to_numpy() < 0).any():
        raise SqlError(SqlState.INTERNAL_ERROR,
                       "internal error: a deletion reached an operator planned for an input that only gains rows")


__all__ = ["Runtime", "StepContext", "Operator", "split_by_time", "at_time", "check_no_retractions", "concat"]
