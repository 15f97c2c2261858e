"""Keep pandas out of the server's processes (environmentd and the dataflow workers).

pyarrow imports pandas, when it is installed, the first time `pa.array` is given a Python list
(to check whether it is a pandas object). Nothing in the server uses pandas, and the import
costs each process about 40 MB and 0.2 s: with it, the idle server (environmentd and two
workers) held ~120 MB more. Called first thing at each process's entry point, never on import,
so tests and benchmarks that import the engine in-process keep pandas for themselves.
"""

from __future__ import annotations

import sys


class _NoPandas:
    """A meta path finder that reports pandas as not installed (pyarrow then works without it)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not used in this process", name=name)
        return None


def keep_pandas_out() -> None:
    """Make `import pandas` fail in this process, unless it is already imported."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
