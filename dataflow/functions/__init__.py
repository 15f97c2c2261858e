"""Engine kernels of the function library, one module per family (the planner's
`planner.functions` declares their signatures; the names here are the `Call.func` it builds).

A kernel takes the evaluated argument arrays (Arrow arrays of the argument types, one value per
row) and the `Call` (for its result type and literal arguments) and returns one array of the
result type. Kernels are vectorised: a whole batch per call, never a Python loop per row except
where no vectorised form exists (each such kernel says so).
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa

from dataflow.expr import Call
from dataflow.functions import arrays, binary, datetime, json, math, ordering, strings, subqueries, system

Kernel = Callable[[list[pa.Array], Call], pa.Array]

KERNELS: dict[str, Kernel] = {}
for _family in (math, strings, system, datetime, binary, json, arrays, subqueries, ordering):
    KERNELS.update(_family.KERNELS)
