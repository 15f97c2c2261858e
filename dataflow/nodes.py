"""Generic walks over plan and expression nodes (frozen dataclasses): their field values.

Rules that look for something anywhere in a plan (a deferred error, an unconstrained numeric
constant, an own-write marker) walk every field of every node; `dataclasses.fields` recomputes
the field list on each call, which made those walks a large part of planning a small query.

>>> from dataflow.plan import Get
>>> field_values(Get("u1", ()))
('u1', ())
>>> field_values((1, 2)) is None
True
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from dataflow.types import SqlType


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    if not dataclasses.is_dataclass(cls) or issubclass(cls, SqlType):
        return None  # (a type holds no plan node or expression: nothing to look for inside)
    return tuple(f.name for f in dataclasses.fields(cls))


def field_values(node: Any) -> tuple | None:
    """The values of `node`'s fields in declaration order, or None if it is not a plan node or
    an expression (a dataclass instance other than a SqlType)."""
    names = _field_names(type(node))
    if names is None:
        return None
    return tuple(getattr(node, name) for name in names)
