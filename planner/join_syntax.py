"""FROM lists grouped as PostgreSQL's grammar groups them, right after parsing.

sqlglot reads a join without a condition as a cross join and nests the following joins into
its right side only in some cases; PostgreSQL's grammar (gram.y, `joined_table`) decides:

* `JOIN`, `INNER/LEFT/RIGHT/FULL [OUTER] JOIN` need `ON` or `USING`; `CROSS JOIN` and
  `NATURAL ... JOIN` take none. Joins are left-associative: `a JOIN b ON p JOIN c ON q` is
  `(a JOIN b ON p) JOIN c ON q`.
* A join still waiting for its condition takes the joins that follow into its right side, and
  an `ON`/`USING` belongs to the nearest join waiting for one: `a JOIN b JOIN c ON x ON y` is
  `a JOIN (b JOIN c ON x) ON y`, `a JOIN b CROSS JOIN c ON x` is `a JOIN (b CROSS JOIN c) ON x`.
* The comma binds loosest. A join left without its condition (`a JOIN b`, `a JOIN b, c`) and a
  condition no join waits for (`a CROSS JOIN b ON x`) are syntax errors (42601).

`normalize` flattens sqlglot's FROM lists back into the order they were written (relations,
join keywords, conditions, commas), reads them by those rules and writes them back in the form
the planner reads: a left-deep `Select.joins` list per comma-separated chain, and a join nested
on a right side as a parenthesised join (`exp.Subquery` around a relation carrying `joins`).

>>> from sqlglot import parse_one
>>> normalize(parse_one("SELECT * FROM a JOIN b CROSS JOIN c ON x", read="postgres"), "").sql()
'SELECT * FROM a JOIN (b CROSS JOIN c) ON x'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dataflow.errors import SqlError, SqlState


@dataclass
class _JoinWord:
    join: exp.Join           # sqlglot's node: side, kind, method

    @property
    def needs_condition(self) -> bool:
        kind = (self.join.args.get("kind") or "").upper()
        return kind != "CROSS" and not self.join.args.get("method")


@dataclass
class _Condition:
    on: exp.Expression | None
    using: list | None


@dataclass
class _Rel:
    node: exp.Expression


class _Comma:
    pass


def normalize(tree: exp.Expression, text: str) -> exp.Expression:
    if not tree.find(exp.Join):
        return tree
    for sel in list(tree.find_all(exp.Select)):
        from_ = sel.args.get("from_")
        if from_ is None or not isinstance(from_, exp.From):
            continue
        words: list[Any] = []
        _flatten_rel(from_.this, words, text)
        for j in sel.args.get("joins") or []:
            _flatten_join(j, words, text)
        first, joins = _read(words, text)
        from_.set("this", first)
        sel.set("joins", joins or None)
    return tree


def _is_comma(j: exp.Join) -> bool:
    # sqlglot builds `, b` as a bare Join(this=b); a `JOIN b` (even without a condition) also
    # carries the `pivots` slot of its JOIN branch.
    return "pivots" not in j.args and not any(
        j.args.get(k) for k in ("side", "kind", "on", "using", "method"))


def _flatten_rel(node: exp.Expression, out: list, text: str) -> None:
    nested = node.args.get("joins")
    if nested:
        node.set("joins", None)
    out.append(_Rel(_normalize_group(node, text)))
    for j in nested or []:
        _flatten_join(j, out, text)


def _flatten_join(j: exp.Join, out: list, text: str) -> None:
    if _is_comma(j):
        out.append(_Comma())
        _flatten_rel(j.this, out, text)
        return
    out.append(_JoinWord(j))
    _flatten_rel(j.this, out, text)
    if j.args.get("on") is not None or j.args.get("using"):
        out.append(_Condition(j.args.get("on"), j.args.get("using")))


def _normalize_group(node: exp.Expression, text: str) -> exp.Expression:
    """A parenthesised join `(b JOIN c ON x)` (a Subquery around a relation carrying joins):
    its inside is read by the same rules."""
    if isinstance(node, exp.Subquery) and not _is_query(node.this):
        inner = node.this
        words: list[Any] = []
        _flatten_rel(inner, words, text)
        first, joins = _read(words, text)
        if joins:
            first.set("joins", joins)
        node.set("this", first)
    return node


def _is_query(node: exp.Expression) -> bool:
    while isinstance(node, exp.Subquery):
        node = node.this
    return isinstance(node, exp.Query)


def _read(words: list, text: str) -> tuple[exp.Expression, list[exp.Join]]:
    """The FROM list's words by PostgreSQL's rules: the first relation and the left-deep list
    of joins (commas as sqlglot's bare joins)."""
    pos = 0

    def peek():
        return words[pos] if pos < len(words) else None

    def relation():
        nonlocal pos
        w = peek()
        if not isinstance(w, _Rel):
            raise _syntax_error(w, words, pos, text)
        pos += 1
        return w.node

    def join_step(left):
        nonlocal pos
        word = words[pos]
        pos += 1
        right = relation()
        if not word.needs_condition:
            return (word, left, right, None)
        while isinstance(peek(), _JoinWord):
            right = join_step(right)
        cond = peek()
        if not isinstance(cond, _Condition):
            raise _syntax_error(cond, words, pos, text)
        pos += 1
        return (word, left, right, cond)

    def chain():
        left = relation()
        while isinstance(peek(), _JoinWord):
            left = join_step(left)
        return left

    chains = [chain()]
    while isinstance(peek(), _Comma):
        pos += 1
        chains.append(chain())
    if pos < len(words):
        raise _syntax_error(peek(), words, pos, text)
    first, joins = _unwind(chains[0])
    for c in chains[1:]:
        f, js = _unwind(c)
        joins.append(exp.Join(this=f))
        joins.extend(js)
    return first, joins


def _unwind(tree) -> tuple[exp.Expression, list[exp.Join]]:
    joins = []
    while isinstance(tree, tuple):
        word, left, right, cond = tree
        joins.append(_join(word, _as_relation(right), cond))
        tree = left
    joins.reverse()
    return tree, joins


def _as_relation(tree) -> exp.Expression:
    if not isinstance(tree, tuple):
        return tree
    first, joins = _unwind(tree)
    first.set("joins", joins)
    return exp.Subquery(this=first)


def _join(word: _JoinWord, right: exp.Expression, cond: _Condition | None) -> exp.Join:
    args = {k: v for k, v in word.join.args.items()
            if k in ("side", "kind", "method", "global_", "hint") and v}
    j = exp.Join(this=right, **args)
    j.set("pivots", None)
    if cond is not None:
        if cond.on is not None:
            j.set("on", cond.on)
        if cond.using:
            j.set("using", cond.using)
    return j


# ---- PostgreSQL's message: the token the grammar stopped at ----------------------------------

def _syntax_error(word, words: list, pos: int, text: str) -> SqlError:
    near = _near(word, words, pos, text)
    if near is None:
        return SqlError(SqlState.SYNTAX_ERROR, "syntax error at end of input")
    return SqlError(SqlState.SYNTAX_ERROR, f'syntax error at or near "{near}"')


def _near(word, words: list, pos: int, text: str) -> str | None:
    """The text of the first token after what was read (words[:pos]): the next word's first
    token, or, past the FROM list, the token after its last relation."""
    from planner.dialect import tokenize
    try:
        toks = tokenize(text)
    except SqlError:
        return None
    if isinstance(word, _Condition):
        lo = _span(word.on if word.on is not None else word.using)[0]
        before = [t for t in toks if t.start < lo and t.text.upper() in ("ON", "USING")] if lo is not None else []
        return _word(before[-1], text) if before else ("ON" if word.on is not None else "USING")
    if isinstance(word, _Comma):
        return ","
    # Past the last relation read: skip its closing parentheses.
    last = next((w for w in reversed(words[:pos]) if isinstance(w, _Rel)), None)
    if last is None:
        return None
    hi = _span(last.node)[1]
    if hi is None:
        return None
    closing = 0
    node = last.node
    while isinstance(node, exp.Subquery) and not node.args.get("alias"):
        closing += 1
        node = node.this
    after = [t for t in toks if t.start > hi]
    while closing and after and after[0].text == ")":
        after.pop(0)
        closing -= 1
    return _word(after[0], text) if after else None


def _word(tok, text: str) -> str:
    """A token as written (sqlglot joins `ORDER BY` into one token; PostgreSQL names `order`)."""
    written = text[tok.start: tok.end + 1]
    return written.split()[0] if written.strip() else tok.text


def _span(node) -> tuple[int | None, int | None]:
    nodes = node if isinstance(node, list) else [node]
    starts, ends = [], []
    for n in nodes:
        for x in n.walk():
            start = x.meta_get("start")
            if start is not None:
                starts.append(start)
                ends.append(x.meta_get("end"))
    return (min(starts) if starts else None, max(ends) if ends else None)
