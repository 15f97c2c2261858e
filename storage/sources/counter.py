"""COUNTER: one relation, the source itself, with one column `counter` (bigint). Tick k inserts
k + 1; with MAX CARDINALITY n, tick k also retracts k + 1 - n, so at most n rows remain."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dataflow.types import INT8
from storage.sources.base import Generator, Output, col, updates


class Counter(Generator):
    kind = "counter"
    accepts = frozenset({"max_cardinality"})
    single_output = True

    def outputs(self) -> list[Output]:
        return [Output(None, (col("counter", INT8),))]

    def growing(self) -> frozenset[str | None]:
        # (with MAX CARDINALITY it retracts its oldest values itself)
        return frozenset({None}) if self.options.max_cardinality is None else frozenset()

    def generate(self, start: int, end: int) -> dict[str | None, pa.Table]:
        ins = np.arange(start + 1, end + 1, dtype=np.int64)
        values, diffs = [ins], [np.ones(len(ins), np.int64)]
        m = self.options.max_cardinality
        if m is not None:
            gone = ins - m
            gone = gone[gone >= 1]
            values.append(gone)
            diffs.append(-np.ones(len(gone), np.int64))
        return {None: updates((INT8,), [np.concatenate(values)], np.concatenate(diffs))}
