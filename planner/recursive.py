"""WITH RECURSIVE (PostgreSQL) and WITH MUTUALLY RECURSIVE (Materialize), lowered to `LetRec`.

    WITH RECURSIVE r(a, b) AS (SELECT a, b FROM e UNION SELECT r.a, e.b FROM r JOIN e ON r.b = e.a)
    SELECT * FROM r
    -> LetRec([r], values=[Distinct(Union(seed, F(Get r)))], body=Get r)            (UNION)
    -> LetRec([r], seeds=[seed], values=[F(Get r)], body=Get r)                     (UNION ALL)

PostgreSQL evaluates `seed UNION [ALL] F(r)` with a working table: W_0 = seed, W_{i+1} = F(W_i)
(minus the rows already produced, for UNION), the result the union of every W_i. PostgreSQL
allows the recursive reference only once, in FROM, not on the NULL-padded side of an outer
join and not in a subquery, and no aggregates in the recursive term (its errors, 42P19, are
raised here with its wording), so F is *linear*: F(A + B) = F(A) + F(B). Then UNION ALL's result
is the working-table sum the loop computes directly, and UNION's result is the least fixpoint
of X = distinct(seed ∪ F(X)) (naive and semi-naive evaluation agree for linear F). The forms
that would make F non-linear although PostgreSQL accepts them (window functions, LIMIT, and for
UNION ALL DISTINCT/GROUP BY in the recursive term) are refused with 0A000 rather than answered
differently. The loop itself: dataflow/operators/iterate.py.

WITH MUTUALLY RECURSIVE [(RETURN AT | ERROR AT) RECURSION LIMIT n] name (col type, ...) AS (q),
...: every binding starts empty, each iteration recomputes all of them from the previous
iteration's values, until none changes (Materialize's semantics).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from sqlglot import exp

from dataflow.errors import SqlError, SqlState, unsupported
from dataflow.expr import Literal
from dataflow.plan import Get, LetRec, Union_
from dataflow.types import TEXT, SqlType, TypeKind
from planner import equality_keys

_ids = itertools.count()

RECURSIVE_MARK = "slipstream_recursive"
WMR_MARK = "mutually_recursive"


@dataclass(frozen=True)
class RecursiveRef:
    """A recursive binding in scope: FROM `name` reads `Get(id, types)`."""

    id: str
    names: tuple[str, ...]
    types: tuple[SqlType, ...]


def _refs(node: exp.Expression, name: str) -> list[exp.Table]:
    return [t for t in node.find_all(exp.Table)
            if not t.db and t.name == name and isinstance(t.this, exp.Identifier)]


def register_recursive(with_: exp.With) -> None:
    """Mark the CTEs of a WITH RECURSIVE that read themselves; refuse mutual recursion."""
    names = [c.alias_or_name for c in with_.expressions]
    reads = {c.alias_or_name: {n for n in names if _refs(c.this, n)} for c in with_.expressions}
    for c in with_.expressions:
        name = c.alias_or_name
        # reachable from its own reads through other CTEs, other than itself directly
        seen, todo = set(), [n for n in reads[name] if n != name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if name in reads[n]:
                raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, "mutual recursion between WITH items is not implemented")
            todo.extend(reads[n])
        if name in reads[name]:
            c.set(RECURSIVE_MARK, True)


def _err(msg: str) -> SqlError:
    return SqlError("42P19", msg)


def _check_recursive_term(term: exp.Expression, name: str, ref: exp.Table) -> None:
    """PostgreSQL's checks of where the recursive reference may appear (parse_cte.c)."""
    refs = _refs(term, name)
    if len(refs) > 1:
        raise _err(f'recursive reference to query "{name}" must not appear more than once')
    node: exp.Expression = ref
    while node is not term and node.parent is not None:
        parent = node.parent
        if isinstance(parent, (exp.Exists, exp.In, exp.Any, exp.All)) or (
                isinstance(node, (exp.Subquery, exp.Select)) and not isinstance(
                    parent, (exp.From, exp.Join, exp.Subquery, exp.SetOperation, exp.Select))):
            raise _err(f'recursive reference to query "{name}" must not appear within a subquery')
        if isinstance(node, exp.Subquery) and isinstance(parent, exp.Select) and node.arg_key not in ("from_", "from", "joins"):
            raise _err(f'recursive reference to query "{name}" must not appear within a subquery')
        if isinstance(parent, exp.SetOperation) and not isinstance(parent, exp.Union):
            kind = "INTERSECT" if isinstance(parent, exp.Intersect) else "EXCEPT"
            raise _err(f'recursive reference to query "{name}" must not appear within {kind}')
        if isinstance(parent, exp.Select) and node.arg_key in ("from_", "from", "joins"):
            _check_outer_joins(parent, node, name)
        node = parent


def _check_outer_joins(sel: exp.Select, item: exp.Expression, name: str) -> None:
    joins = sel.args.get("joins") or []
    pos = 0 if item.arg_key in ("from_", "from") else 1 + next(i for i, j in enumerate(joins) if j is item)
    for k, j in enumerate(joins, start=1):
        side = (j.side or "").upper()
        if side == "FULL" or (side == "LEFT" and k == pos) or (side == "RIGHT" and pos < k):
            raise _err(f'recursive reference to query "{name}" must not appear within an outer join')


def _aggregates_recursion(agg: exp.Expression, term: exp.Expression, name: str) -> bool:
    """An aggregate of the recursive term itself, not of a subquery that reads other tables."""
    node = agg
    while node is not term and node is not None:
        if isinstance(node, (exp.Subquery, exp.Exists, exp.In)) and not _refs(node, name):
            return False
        node = node.parent
    return True


def _check_linear(term: exp.Expression, union_all: bool, name: str) -> None:
    """Refuse what would make F non-linear in the recursive reference. Only the queries on the
    path from the term to the reference count: PostgreSQL keeps the reference out of nested
    subqueries, so a subquery elsewhere in the term (asyncpg's `(... ORDER BY depth DESC LIMIT
    1)` in a select list) is evaluated per row of the binding, which is linear."""
    if any(isinstance(w, exp.Window) for w in term.find_all(exp.Window)):
        raise unsupported("window functions in the recursive term of WITH RECURSIVE")
    for sel in (*term.find_all(exp.Select), *term.find_all(exp.Subquery)):
        if not _refs(sel, name):
            continue
        if sel.args.get("limit") is not None or sel.args.get("offset") is not None:
            raise unsupported("LIMIT in the recursive term of WITH RECURSIVE")
        if union_all and (sel.args.get("distinct") is not None or sel.args.get("group") is not None):
            raise unsupported("DISTINCT or GROUP BY in the recursive term of WITH RECURSIVE ... UNION ALL")
    for setop in term.find_all(exp.SetOperation):
        if _refs(setop, name):
            raise unsupported("set operations inside the recursive term of WITH RECURSIVE")


def _local_names(node: exp.Expression) -> set[str]:
    """Every FROM-item name or alias inside `node` (tables, CTE references, derived tables)."""
    names = {t.alias_or_name for t in node.find_all(exp.Table)}
    names |= {s.alias for s in node.find_all(exp.Subquery) if s.alias}
    names |= {c.alias_or_name for c in node.find_all(exp.CTE)}
    return names


def _outer_columns(node: exp.Expression, outer_scope) -> list[exp.Column]:
    """The qualified column references in `node` to a table of the enclosing query (`t.oid`
    where no FROM item inside `node` is called `t`). Unqualified ones are not found here: where
    they name an outer column, planning refuses them (0A000)."""
    local = _local_names(node)
    outer_tables = {c.table for c in outer_scope.columns if c.level >= 1 and c.table}
    return [c for c in node.find_all(exp.Column)
            if c.table and not c.args.get("db") and c.table not in local and c.table in outer_tables]


def reads_outer(cte: exp.CTE, outer_scope) -> bool:
    """Whether recursive CTE `cte` (inside a correlated subquery) reads the outer query's columns."""
    return bool(_outer_columns(cte.this, outer_scope))


def _keyed_term(term: exp.Expression, name: str, outer_scope, keys: int) -> exp.Expression:
    """The recursive term of a correlated recursive CTE, reading the outer values from the
    binding instead of the outer query: its rows carry the outer values they are for as `keys`
    extra columns (`"?k0"`, ...), the term passes them on, and an outer column `t.x` in it reads
    the binding's copy.

        SELECT t2.b, r.d + 1 FROM r, t2 WHERE t2.a = r.x AND t2.c = t.c
        -> SELECT t2.b, r.d + 1, r."?k0" FROM r, t2 WHERE t2.a = r.x AND t2.c = r."?k0"
    """
    term = term.copy()
    if not isinstance(term, exp.Select) or any(isinstance(e, exp.Star) for e in term.find_all(exp.Star)):
        raise unsupported("this form of WITH RECURSIVE inside a correlated subquery (a recursive term "
                          "that is not one SELECT, or uses *)")
    ref = _refs(term, name)[0]
    if ref.find_ancestor(exp.Select) is not term:
        raise unsupported("WITH RECURSIVE inside a correlated subquery whose recursive reference is in a derived table")
    if term.args.get("group") is not None:
        raise unsupported("GROUP BY in the recursive term of WITH RECURSIVE inside a correlated subquery")
    binding = ref.alias_or_name
    for col in _outer_columns(term, outer_scope):
        position = outer_scope.resolve(col.name, col.table)
        outer_scope.columns[position].mark_used()
        col.replace(exp.column(exp.to_identifier(key_name(position), quoted=True), table=binding))
    for k in range(keys):
        term.append("expressions", exp.column(exp.to_identifier(key_name(k), quoted=True), table=binding))
    return term


def key_name(k: int) -> str:
    return f"?k{k}"


def plan_recursive_cte(cte: exp.CTE, ctx):
    """The QueryResult of a reference to recursive CTE `cte` (its LetRec plan)."""
    from planner.lower_select import QueryResult, _alias_columns, _cast_columns, _untyped_outputs, plan_query
    from planner.scalar import coerce_all
    from dataflow.types import Column

    name = cte.alias_or_name
    body = cte.this
    if not isinstance(body, exp.Union) or not _refs(body.expression, name):
        if isinstance(body, exp.SetOperation) and _refs(body.this, name) and isinstance(body, exp.Union):
            raise _err(f'recursive reference to query "{name}" must not appear within its non-recursive term')
        raise _err(f'recursive query "{name}" does not have the form non-recursive-term UNION [ALL] recursive-term')
    if _refs(body.this, name):
        raise _err(f'recursive reference to query "{name}" must not appear within its non-recursive term')
    for key, what in (("order", "ORDER BY"), ("limit", "LIMIT"), ("offset", "OFFSET")):
        if body.args.get(key) is not None:
            raise SqlError(SqlState.FEATURE_NOT_SUPPORTED, f"{what} in a recursive query is not implemented")
    term = body.expression
    _check_recursive_term(term, name, _refs(term, name)[0])
    if any(_aggregates_recursion(a, term, name) for a in term.find_all(exp.AggFunc)):
        raise _err("aggregate functions are not allowed in a recursive query's recursive term")
    union_all = body.args.get("distinct") is False
    _check_linear(term, union_all, name)
    # Inside a correlated subquery, a CTE reading the outer query's columns is computed for
    # every outer value at once: its rows carry the outer value (`keys` columns, as every
    # correlated query's result does; planner/subqueries.py).
    outer = ctx.outer if ctx.outer is not None and not ctx.outer.blocked else None
    keys = len(outer.scope.columns) if outer is not None else 0
    if outer is not None:
        term = _keyed_term(term, name, outer.scope, keys)

    seed_ctx = ctx.with_ctes({k: v for k, v in ctx.ctes.items() if k != name})
    seed = plan_query(body.this, seed_ctx, top=False)
    assert seed.keys == keys, (seed.keys, keys)
    _, cols = _alias_columns(cte)
    if len(cols) > len(seed.columns):
        raise SqlError("42P10", f'WITH query "{name}" has {len(seed.columns)} columns available '
                                f'but {len(cols)} columns specified')
    names = tuple(cols + [c.name for c in seed.columns][len(cols):])
    types = tuple(TEXT if t.kind is TypeKind.UNKNOWN else t for t in seed.types)
    seed_plan = _cast_columns(seed, types, ctx, set()) if types != seed.types else seed.plan
    rid = f"letrec{next(_ids)}"
    key_types = tuple(c.type for c in outer.scope.columns) if outer is not None else ()
    binding = RecursiveRef(rid, names + tuple(key_name(k) for k in range(keys)), types + key_types)
    rctx = ctx.with_ctes({**ctx.ctes, name: binding})
    if outer is not None:
        rctx = replace(rctx, outer=outer.blocked_view())  # the term reads the outer values from the binding
    rec = plan_query(term, rctx, top=False)
    if keys:
        rec = QueryResult(rec.plan, rec.columns[:len(rec.columns) - keys], keys=keys)
    if len(rec.columns) != len(types):
        raise SqlError(SqlState.SYNTAX_ERROR, "each UNION query must have the same number of columns")
    untyped = _untyped_outputs(term)
    for k, (st, rc) in enumerate(zip(types, rec.columns)):
        if k in untyped:
            continue
        (_, _), t = coerce_all([Literal(None, st), Literal(None, rc.type)], ctx, "UNION")
        if t != st:
            raise SqlError("42804",
                           f'recursive query "{name}" column {k + 1} has type {st.name} in non-recursive term '
                           f'but type {t.name} overall',
                           hint="Cast the output of the non-recursive term to the correct type.")
    rec_plan = _cast_columns(rec, types, ctx, untyped)
    all_types = binding.types
    if union_all:
        plan = LetRec((rid,), (all_types,), (rec_plan,), Get(rid, all_types), seeds=(seed_plan,), names=(name,))
    else:
        plan = LetRec((rid,), (all_types,), (equality_keys.distinct(Union_((seed_plan, rec_plan)), range(len(types), len(all_types))),), Get(rid, all_types),
                      names=(name,))
    return QueryResult(plan, tuple(Column(n, t) for n, t in zip(names, types)), keys=keys)


def plan_mutually_recursive(node: exp.Query, with_: exp.With, ctx, top: bool):
    """WITH MUTUALLY RECURSIVE: the bindings' declared types, then every query with all of them
    in scope, then the main query."""
    from planner.lower_select import QueryResult, _cast_columns, _untyped_outputs, plan_query

    info = with_.args[WMR_MARK]
    ctes = list(with_.expressions)
    names = [c.alias_or_name for c in ctes]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise SqlError("42712", f'WITH query name "{dup}" specified more than once')
    types_q = plan_query(info["types"], ctx.with_ctes(dict(ctx.ctes)), top=False)
    all_types = types_q.types
    refs, pos = {}, 0
    for c, cols in zip(ctes, info["columns"]):
        ts = tuple(all_types[pos:pos + len(cols)])
        pos += len(cols)
        refs[c.alias_or_name] = RecursiveRef(f"letrec{next(_ids)}", tuple(cols), ts)
    rctx = ctx.with_ctes({**ctx.ctes, **refs})
    values = []
    for c in ctes:
        ref = refs[c.alias_or_name]
        q = plan_query(c.this, rctx, top=False)
        if len(q.columns) != len(ref.types):
            raise SqlError("42601",
                           f'WITH MUTUALLY RECURSIVE query "{c.alias_or_name}" declared {len(ref.types)} '
                           f'columns but the query returns {len(q.columns)}')
        untyped = _untyped_outputs(c.this)
        values.append(_cast_columns(q, ref.types, ctx, untyped) if q.types != ref.types else q.plan)
    body_node = node.copy()
    body_node.set("with_", None)
    body = plan_query(body_node, rctx, top=top)
    limit = info.get("limit")
    plan = LetRec(tuple(r.id for r in refs.values()), tuple(r.types for r in refs.values()), tuple(values),
                  body.plan, limit=limit, limit_return=bool(info.get("return")), names=tuple(names))
    return QueryResult(plan, body.columns, finishing=body.finishing, keys=body.keys)


def parse_mutually_recursive(text: str, toks) -> exp.Query:
    """`WITH MUTUALLY RECURSIVE [(RETURN AT | ERROR AT RECURSION LIMIT n)] name (col type, ...)
    AS (query) [, ...] query` as a sqlglot query whose WITH carries the bindings' declarations."""
    from sqlglot.tokens import TokenType

    from planner.dialect import _Cursor, parse_sqlglot, syntax_error_at

    c = _Cursor(text, toks)
    c.expect("WITH", "MUTUALLY", "RECURSIVE")
    info: dict = {"limit": None, "return": False}
    if c.peek() is not None and c.peek().token_type == TokenType.L_PAREN:
        c.expect_type(TokenType.L_PAREN)
        if c.accept("RETURN"):
            info["return"] = True
        else:
            c.expect("ERROR")
        c.expect("AT", "RECURSION", "LIMIT")
        t = c.peek()
        if t is None or t.token_type != TokenType.NUMBER or not t.text.isdigit():
            raise syntax_error_at(t)
        c.pos += 1
        info["limit"] = int(t.text)
        c.expect_type(TokenType.R_PAREN)
    ctes, columns, type_texts = [], [], []
    while True:
        name = c.ident()
        i, j = c.paren_span()
        cols = []
        # `col type, col type`: split the column list at top-level commas
        depth, start, k = 0, i, i
        end = j - 1 if c.toks[j - 1].token_type == TokenType.R_PAREN else j
        while k <= end:
            tok = c.toks[k] if k < end else None
            if tok is None or (tok.token_type == TokenType.COMMA and depth == 0):
                if k - start < 2:
                    raise syntax_error_at(tok)
                col = _Cursor(text, c.toks[start:k])
                cname = col.ident()
                cols.append((cname, c.text_of(start + 1, k)))
                start = k + 1
            elif tok.token_type == TokenType.L_PAREN:
                depth += 1
            elif tok.token_type == TokenType.R_PAREN:
                depth -= 1
            k += 1
        c.expect("AS")
        qi, qj = c.paren_span()
        qend = qj - 1 if c.toks[qj - 1].token_type == TokenType.R_PAREN else qj
        query = parse_sqlglot(c.text_of(qi, qend))
        ctes.append(exp.CTE(this=query, alias=exp.TableAlias(
            this=exp.to_identifier(name), columns=[exp.to_identifier(n) for n, _ in cols])))
        columns.append(tuple(n for n, _ in cols))
        type_texts.extend(t for _, t in cols)
        if not c.accept_type(TokenType.COMMA):
            break
    if c.at_end():
        raise syntax_error_at(None)
    main = parse_sqlglot(c.text_of(c.pos, len(c.toks)))
    if not isinstance(main, exp.Query) or main.args.get("with_") is not None:
        raise syntax_error_at(c.peek())
    info["columns"] = columns
    info["types"] = parse_sqlglot("SELECT " + ", ".join(f"CAST(NULL AS {t})" for t in type_texts))
    with_ = exp.With(expressions=ctes, recursive=True)
    with_.set(WMR_MARK, info)
    main.set("with_", with_)
    return main
