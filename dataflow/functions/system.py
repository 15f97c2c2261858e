"""Kernels of the system information functions (signatures: `planner.functions.system`).

format_type names a type by its OID and type modifier as PostgreSQL's format_type does
(`format_type(1043, 14)` is 'character varying(10)'); one Python call per distinct pair.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dataflow import oid_names

from dataflow.expr import Call
from dataflow.types import ARRAY_OIDS, SqlType, TypeKind, array_of, bpchar, numeric, varchar


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _types_by_oid() -> dict[int, SqlType]:
    out = {}
    for kind in TypeKind:
        if kind in (TypeKind.UNKNOWN, TypeKind.ARRAY):
            continue
        t = SqlType(kind)
        out[t.oid] = t
        if kind in ARRAY_OIDS:
            out[ARRAY_OIDS[kind]] = array_of(t)
    out[19] = SqlType(TypeKind.TEXT)  # name
    return out


_BY_OID = _types_by_oid()
_NAMES = {19: "name", 26: "oid", 2205: "regclass", 2206: "regtype", 24: "regproc", 18: '"char"',
          705: "unknown", 2249: "record", 2278: "void", 16: "boolean"}


def type_name(oid: int, typmod: int | None) -> str:
    if oid in _NAMES:
        return _NAMES[oid]
    t = _BY_OID.get(oid)
    if t is None:
        return "???"
    mod = typmod if typmod is not None and typmod >= 0 else None
    if mod is not None:
        if t.kind is TypeKind.VARCHAR:
            return varchar(mod - 4).name
        if t.kind is TypeKind.BPCHAR:
            return bpchar(mod - 4).name
        if t.kind is TypeKind.NUMERIC:
            return numeric((mod - 4) >> 16, (mod - 4) & 0xFFFF).name
    if t.kind is TypeKind.BPCHAR:
        return "character"
    return t.name


def _format_type(vals: list[pa.Array], expr: Call) -> pa.Array:
    oids, mods = _arr(vals[0]).to_pylist(), _arr(vals[1]).to_pylist()
    return pa.array([None if o is None else type_name(o, m) for o, m in zip(oids, mods)], pa.string())


def _get_userbyid(vals: list[pa.Array], expr: Call) -> pa.Array:
    oids = _arr(vals[0]).to_pylist()
    return pa.array([None if o is None else ("slipstream" if o == 10 else f"unknown (OID={o})") for o in oids],
                    pa.string())


def _pg_sleep(vals: list[pa.Array], expr: Call) -> pa.Array:
    """pg_sleep(seconds): the batch sleeps the sum of its rows' times, as PostgreSQL sleeps once
    per row (a one-off `SELECT pg_sleep(n)` runs in a thread of the adapter, so a cancel answers
    at once)."""
    import time
    secs = _arr(vals[0])
    total = float(pc.sum(pc.max_element_wise(pc.fill_null(secs, 0.0), 0.0)).as_py() or 0.0)
    time.sleep(total)
    return pc.if_else(pc.is_valid(secs), pa.scalar("", pa.string()), pa.scalar(None, pa.string()))


KERNELS = {"format_type": _format_type, "pg_get_userbyid": _get_userbyid, "pg_sleep": _pg_sleep}


def _oid_to_name(vals: list[pa.Array], expr: Call) -> pa.Array:
    """regclass/regtype/regproc -> text, with the statement's name table (args[1], JSON)."""
    return oid_names.oids_to_names(expr.args[1].value, vals[0])


def _name_to_oid(vals: list[pa.Array], expr: Call) -> pa.Array:
    """text -> regclass/regtype/regproc, with the statement's name table; a name that names
    nothing is an error, or NULL for to_regclass (args[3] true)."""
    kind = expr.args[2].value
    missing = None if expr.args[3].value else oid_names.missing_error(kind)
    return oid_names.names_to_oids(expr.args[1].value, vals[0], kind, missing)


def _oid_lookup(vals: list[pa.Array], expr: Call) -> pa.Array:
    """A value per oid from a table (args[1], JSON of [oid, text] pairs); NULL where absent."""
    keys, values = oid_names.lookup_arrays(expr.args[1].value)
    return values.take(pc.index_in(_arr(vals[0]).cast(pa.int64()), keys))


def _oid_in(vals: list[pa.Array], expr: Call) -> pa.Array:
    """Whether each oid is in a set (args[1], JSON list); NULL for NULL."""
    members = oid_names.oid_set(expr.args[1].value)
    arr = _arr(vals[0]).cast(pa.int64())
    return pc.if_else(arr.is_valid(), pc.is_in(arr, members), pa.nulls(len(arr), pa.bool_()))


KERNELS.update({"oid_to_name": _oid_to_name, "name_to_oid": _name_to_oid, "oid_lookup": _oid_lookup,
                "oid_in": _oid_in})


def _count_nulls(count_nulls: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        """num_nulls / num_nonnulls over the arguments: Arrow's is_null summed per row."""
        import numpy as np
        nulls = np.zeros(len(vals[0]), np.int32)
        for v in vals:
            nulls += _arr(v).is_null().to_numpy(zero_copy_only=False)
        return pa.array(nulls if count_nulls else len(vals) - nulls, pa.int32())
    return run


def _array_count_nulls(count_nulls: bool):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        """num_nulls / num_nonnulls(VARIADIC array): the array's NULL (non-NULL) elements, each
        distinct array text read once; a NULL array is NULL."""
        from dataflow import arrays
        texts = _arr(vals[0])
        uniq = pc.unique(texts)
        counts = []
        for t in uniq.to_pylist():
            if t is None:
                counts.append(None)
                continue
            elems = arrays.split(t)
            n = sum(e is None for e in elems)
            counts.append(n if count_nulls else len(elems) - n)
        return pa.array(counts, pa.int32()).take(pc.index_in(texts, uniq))
    return run


KERNELS.update({"num_nulls": _count_nulls(True), "num_nonnulls": _count_nulls(False),
                "array_num_nulls": _array_count_nulls(True), "array_num_nonnulls": _array_count_nulls(False)})
