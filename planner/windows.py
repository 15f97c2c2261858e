"""Window functions: `f(...) OVER (PARTITION BY ... ORDER BY ... frame)` in a SELECT's list and
ORDER BY, lowered onto `Window` plan nodes.

Window functions are evaluated after FROM/WHERE, GROUP BY and HAVING (so in a grouped query their
arguments, partition and order keys may be aggregates and group keys), and before DISTINCT,
ORDER BY and LIMIT, as in PostgreSQL. While the select list and ORDER BY are lowered, a hook
replaces each window call by a placeholder column and records the call: its arguments, PARTITION
BY and ORDER BY expressions are lowered over the relation below the windows (the FROM result, or
the Reduce output of a grouped query). Then `apply` builds, over that relation,

    Map(every argument / key expression that is not a plain column)
    -> one Window node per distinct (PARTITION BY, ORDER BY), each appending its functions
and renumbers the placeholders to the functions' columns.

Worked example, over t(a int4, b int4, x int4):

    SELECT a, x, row_number() OVER w, sum(x) OVER (PARTITION BY a) FROM t
    WINDOW w AS (PARTITION BY a ORDER BY b DESC)

    Window(Window(Get(t), (0,), ((1, True, False),), (row_number,)),   # column 3
           (0,), (), (sum(#2) whole partition,))                      # column 4
    then Project (0, 2, 3, 4)

Supported: row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag/lead (offset,
default), first_value, last_value, nth_value, and count/sum/avg/min/max (also with FILTER) over
PostgreSQL's default frame or ROWS, RANGE and GROUPS frames with constant offsets and any
EXCLUDE clause; named windows (`WINDOW w AS (...)`, `OVER w`, `OVER (w ORDER BY ...)`).
Refused with 0A000: IGNORE NULLS, DISTINCT or ORDER BY inside a window aggregate, other
aggregates as window functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pyarrow as pa
from sqlglot import exp

from dataflow import interval
from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Call, Cast, ColumnRef, If, Literal, ScalarExpr
from dataflow.plan import Map, Plan, Window, WindowFrame, WindowFunc
from dataflow.types import BOOL, FLOAT8, INT4, INT8, INTERVAL, NUMERIC, TEXT, SqlType, TypeKind
from planner import equality_keys
from planner.aggregates import _nulls_last, aggregate_type
from planner.context import PlanContext
from planner.ordering import order_key
from planner.rules.fold_constants import fold_constant
from planner.scalar import ScalarLowerer, coerce, coerce_all, expr_name, resolve_unknown, to_bool
from planner.scope import Scope
from planner.typing import is_float

WINDOW_ERROR = "42P20"  # windowing_error
# Placeholder columns for window results until the Window nodes exist (see `apply`).
_PLACEHOLDER = 1 << 40

_RANKING = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank",
            exp.PercentRank: "percent_rank", exp.CumeDist: "cume_dist", exp.Ntile: "ntile",
            exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value", exp.LastValue: "last_value",
            exp.NthValue: "nth_value"}
_AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
_NO_FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."


def window_calls(node: exp.Expression) -> list[exp.Window]:
    """The window calls of this query level in `node` (not those inside subqueries)."""
    def nested(n: exp.Expression) -> bool:
        return n is not node and isinstance(n, (exp.Subquery, exp.Select))

    return [n for n in node.walk(prune=nested) if isinstance(n, exp.Window) and not nested(n)]


@dataclass
class _Call:
    partition: tuple[ScalarExpr, ...]
    order: tuple[tuple[ScalarExpr, bool, bool], ...]
    func: str
    args: tuple[ScalarExpr, ...]
    type: object
    frame: WindowFrame


class SelectWindows:
    """The window calls of one SELECT: a hook for its select list and ORDER BY lowerers, and
    `apply` to build the Window nodes."""

    def __init__(self, sel: exp.Select, ctx: PlanContext) -> None:
        self.ctx = ctx
        self.calls: list[_Call] = []
        self._keys: dict[str, int] = {}
        self.parts: ScalarLowerer | None = None
        self.named: dict[str, exp.Window] = {}
        for w in sel.args.get("windows") or []:
            name = w.name
            if name in self.named:
                raise SqlError(WINDOW_ERROR, f'window "{name}" is already defined')
            self.named[name] = w

    @staticmethod
    def of(sel: exp.Select, items, order_nodes, ctx: PlanContext) -> "SelectWindows | None":
        nodes = [it for it, _ in items if not isinstance(it, int)] + list(order_nodes)
        if not any(window_calls(n) for n in nodes):
            return None
        return SelectWindows(sel, ctx)

    # -- lowering -----------------------------------------------------------------------------

    def over(self, parts: ScalarLowerer) -> None:
        """Lower window arguments and keys with `parts` (over the relation below the windows);
        a window call inside them is an error, as in PostgreSQL."""
        inner = parts.hook

        def hook(node: exp.Expression) -> ScalarExpr | None:
            if isinstance(node, exp.Window):
                raise SqlError(WINDOW_ERROR, "window function calls cannot be nested")
            return inner(node) if inner is not None else None

        self.parts = ScalarLowerer(parts.scope, parts.ctx, hook=hook, clause=parts.clause)

    def wrap(self, lowerer: ScalarLowerer) -> ScalarLowerer:
        """`lowerer` with window calls replaced by (placeholder) columns."""
        inner = lowerer.hook

        def hook(node: exp.Expression) -> ScalarExpr | None:
            if isinstance(node, exp.Window):
                return self._register(node)
            return inner(node) if inner is not None else None

        return ScalarLowerer(lowerer.scope, lowerer.ctx, hook=hook, clause=lowerer.clause)

    def _register(self, node: exp.Window) -> ScalarExpr:
        assert self.parts is not None
        key = node.sql(dialect="postgres")
        if key not in self._keys:
            self._keys[key] = len(self.calls)
            self.calls.append(self._call(node))
        k = self._keys[key]
        return ColumnRef(_PLACEHOLDER + k, self.calls[k].type)

    def _definition(self, node: exp.Window) -> tuple[list, exp.Order | None, exp.WindowSpec | None]:
        """PARTITION BY items, ORDER BY and frame of a call's window, named windows resolved."""
        partition = list(node.args.get("partition_by") or [])
        order = node.args.get("order")
        spec = node.args.get("spec")
        ref = node.args.get("alias")
        if ref is None:
            return partition, order, spec
        name = ref.name
        if name not in self.named:
            raise SqlError(SqlState.UNDEFINED_OBJECT, f'window "{name}" does not exist')
        base = self.named[name]
        b_part, b_order, b_spec = self._definition(base) if base.args.get("alias") else (
            list(base.args.get("partition_by") or []), base.args.get("order"), base.args.get("spec"))
        if partition:
            raise SqlError(WINDOW_ERROR, f'cannot override PARTITION BY clause of window "{name}"')
        if order is not None and b_order is not None:
            raise SqlError(WINDOW_ERROR, f'cannot override ORDER BY clause of window "{name}"')
        if b_spec is not None and (order is not None or spec is not None):
            raise SqlError(WINDOW_ERROR, f'cannot copy window "{name}" because it has a frame clause')
        return b_part, order if order is not None else b_order, spec if spec is not None else b_spec

    def _call(self, node: exp.Window) -> _Call:
        lower = self.parts.lower
        partition_nodes, order, spec = self._definition(node)
        defs = ScalarLowerer(self.parts.scope, self.ctx, hook=self._definition_hook(), clause=self.parts.clause)
        # (by SQL equality: intervals by span)
        partition = tuple(equality_keys.key(resolve_unknown(defs.lower(p), self.ctx)) for p in partition_nodes)
        order_by, key_types = [], []
        for o in (order.expressions if order is not None else []):
            raw = resolve_unknown(defs.lower(o.this), self.ctx)
            key_types.append(raw.type)
            e = equality_keys.key(raw)  # (by span)
            e = order_key(e)  # arrays, jsonb: by their sort key (`planner.ordering`)
            order_by.append((e, bool(o.args.get("desc")), _nulls_last(o)))
        frame = self._frame(spec, key_types)
        func = node.this
        cond = None
        if isinstance(func, exp.Filter):
            where = func.expression
            cond_node = where.this if isinstance(where, exp.Where) else where
            func = func.this
            if type(func) not in _AGGREGATES:
                raise unsupported("FILTER for non-aggregate window functions")
            cond = to_bool(lower(cond_node), self.ctx, "FILTER")
        if isinstance(func, (exp.IgnoreNulls, exp.RespectNulls)):
            raise unsupported("IGNORE NULLS / RESPECT NULLS in window functions")
        if type(func) in _RANKING:
            name, args, t = self._ranking(_RANKING[type(func)], func, lower)
        elif type(func) in _AGGREGATES:
            name, args, t = self._aggregate(_AGGREGATES[type(func)], func, lower, cond)
        elif isinstance(func, exp.WithinGroup):  # PostgreSQL's own refusal (0A000)
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"OVER is not supported for ordered-set aggregate {expr_name(func)}")
        else:
            fname = func.name.lower() if isinstance(func, exp.Anonymous) else func.key.lower()
            raise unsupported(f"{fname} as a window function")
        return _Call(partition, tuple(order_by), name, args, t, frame)

    def _definition_hook(self):
        inner = self.parts.hook

        def hook(node: exp.Expression) -> ScalarExpr | None:
            if isinstance(node, exp.Window):
                raise SqlError(WINDOW_ERROR, "window functions are not allowed in window definitions")
            return inner(node) if inner is not None else None
        return hook

    def _ranking(self, name: str, func: exp.Expression, lower) -> tuple[str, tuple, object]:
        if name in ("row_number", "rank", "dense_rank"):
            return name, (), INT8
        if name in ("percent_rank", "cume_dist"):
            return name, (), FLOAT8
        value = resolve_unknown(lower(func.this), self.ctx) if func.this is not None else None
        if name == "ntile":
            return name, (self._int4(func.this, lower),), INT4
        if name in ("first_value", "last_value"):
            return name, (value,), value.type
        if name == "nth_value":
            return name, (value, self._int4(func.args.get("offset"), lower)), value.type
        # lag / lead (value [, offset [, default]])
        args = [value]
        offset, default = func.args.get("offset"), func.args.get("default")
        if offset is not None:
            args.append(self._int4(offset, lower))
        if default is not None:
            (v, d), t = coerce_all([lower(func.this), lower(default)], self.ctx, name)
            if t.kind is TypeKind.UNKNOWN:
                t = TEXT
            args[0] = resolve_unknown(coerce(v, t, self.ctx), self.ctx)
            args.append(resolve_unknown(coerce(d, t, self.ctx), self.ctx))
        return name, tuple(args), args[0].type

    def _int4(self, node: exp.Expression | None, lower) -> ScalarExpr:
        if node is None:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, "function does not exist", hint=_NO_FUNCTION_HINT)
        return resolve_unknown(coerce(lower(node), INT4, self.ctx), self.ctx)

    def _aggregate(self, name: str, func: exp.Expression, lower, cond) -> tuple[str, tuple, object]:
        arg_node = func.this
        if isinstance(arg_node, exp.Distinct):
            raise unsupported("DISTINCT is not implemented for window functions")
        if isinstance(arg_node, exp.Order) or any(isinstance(e, exp.Order) for e in func.expressions):
            raise unsupported("aggregate ORDER BY is not implemented for window functions")

        def guard(e: ScalarExpr) -> ScalarExpr:
            return e if cond is None else If(cond, e, Literal(None, e.type), e.type)

        if name == "count" and (arg_node is None or isinstance(arg_node, exp.Star)):
            if cond is None:
                return "count_star", (), INT8
            return "count", (guard(Literal(True, BOOL)),), INT8
        if func.expressions:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name} with several arguments does not exist",
                           hint=_NO_FUNCTION_HINT)
        arg = lower(arg_node)
        if name in ("sum", "avg") and arg.type.kind is TypeKind.UNKNOWN:
            arg = coerce(arg, NUMERIC, self.ctx)
        arg = resolve_unknown(arg, self.ctx)
        if name in ("sum", "avg") and not arg.type.is_numeric_family:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name}({arg.type.name}) does not exist",
                           hint=_NO_FUNCTION_HINT)
        if name in ("min", "max") and arg.type.kind is TypeKind.BOOL:
            raise SqlError(SqlState.UNDEFINED_FUNCTION, f"function {name}(boolean) does not exist",
                           hint=_NO_FUNCTION_HINT)
        result = aggregate_type(name, arg.type)
        if name in ("min", "max") and arg.type.kind in (TypeKind.INTERVAL, TypeKind.ARRAY, TypeKind.JSONB):
            raise unsupported(f"{name}({arg.type.name}) as a window function")
        return name, (guard(arg),), result

    def _frame(self, spec: exp.WindowSpec | None, key_types: list[SqlType]) -> WindowFrame:
        if spec is None:
            return WindowFrame()
        n_order = len(key_types)
        mode = str(spec.args.get("kind") or "").lower()
        exclude_node = spec.args.get("exclude")
        exclude = "no_others" if exclude_node is None else \
            exclude_node.name.lower().replace(" ", "_")
        if mode == "groups" and not n_order:
            raise SqlError(WINDOW_ERROR, "GROUPS mode requires an ORDER BY clause")
        offsets = mode == "range" and any(
            spec.args.get(k) is not None and not isinstance(spec.args.get(k), str) for k in ("start", "end"))
        if offsets and n_order != 1:
            raise SqlError(WINDOW_ERROR, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
        key_type = key_types[0] if offsets else None
        start = self._bound(spec.args.get("start"), spec.args.get("start_side"), True, key_type)
        end_node = spec.args.get("end")
        single = end_node is None
        end = ("current", 0) if single else self._bound(end_node, spec.args.get("end_side"), False, key_type)
        if start[0] == "unbounded_following":
            raise SqlError(WINDOW_ERROR, "frame start cannot be UNBOUNDED FOLLOWING")
        if end[0] == "unbounded_preceding":
            raise SqlError(WINDOW_ERROR, "frame end cannot be UNBOUNDED PRECEDING")
        if start[0] == "current" and end[0] == "preceding":
            raise SqlError(WINDOW_ERROR, "frame starting from current row cannot have preceding rows")
        if start[0] == "following" and end[0] in ("preceding", "current"):
            if single:
                raise SqlError(WINDOW_ERROR, "frame starting from following row cannot end with current row")
            raise SqlError(WINDOW_ERROR, "frame starting from following row cannot have preceding rows")
        return WindowFrame(mode, start, end, key_type, exclude)

    def _bound(self, node, side, is_start: bool, key_type: SqlType | None = None) -> tuple[str, object]:
        """A frame bound; its offset a row or group count, or (RANGE, `key_type` given) a
        value of the offset type PostgreSQL's in_range takes for that key type."""
        side = str(side or "").lower()
        text = node.upper() if isinstance(node, str) else None
        if text == "UNBOUNDED":
            return ("unbounded_preceding" if side == "preceding" else "unbounded_following", 0)
        if text == "CURRENT ROW":
            return ("current", 0)
        which = "starting" if is_start else "ending"
        value = ScalarLowerer(Scope(), self.ctx, clause="window definitions").lower(node)
        if key_type is not None:
            return (side, self._range_offset(value, key_type, which))
        value = fold_constant(coerce(value, INT8, self.ctx))
        if not isinstance(value, Literal):
            raise unsupported("frame offsets that are not constants")
        if value.value is None:
            raise SqlError("22004", f"frame {which} offset must not be null")
        if value.value < 0:
            raise SqlError("22013", f"frame {which} offset must not be negative")
        return (side, int(value.value))

    def _range_offset(self, value: ScalarExpr, key_type: SqlType, which: str):
        """A RANGE offset: PostgreSQL's in_range offset types (integers for integer keys, numeric,
        double precision, interval for dates, timestamps and times)."""
        k = key_type.kind
        if key_type.is_integer:
            want = INT8 if value.type.is_integer or value.type.kind is TypeKind.UNKNOWN else None
        elif k is TypeKind.NUMERIC:
            want = NUMERIC if value.type.is_numeric_family and not is_float(value.type) \
                or value.type.kind is TypeKind.UNKNOWN else None
        elif k in (TypeKind.FLOAT4, TypeKind.FLOAT8):
            want = FLOAT8 if value.type.is_numeric_family or value.type.kind is TypeKind.UNKNOWN else None
        elif k in (TypeKind.DATE, TypeKind.TIMESTAMP, TypeKind.TIMESTAMPTZ):
            want = INTERVAL if value.type.kind in (TypeKind.INTERVAL, TypeKind.UNKNOWN) else None
        else:
            raise unsupported(f"RANGE with offset PRECEDING/FOLLOWING for column type {key_type.name}")
        if want is None:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED,
                           f"RANGE with offset PRECEDING/FOLLOWING is not supported for column type "
                           f"{key_type.name} and offset type {value.type.name}",
                           hint="Cast the offset value to an appropriate type.")
        value = fold_constant(coerce(value, want, self.ctx))
        if not isinstance(value, Literal):
            raise unsupported("frame offsets that are not constants")
        if value.value is None:
            raise SqlError("22004", f"frame {which} offset must not be null")
        v = value.value
        negative = (interval.span_key(pa.array([v], interval.ARROW))[0] < 0) if want is INTERVAL else v < 0
        if negative or (want is FLOAT8 and v != v):
            raise SqlError("22013", "invalid preceding or following size in window function")
        return v

    def partition_first(self, keys: list[ScalarExpr]) -> None:
        """Partition every window by `keys` first (a correlated subquery's outer values,
        `planner.subqueries`), so that each outer value has its own partitions."""
        self.calls = [replace(c, partition=tuple(keys) + tuple(c.partition)) for c in self.calls]

    # -- building -----------------------------------------------------------------------------

    def apply(self, plan: Plan, width: int, exprs: list[ScalarExpr]) -> tuple[Plan, int, list[ScalarExpr]]:
        """Add the Window nodes over `plan` (`width` columns); returns the new plan, its width,
        and `exprs` with the placeholders renumbered to the window results."""
        extra: list[ScalarExpr] = []

        def column(e: ScalarExpr) -> int:
            if isinstance(e, ColumnRef):
                return e.index
            if e not in extra:
                extra.append(e)
            return width + extra.index(e)

        groups: dict[tuple, list[int]] = {}
        shapes = []
        for k, c in enumerate(self.calls):
            part = tuple(column(p) for p in c.partition)
            order = tuple((column(e), d, n) for e, d, n in c.order)
            shapes.append((part, order, tuple(column(a) for a in c.args)))
            groups.setdefault((part, order), []).append(k)
        if extra:
            plan = Map(plan, tuple(extra))
        at = width + len(extra)
        where: dict[int, int] = {}
        for (part, order), ks in groups.items():
            funcs = tuple(WindowFunc(self.calls[k].func, shapes[k][2], self.calls[k].type, self.calls[k].frame)
                          for k in ks)
            plan = Window(plan, part, order, funcs)
            for j, k in enumerate(ks):
                where[k] = at + j
            at += len(ks)
        return plan, at, [_renumber(e, where) for e in exprs]


def _renumber(e: ScalarExpr, where: dict[int, int]) -> ScalarExpr:
    if isinstance(e, ColumnRef):
        return ColumnRef(where[e.index - _PLACEHOLDER], e.type) if e.index >= _PLACEHOLDER else e
    if isinstance(e, Call):
        return Call(e.func, tuple(_renumber(a, where) for a in e.args), e.type)
    if isinstance(e, If):
        return If(_renumber(e.cond, where), _renumber(e.then, where), _renumber(e.els, where), e.type)
    if isinstance(e, Cast):
        return Cast(_renumber(e.arg, where), e.type)
    return e
