"""How much memory a dataflow's state holds: Arrow buffers of arrangements and key indexes plus
NumPy accumulators (found by walking the operator tree), and the process RSS."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa

from dataflow.arrangement import Arrangement
from dataflow.operators.base import Operator
from dataflow.operators.keyindex import KeyIndex


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _object_bytes(a: np.ndarray) -> int:
    # An object array holds pointers plus one Python object per slot (ints: ~32 bytes).
    return a.nbytes + sum(sys.getsizeof(x) for x in a[:1000]) * max(1, len(a) // 1000) if len(a) else 0


def state_bytes(obj, seen: set[int] | None = None) -> int:
    """Bytes held by an operator tree's state (arrangements, key indexes, NumPy arrays)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, pa.Table):
        return obj.nbytes
    if isinstance(obj, np.ndarray):
        return _object_bytes(obj) if obj.dtype == object else obj.nbytes
    if isinstance(obj, (list, tuple)):
        return sum(state_bytes(x, seen) for x in obj)
    if isinstance(obj, dict):
        return sum(state_bytes(x, seen) for x in obj.values())
    if isinstance(obj, (Operator, Arrangement, KeyIndex)) or hasattr(obj, "__dict__") and type(obj).__module__.startswith(
            "dataflow.") and not callable(obj):
        return sum(state_bytes(v, seen) for v in vars(obj).values()) if hasattr(obj, "__dict__") else 0
    return 0
