"""Kernels of the json and jsonb functions (signatures: `planner.functions.json`).

Arrow has no JSON kernels: each kernel parses each distinct document once in Python, computes,
and spreads the results back by index (documents repeat a lot in practice; the cost per distinct
document is measured in bench/). Values are the canonical text of `dataflow.jsonb`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

from dataflow import json_text, jsonb
from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call, Literal
from dataflow.pg_text import float4_text
from dataflow.types import TypeKind


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _rows(vals: list[pa.Array]) -> list[tuple]:
    return list(zip(*(_arr(v).to_pylist() for v in vals)))


def _per_distinct(fn: Callable[..., Any], out: pa.DataType) -> Callable:
    """Apply `fn(doc, *other args)` (documents parsed) once per distinct argument tuple; NULL
    in, NULL out. One argument: distinct values via Arrow; several: a dict of tuples."""
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        arrs = [_arr(v) for v in vals]
        cache: dict[tuple, Any] = {}
        parsed: dict[str, Any] = {}
        results = []
        for row in zip(*(a.to_pylist() for a in arrs)):
            if row in cache:
                results.append(cache[row])
                continue
            if any(x is None for x in row):
                r = None
            else:
                doc = parsed.get(row[0])
                if doc is None and row[0] not in parsed:
                    doc = parsed[row[0]] = jsonb.parse(row[0])
                r = fn(doc, *row[1:])
            cache[row] = r
            results.append(r)
        return pa.array(results, out)
    return run


def _get(doc: Any, key: Any) -> tuple[bool, Any]:
    if isinstance(key, int):
        if isinstance(doc, dict):
            return False, None
        if not isinstance(doc, list):
            doc = [doc]  # PostgreSQL keeps a scalar as a one-element array: '"s"' -> 0 is "s"
        i = key + len(doc) if key < 0 else key
        return (True, doc[i]) if 0 <= i < len(doc) else (False, None)
    if isinstance(doc, dict) and key in doc:
        return True, doc[key]
    return False, None


def _json_out(expr: Call) -> Callable[[Any], str]:
    # jsonb results are canonical text; json results (from -> on json) use the same text form.
    return jsonb.canonical


def _get_kernel(text: bool, path: bool) -> Callable:
    def fn(doc, key):
        found, v = jsonb.get_path(doc, jsonb.path_elements(key)) if path else _get(doc, key)
        if not found:
            return None
        return jsonb.as_text(v) if text else jsonb.canonical(v)
    return _per_distinct(fn, pa.string())


def _extract_path(text: bool) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        rows = _rows(vals)
        out = []
        for row in rows:
            if row[0] is None or any(x is None for x in row[1:]):
                out.append(None)
                continue
            found, v = jsonb.get_path(jsonb.parse(row[0]), list(row[1:]))
            out.append(None if not found else (jsonb.as_text(v) if text else jsonb.canonical(v)))
        return pa.array(out, pa.string())
    return run


def _array_length(doc):
    if not isinstance(doc, list):
        kind = "a scalar" if not isinstance(doc, dict) else "a non-array"
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"cannot get array length of {kind}")
    return len(doc)


def _concat(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return jsonb.canonical({**a, **b})
    la = a if isinstance(a, list) else [a]
    lb = b if isinstance(b, list) else [b]
    return jsonb.canonical(la + lb)


def _delete(doc, key):
    if isinstance(key, int):
        if not isinstance(doc, list):
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE,
                           "cannot delete from scalar" if not isinstance(doc, dict) else
                           "cannot delete from object using integer index")
        i = key + len(doc) if key < 0 else key
        return jsonb.canonical([x for j, x in enumerate(doc) if j != i])
    if isinstance(doc, dict):
        return jsonb.canonical({k: v for k, v in doc.items() if k != key})
    if isinstance(doc, list):
        return jsonb.canonical([x for x in doc if x != key])
    raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot delete from scalar")


def _delete_path(doc, path_text):
    path = jsonb.path_elements(path_text)
    if not isinstance(doc, (dict, list)):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot delete path in scalar")
    if not path:
        return jsonb.canonical(doc)

    def rec(v, i):
        if isinstance(v, dict):
            if path[i] not in v:
                return v
            if i == len(path) - 1:
                return {k: x for k, x in v.items() if k != path[i]}
            return {**v, path[i]: rec(v[path[i]], i + 1)}
        if isinstance(v, list):
            try:
                j = int(path[i])
            except ValueError:
                raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION,
                               f"path element at position {i + 1} is not an integer: \"{path[i]}\"") from None
            j = j + len(v) if j < 0 else j
            if not 0 <= j < len(v):
                return v
            if i == len(path) - 1:
                return v[:j] + v[j + 1:]
            return v[:j] + [rec(v[j], i + 1)] + v[j + 1:]
        return v
    return jsonb.canonical(rec(doc, 0))


_CREATE, _REPLACE, _BEFORE, _AFTER = "create", "replace", "before", "after"
_INT_TEXT = None


def _path_index(text: str, level: int) -> int:
    """A path element used as an array index, as PostgreSQL's strtoint reads it (leading
    blanks and a sign, int32), else 22P02."""
    import re
    global _INT_TEXT
    if _INT_TEXT is None:
        _INT_TEXT = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+")
    if _INT_TEXT.fullmatch(text) and -2 ** 31 <= int(text) < 2 ** 31:
        return int(text)
    raise SqlError(SqlState.INVALID_TEXT_REPRESENTATION,
                   f'path element at position {level + 1} is not an integer: "{text}"')


def set_path(doc: Any, path: list[str | None], new: Any, op: str) -> Any:
    """PostgreSQL's setPath (jsonfuncs.c) for jsonb_set (op create/replace) and jsonb_insert
    (before/after): the document with `new` put at `path`; only the last step may create."""
    last = len(path) - 1

    def rec(v: Any, level: int) -> Any:
        if path[level] is None:
            raise SqlError("22004", f"path element at position {level + 1} is null")
        if isinstance(v, dict):
            key = path[level]
            if key in v:
                if level == last:
                    if op in (_BEFORE, _AFTER):
                        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot replace existing key",
                                       hint="Try using the function jsonb_set to replace key value.")
                    return {**v, key: new}
                return {**v, key: rec(v[key], level + 1)}
            if level == last and op != _REPLACE:
                return {**v, key: new}
            return v
        if isinstance(v, list):
            n = len(v)
            idx = _path_index(path[level], level)
            if idx < 0:
                idx = -(2 ** 31) if -idx > n else n + idx
            if idx > 0 and idx > n:
                idx = n
            if (idx == -(2 ** 31) or n == 0) and level == last and op != _REPLACE:
                return [new] + v
            if 0 <= idx < n:
                if level < last:
                    return v[:idx] + [rec(v[idx], level + 1)] + v[idx + 1:]
                if op == _BEFORE:
                    return v[:idx] + [new] + v[idx:]
                if op == _AFTER:
                    return v[:idx + 1] + [new] + v[idx + 1:]
                return v[:idx] + [new] + v[idx + 1:]
            if level == last and op != _REPLACE:
                return v + [new]
            return v
        return v  # a scalar inside the document: nothing to set
    return rec(doc, 0)


def _set_kernel(insert: bool) -> Callable:
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        """jsonb_set(doc, path, new [, create_if_missing]) / jsonb_insert(doc, path, new [,
        insert_after]): per distinct argument tuple in Python (documents have no vectorised
        form)."""
        from dataflow import arrays
        from dataflow.types import TEXT
        cache: dict[tuple, Any] = {}
        out = []
        rows = _rows(vals) if len(vals) > 3 else [r + (insert is False,) for r in _rows(vals)]
        for row in rows:
            if row in cache:
                out.append(cache[row])
                continue
            doc_text, path_text, new_text, flag = row
            if doc_text is None or path_text is None or new_text is None or flag is None:
                r = None
            else:
                doc = jsonb.parse(doc_text)
                if not isinstance(doc, (dict, list)):
                    raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "cannot set path in scalar")
                path = arrays.split(path_text)
                if (not doc and not flag and not insert) or not path:
                    r = doc_text
                else:
                    op = (_AFTER if flag else _BEFORE) if insert else (_CREATE if flag else _REPLACE)
                    r = jsonb.canonical(set_path(doc, path, jsonb.parse(new_text), op))
            cache[row] = r
            out.append(r)
        return pa.array(out, pa.string())
    return run


_TREATMENTS = ("delete_key", "return_target", "use_json_null", "raise_exception")


def _set_lax(vals: list[pa.Array], expr: Call) -> pa.Array:
    """jsonb_set_lax(doc, path, new, create_if_missing, null_value_treatment): jsonb_set for a
    non-NULL value; for an SQL NULL one the treatment decides (not strict: NULL document, path
    or flag give NULL). Per row in Python, as jsonb_set."""
    rows = _rows(vals)
    out = []
    setter = _set_kernel(False)
    for doc_text, path_text, new_text, create, treatment in rows:
        if doc_text is None or path_text is None or create is None:
            out.append(None)
            continue
        if treatment is None:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, 'null_value_treatment must be "delete_key", '
                           '"return_target", "use_json_null", or "raise_exception"')
        if new_text is None:
            if treatment == "raise_exception":
                raise SqlError("22004", "JSON value must not be null",
                               detail='Exception was raised because null_value_treatment is "raise_exception".',
                               hint="To avoid, either change the null_value_treatment argument or ensure that "
                                    "an SQL NULL is not passed.")
            if treatment == "return_target":
                out.append(doc_text)
                continue
            if treatment == "delete_key":
                out.append(_delete_path(jsonb.parse(doc_text), path_text))
                continue
            if treatment != "use_json_null":
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, 'null_value_treatment must be "delete_key", '
                               '"return_target", "use_json_null", or "raise_exception"')
            new_text = "null"
        one = [pa.array([x]) for x in (doc_text, path_text, new_text)] + [pa.array([create])]
        out.append(setter(one, expr)[0].as_py())
    return pa.array(out, pa.string())


def _element_json(t) -> Callable[[str], Any]:
    """An array element's text as the JSON value to_jsonb makes of a value of type t."""
    if t.is_integer or t.kind is TypeKind.NUMERIC:
        return Decimal
    if t.kind is TypeKind.FLOAT4:
        return lambda x: jsonb.from_sql(float(x)) if x.lower() in ("nan", "infinity", "-infinity") \
            else Decimal(float4_text(float(x)))
    if t.kind is TypeKind.FLOAT8:
        return lambda x: jsonb.from_sql(float(x))
    if t.kind is TypeKind.BOOL:
        return lambda x: x == "t"
    if t.kind in (TypeKind.JSON, TypeKind.JSONB):
        return jsonb.parse
    if t.kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
        return lambda x: x.replace(" ", "T", 1)
    return lambda x: x


def _sql_values(vals: list[pa.Array], expr: Call) -> list[list[Any]]:
    """Each argument's values as JSON values, by the argument's SQL type."""
    cols = []
    for a, arg in zip(vals, expr.args):
        kind = arg.type.kind
        py = _arr(a).to_pylist()
        if kind in (TypeKind.JSON, TypeKind.JSONB):
            cols.append([jsonb.parse(v) if v is not None else None for v in py])
        elif kind is TypeKind.INTERVAL:
            from dataflow.interval import fmt
            cols.append([None if v is None else fmt(v) for v in py])
        elif kind is TypeKind.BYTEA:
            cols.append([None if v is None else "\\x" + v.hex() for v in py])
        elif kind is TypeKind.TIMESTAMPTZ:
            cols.append([None if v is None else v.isoformat() for v in py])
        elif kind is TypeKind.ARRAY:
            # An array is a JSON array of its elements, each as to_jsonb makes it.
            from dataflow.arrays import split
            conv = _element_json(arg.type.element)
            cols.append([None if v is None else [None if x is None else conv(x) for x in split(v)]
                         for v in py])
        elif kind is TypeKind.FLOAT4:
            # real is single precision: its shortest digits (3.3), not those of the double the
            # column holds it as (3.299999952316284)
            cols.append([jsonb.from_sql(v) if v is None or not math.isfinite(v) else Decimal(float4_text(v))
                         for v in py])
        elif kind is TypeKind.NUMERIC and arg.type.scale is None:
            # computed numerics carry the storage's 16 digits: printed without them
            cols.append([None if v is None else v.normalize() for v in py])
        else:
            cols.append([jsonb.from_sql(v) for v in py])
    return cols


def _build_object(vals: list[pa.Array], expr: Call) -> pa.Array:
    if len(expr.args) % 2:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "argument list must have even number of elements",
                       hint="The arguments of jsonb_build_object() must consist of alternating keys and values.")
    if not expr.args:
        return pa.array(["{}"] * len(vals[0]), pa.string())
    cols = _sql_values(vals, expr)
    out = []
    for row in zip(*cols):
        obj = {}
        for i in range(0, len(row), 2):
            k = row[i]
            if k is None:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "argument 1: key must not be null"
                               if i == 0 else f"argument {i + 1}: key must not be null")
            obj[k if isinstance(k, str) else jsonb.as_text(k)] = row[i + 1]
        out.append(jsonb.canonical(obj))
    return pa.array(out, pa.string())


def _build_array(vals: list[pa.Array], expr: Call) -> pa.Array:
    if not expr.args:
        return pa.array(["[]"] * len(vals[0]), pa.string())
    cols = _sql_values(vals, expr)
    return pa.array([jsonb.canonical(list(row)) for row in zip(*cols)], pa.string())


def _to_jsonb(vals: list[pa.Array], expr: Call) -> pa.Array:
    (col,) = _sql_values(vals, expr)
    valid = pc.is_valid(_arr(vals[0])).to_pylist()
    return pa.array([jsonb.canonical(v) if ok else None for v, ok in zip(col, valid)], pa.string())


def _json_build_object(vals: list[pa.Array], expr: Call) -> pa.Array:
    """json_build_object: `{"k" : v, ...}` with keys in the order given, duplicates kept."""
    if len(expr.args) % 2:
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "argument list must have even number of elements",
                       hint="The arguments of json_build_object() must consist of alternating keys and values.")
    if not expr.args:
        return pa.array(["{}"] * len(vals[0]), pa.string())
    cols = []
    for i, (a, arg) in enumerate(zip(vals, expr.args)):
        if i % 2:
            cols.append(["null" if v is None else v for v in json_text.json_texts(_arr(a), arg.type)])
            continue
        keys = json_text.key_texts(_arr(a), arg.type)
        if any(k is None for k in keys):
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f"argument {i + 1} cannot be null",
                           hint="Object keys should be text.")
        cols.append(keys)
    return pa.array(["{" + ", ".join(f"{row[i]} : {row[i + 1]}" for i in range(0, len(row), 2)) + "}"
                     for row in zip(*cols)], pa.string())


def _json_build_array(vals: list[pa.Array], expr: Call) -> pa.Array:
    if not expr.args:
        return pa.array(["[]"] * len(vals[0]), pa.string())
    cols = [["null" if v is None else v for v in json_text.json_texts(_arr(a), arg.type)]
            for a, arg in zip(vals, expr.args)]
    return pa.array(["[" + ", ".join(row) + "]" for row in zip(*cols)], pa.string())


def _to_json(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pa.array(json_text.json_texts(_arr(vals[0]), expr.args[0].type), pa.string())


def _json_agg_piece(vals: list[pa.Array], expr: Call) -> pa.Array:
    """One json_agg element: its json text, `null` for NULL; an array element after the first
    gets the line break PostgreSQL writes before it (json_agg_wrap drops the first one's)."""
    t = expr.args[0].type
    texts = json_text.json_texts(_arr(vals[0]), t)
    lead = "\n " if t.kind is TypeKind.ARRAY else ""
    return pa.array(["null" if v is None else lead + v for v in texts], pa.string())


def _json_agg_wrap(vals: list[pa.Array], expr: Call) -> pa.Array:
    joined = pc.replace_substring_regex(_arr(vals[0]), pattern="^\n ", replacement="", max_replacements=1)
    return pc.binary_join_element_wise("[", joined, "]", "")


def _json_object_agg_piece(vals: list[pa.Array], expr: Call) -> pa.Array:
    """One json_object_agg member `"k" : v`; a NULL key is an error, a NULL value is null."""
    keys = json_text.key_texts(_arr(vals[0]), expr.args[0].type)
    if any(k is None for k in keys):
        raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "field name must not be null")
    values = json_text.json_texts(_arr(vals[1]), expr.args[1].type)
    return pa.array([f"{k} : {'null' if v is None else v}" for k, v in zip(keys, values)], pa.string())


def _json_object_wrap(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pc.binary_join_element_wise("{ ", _arr(vals[0]), " }", "")


def _jsonb_object_wrap(vals: list[pa.Array], expr: Call) -> pa.Array:
    """The joined members as a jsonb object (sorted keys, the last of duplicates wins)."""
    return pa.array([None if v is None else jsonb.canonical(jsonb.parse("{" + v + "}"))
                     for v in _arr(vals[0]).to_pylist()], pa.string())


def _contains(flip: bool) -> Callable:
    def fn(a, b_text):
        b = jsonb.parse(b_text)
        return jsonb.contains(b, a) if flip else jsonb.contains(a, b)
    return _per_distinct(fn, pa.bool_())


def _has_key(doc, key):
    if isinstance(doc, dict):
        return key in doc
    if isinstance(doc, list):
        return any(isinstance(x, str) and x == key for x in doc)
    return isinstance(doc, str) and doc == key


def _has_keys(any_: bool) -> Callable:
    def fn(doc, keys_text):
        from dataflow.arrays import split
        keys = [k for k in split(keys_text) if k is not None]
        hits = [_has_key(doc, k) for k in keys]
        return any(hits) if any_ else all(hits)
    return _per_distinct(fn, pa.bool_())


KERNELS = {
    "jsonb_has_any_key": _has_keys(True), "jsonb_has_all_keys": _has_keys(False),
    "json_get": _get_kernel(False, False), "json_get_text": _get_kernel(True, False),
    "json_get_path": _get_kernel(False, True), "json_get_path_text": _get_kernel(True, True),
    "json_extract_path": _extract_path(False), "json_extract_path_text": _extract_path(True),
    "json_typeof": _per_distinct(jsonb.typeof, pa.string()),
    "json_array_length": _per_distinct(_array_length, pa.int32()),
    "jsonb_contains": _contains(False), "jsonb_contained": _contains(True),
    "jsonb_has_key": _per_distinct(_has_key, pa.bool_()),
    "jsonb_concat": _per_distinct(lambda a, b: _concat(a, jsonb.parse(b)), pa.string()),
    "jsonb_delete": _per_distinct(_delete, pa.string()),
    "jsonb_delete_path": _per_distinct(_delete_path, pa.string()),
    "json_build_object": _json_build_object, "json_build_array": _json_build_array, "to_json": _to_json,
    "json_agg_piece": _json_agg_piece, "json_agg_wrap": _json_agg_wrap,
    "json_object_agg_piece": _json_object_agg_piece, "jsonb_object_wrap": _jsonb_object_wrap,
    "json_object_wrap": _json_object_wrap,
    "jsonb_build_object": _build_object, "jsonb_build_array": _build_array, "to_jsonb": _to_jsonb,
    "jsonb_strip_nulls": _per_distinct(lambda d: jsonb.canonical(jsonb.strip_nulls(d)), pa.string()),
    "jsonb_pretty": _per_distinct(jsonb.pretty, pa.string()),
    "jsonb_set": _set_kernel(False), "jsonb_insert": _set_kernel(True), "jsonb_set_lax": _set_lax,
}
