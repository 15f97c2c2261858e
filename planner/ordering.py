"""Ordering values whose stored form does not sort as PostgreSQL sorts them (arrays, jsonb,
intervals): ORDER BY, `<`, min/max and greatest/least go through their sort key
(`dataflow.sort_keys`)."""

from __future__ import annotations

from dataflow.expr import Call, ScalarExpr
from dataflow.sort_keys import KEYED_KINDS, no_ordering
from dataflow.types import BYTEA, SqlType


def needs_key(t: SqlType) -> bool:
    """Whether ordering by a value of `t` needs its sort key (raises PostgreSQL's error for
    types that have no order: json)."""
    err = no_ordering(t)
    if err is not None:
        raise err
    return t.kind in KEYED_KINDS


def order_key(e: ScalarExpr) -> ScalarExpr:
    """`e`, or its sort key (bytea) where its stored form does not sort as PostgreSQL's order."""
    return Call("sort_key", (e,), BYTEA) if needs_key(e.type) else e
