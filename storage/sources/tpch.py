"""TPCH: the eight TPC-H relations at a SCALE FACTOR (default 0.01), as the initial snapshot.

    region, nation, supplier, customer, part, partsupp, orders, lineitem

Column names are TPC-H's; types follow Materialize's TPCH generator shapes: keys bigint, counts
and line numbers integer, money and quantities numeric, dates date, strings text. The data comes
from `tpchgen-cli` (the same generator bench/tpch uses, deterministic for a scale factor) as
Parquet and is read columnar with pyarrow: no per-row Python whatever the scale factor. Ticks
after the snapshot add nothing (Slipstream's TPCH source is the static data set).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dataflow.errors import SqlError
from dataflow.types import DATE, INT4, INT8, NUMERIC, TEXT
from storage.sources.base import Generator, Output, col, updates

_B, _I, _N, _T, _D = INT8, INT4, NUMERIC, TEXT, DATE

SCHEMA = {
    "customer": [("c_custkey", _B), ("c_name", _T), ("c_address", _T), ("c_nationkey", _B), ("c_phone", _T),
                 ("c_acctbal", _N), ("c_mktsegment", _T), ("c_comment", _T)],
    "lineitem": [("l_orderkey", _B), ("l_partkey", _B), ("l_suppkey", _B), ("l_linenumber", _I),
                 ("l_quantity", _N), ("l_extendedprice", _N), ("l_discount", _N), ("l_tax", _N),
                 ("l_returnflag", _T), ("l_linestatus", _T), ("l_shipdate", _D), ("l_commitdate", _D),
                 ("l_receiptdate", _D), ("l_shipinstruct", _T), ("l_shipmode", _T), ("l_comment", _T)],
    "nation": [("n_nationkey", _B), ("n_name", _T), ("n_regionkey", _B), ("n_comment", _T)],
    "orders": [("o_orderkey", _B), ("o_custkey", _B), ("o_orderstatus", _T), ("o_totalprice", _N),
               ("o_orderdate", _D), ("o_orderpriority", _T), ("o_clerk", _T), ("o_shippriority", _I),
               ("o_comment", _T)],
    "part": [("p_partkey", _B), ("p_name", _T), ("p_mfgr", _T), ("p_brand", _T), ("p_type", _T),
             ("p_size", _I), ("p_container", _T), ("p_retailprice", _N), ("p_comment", _T)],
    "partsupp": [("ps_partkey", _B), ("ps_suppkey", _B), ("ps_availqty", _I), ("ps_supplycost", _N),
                 ("ps_comment", _T)],
    "region": [("r_regionkey", _B), ("r_name", _T), ("r_comment", _T)],
    "supplier": [("s_suppkey", _B), ("s_name", _T), ("s_address", _T), ("s_nationkey", _B), ("s_phone", _T),
                 ("s_acctbal", _N), ("s_comment", _T)],
}


class Tpch(Generator):
    kind = "tpch"
    accepts = frozenset({"scale_factor"})

    def outputs(self) -> list[Output]:
        return [Output(n, tuple(col(c, t) for c, t in cols)) for n, cols in SCHEMA.items()]

    def generate(self, start: int, end: int) -> dict[str | None, pa.Table]:
        if not (start == 0 and end > 0):
            return {}
        from bench.tpch.data import tpchgen_bin
        out = {}
        with tempfile.TemporaryDirectory(prefix="slipstream-tpch-") as d:
            try:
                subprocess.run([tpchgen_bin(), "parquet", "-s", repr(float(self.options.scale_factor)),
                                f"--output-dir={d}"], check=True, capture_output=True, timeout=3600)
            except (OSError, subprocess.CalledProcessError) as e:
                raise SqlError("XX000", f"TPCH load generator: tpchgen-cli failed: {e}") from e
            for name, cols in SCHEMA.items():
                table = pq.read_table(Path(d) / f"{name}.parquet")
                types = tuple(t for _, t in cols)
                arrays = [table.column(c).cast(t.arrow) for c, t in cols]
                out[name] = updates(types, [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
                                            for a in arrays])
        return out
