"""Sort keys (`dataflow.sort_keys`): the planner orders, compares and takes min/max of arrays,
jsonb and intervals through these.

  sort_key(x)             x's order-preserving key (bytea)
  sort_key_with_value(x)  key ++ x's bytes ++ their length: min/max keep the value beside the key
  value_of_sort_key(k)    the value a `sort_key_with_value` holds (the call's type is x's type)
"""

from __future__ import annotations

import pyarrow as pa

from dataflow import sort_keys
from dataflow.expr import Call


def _sort_key(vals: list[pa.Array], expr: Call) -> pa.Array:
    return sort_keys.sort_key(vals[0], expr.args[0].type)


def _with_value(vals: list[pa.Array], expr: Call) -> pa.Array:
    return sort_keys.keyed(vals[0], expr.args[0].type)


def _value_of(vals: list[pa.Array], expr: Call) -> pa.Array:
    return sort_keys.from_keyed(vals[0], expr.type)


KERNELS = {"sort_key": _sort_key, "sort_key_with_value": _with_value, "value_of_sort_key": _value_of}
