"""Kernels for decorrelated subqueries (`planner.subqueries`).

`subquery_one(n, v)`: the value of a scalar subquery for each outer row, given `n`, the number
of rows the subquery produced for that row (NULL when none) and `v`, its value when `n` is 1.
Any `n` above 1 among the rows evaluated is PostgreSQL's error 21000. The planner puts the call
where the subquery's value is used, so (as in PostgreSQL) a row whose value is never computed
(the branch of a CASE not taken) raises nothing.

    subquery_one([1, NULL], [7, NULL]) -> [7, NULL]
    subquery_one([1, 2], [7, NULL])    -> error 21000
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.errors import SqlError
from dataflow.expr import Call


def _subquery_one(vals: list[pa.Array], expr: Call) -> pa.Array:
    n, v = vals
    most = pc.max(n).as_py() if len(n) else None
    if most is not None and most > 1:
        raise SqlError("21000", "more than one row returned by a subquery used as an expression")
    return v


KERNELS = {"subquery_one": _subquery_one}
