"""Rule: order a chain of inner joins so that relations indexed on their join key come in as a
join's base input on that key, where the join reads the index in place.

The planner joins in written order, connected relations first (`lower_select._join_order`), as a
left-deep chain: only the first join's inputs and each later join's right input are relations;
everything else is the running result. An index on a relation joined in the middle of the chain
helps only if that relation enters as a base input joined on exactly the index's key
(`shared_arrangements`). Given the indexes a plan may read, this rule re-orders the chain so
that as many joins as possible read an index, and keeps the written order when no order reads
more (the answer is the same whatever the order: inner joins commute).

Example, TPC-H Q3 with indexes on customer (c_custkey) and orders (o_orderkey):

    customer ⋈ orders ON c_custkey = o_custkey, then ⋈ lineitem ON o_orderkey = l_orderkey
      (customer's index is read; orders is inside the running result: its index is not)
  ->  lineitem ⋈ orders ON l_orderkey = o_orderkey, then ⋈ customer ON o_custkey = c_custkey
      (both indexes read in place: neither relation is arranged again)

A chain is flattened through the Projects and Filters between its joins into relations, the
equalities that were join keys, and the other conditions; it is rebuilt left-deep in the new
order, each condition placed after the first join that has all its columns (a condition that
reads mz_now() after the last), each running result narrowed to the columns still needed,
and a final Project restores the chain's output columns. Sub-plans that several parents read
are not entered (they stay one shared node), nor are recursive bindings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from dataflow.expr import ScalarExpr, columns_used
from dataflow.plan import Filter, Join, LetRec, Plan, Project, children, output_types, with_children
from planner.rules.prune_columns import remap_expr
from planner.rules.rewrite import parent_counts

# The key tuples (in a relation's own columns) an index can serve it on, for a chain's relation.
IndexKeys = Callable[[Plan], list[tuple[int, ...]]]
MAX_RELATIONS = 12  # orders are searched greedily from each start: quadratic, kept small


@dataclass
class JoinChain:
    """A flattened join chain. Every column of every relation has a global id (relations' columns
    side by side, in flattening order)."""

    relations: list[Plan] = field(default_factory=list)
    first_column: list[int] = field(default_factory=list)   # global id of each relation's column 0
    widths: list[int] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)   # equal columns (join keys)
    conditions: list[ScalarExpr] = field(default_factory=list)   # over global ids
    joins: list[Join] = field(default_factory=list)             # the chain's joins, as written
    interior: set[int] = field(default_factory=set)   # ids of its nodes that are not relations

    def add(self, plan: Plan) -> list[int]:
        self.first_column.append(self.first_column[-1] + self.widths[-1] if self.relations else 0)
        self.widths.append(len(output_types(plan)))
        self.relations.append(plan)
        return self.columns(len(self.relations) - 1)

    def columns(self, r: int) -> list[int]:
        """Relation r's columns, as global ids."""
        return list(range(self.first_column[r], self.first_column[r] + self.widths[r]))

    def owner(self, column: int) -> int:
        for r in range(len(self.relations) - 1, -1, -1):
            if column >= self.first_column[r]:
                return r
        raise ValueError(column)


def order_joins_for_indexes(plan: Plan, index_keys: IndexKeys) -> Plan:
    """`plan` with each join chain re-ordered to read more indexes, where an order does."""
    return rewrite_chains(plan, lambda node, parents, visit: _reorder(node, parents, index_keys, visit))


# (node, parent counts, visit) -> the node's replacement, or None to keep it and visit its inputs
ChainRewrite = Callable[[Plan, dict[int, int], Callable[[Plan], Plan]], "Plan | None"]


def rewrite_chains(plan: Plan, rewrite: ChainRewrite) -> Plan:
    """`plan` with `rewrite` applied to every node from the top (a node it replaces is not
    entered: the rewrite visits what it keeps), each node object once so shared sub-plans stay
    shared, never inside recursive bindings."""
    parents = parent_counts(plan)
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        key = id(node)
        if key not in done:
            result = None if isinstance(node, LetRec) else rewrite(node, parents, visit)
            if result is None and not isinstance(node, LetRec):
                kids = children(node)
                new = tuple(visit(k) for k in kids)
                result = with_children(node, new) if any(a is not b for a, b in zip(kids, new)) else node
            done[key] = node if result is None else result
        return done[key]

    return visit(plan)


def leads_to_join(node: Plan) -> bool:
    while isinstance(node, (Project, Filter)):
        node = node.input
    return isinstance(node, Join)


def flatten_chain(node: Plan, chain: JoinChain, parents: dict[int, int], top: bool) -> list[int]:
    """Add `node`'s relations to `chain`; return its output columns as global ids."""
    interior = top or parents.get(id(node), 0) <= 1
    if interior and isinstance(node, Join):
        chain.joins.append(node)
        chain.interior.add(id(node))
        left = flatten_chain(node.left, chain, parents, False)
        right = flatten_chain(node.right, chain, parents, False)
        chain.edges.extend((left[a], right[b]) for a, b in zip(node.left_key, node.right_key))
        return left + right
    if interior and isinstance(node, (Filter, Project)) and leads_to_join(node.input):
        chain.interior.add(id(node))
        cols = flatten_chain(node.input, chain, parents, False)
        if isinstance(node, Project):
            return [cols[c] for c in node.columns]
        mapping = dict(enumerate(cols))
        chain.conditions.extend(remap_expr(p, mapping) for p in node.predicates)
        return cols
    return chain.add(node)


def chain_at(node: Plan, parents: dict[int, int]) -> tuple[JoinChain, list[int]] | None:
    """The join chain `node` tops (and its output columns as global ids), when it joins three
    to MAX_RELATIONS relations."""
    if not leads_to_join(node):
        return None
    chain = JoinChain()
    output = flatten_chain(node, chain, parents, True)
    if not 3 <= len(chain.relations) <= MAX_RELATIONS:
        return None
    return chain, output


def _reorder(node: Plan, parents: dict[int, int], index_keys: IndexKeys,
             visit: Callable[[Plan], Plan]) -> Plan | None:
    found = chain_at(node, parents)
    if found is None:
        return None
    chain, output = found
    n = len(chain.relations)
    servable = [index_keys(r) for r in chain.relations]
    written = list(range(n))
    best, best_score = written, _score(chain, written, servable)
    for start in range(n):
        order = _greedy(chain, start, servable)
        score = _score(chain, order, servable)
        if score > best_score:
            best, best_score = order, score
    if best == written:
        return None
    relations = [visit(r) for r in chain.relations]
    return _build(chain, best, relations, output, servable)


def key_pairs(chain: JoinChain, joined: set[int], r: int) -> list[tuple[int, int]]:
    """(global id on the joined side, local column of relation r) of every equality between
    the relations in `joined` and relation r, in the order they were written."""
    pairs = []
    for a, b in chain.edges:
        oa, ob = chain.owner(a), chain.owner(b)
        if oa in joined and ob == r:
            pairs.append((a, b - chain.first_column[r]))
        elif ob in joined and oa == r:
            pairs.append((b, a - chain.first_column[r]))
    return pairs


def served_key(pairs: list[tuple[int, int]], keys: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The index key (local columns) these join key pairs can be put in the order of, if any."""
    local = [c for _, c in pairs]
    for key in keys:
        if len(key) == len(local) and sorted(key) == sorted(local):
            return key
    return None


def served_pairs(pairs: list[tuple[int, int]], keys: list[tuple[int, ...]]) -> list[tuple[int, int]] | None:
    """The join key pairs in the order of the index key that serves them, if one does."""
    key = served_key(pairs, keys)
    if key is None:
        return None
    by_local = {b: (a, b) for a, b in pairs}
    return [by_local[k] for k in key]


def _join_keys(chain: JoinChain, order: list[int], step: int, joined: set[int],
               servable: list[list[tuple[int, ...]]]) -> tuple[list[tuple[int, int]], bool]:
    """The key pairs of the join adding relation order[step + 1] to `joined`, put in the order
    of an index that serves them, and whether one does: the added relation's, else (the first
    join) its left input's. A join reads at most one index in place."""
    first, r = order[0], order[step + 1]
    pairs = key_pairs(chain, joined, r)
    served = served_pairs(pairs, servable[r])
    if served is not None:
        return served, True
    if step == 0:
        back = [(b + chain.first_column[r], a - chain.first_column[first]) for a, b in pairs]
        left_key = served_key(back, servable[first])
        if left_key is not None:
            by_left = {a - chain.first_column[first]: (a, b) for a, b in pairs}
            return [by_left[k] for k in left_key], True
    return pairs, False


def _score(chain: JoinChain, order: list[int], servable: list[list[tuple[int, ...]]]) -> int:
    """How many joins of the left-deep chain in `order` read an index in place."""
    score, joined = 0, {order[0]}
    for step, r in enumerate(order[1:]):
        score += _join_keys(chain, order, step, joined, servable)[1]
        joined.add(r)
    return score


def _greedy(chain: JoinChain, start: int, servable: list[list[tuple[int, ...]]]) -> list[int]:
    """An order from `start`: next, a connected relation whose index serves its join key, else
    any connected one, else (a cross product) the first left; ties in written order."""
    order, joined = [start], {start}
    rest = [r for r in range(len(chain.relations)) if r != start]
    while rest:
        connected = [r for r in rest if key_pairs(chain, joined, r)]
        served = [r for r in connected if served_key(key_pairs(chain, joined, r), servable[r]) is not None]
        nxt = (served or connected or rest)[0]
        order.append(nxt)
        joined.add(nxt)
        rest.remove(nxt)
    return order


def _build(chain: JoinChain, order: list[int], relations: list[Plan], output: list[int],
           servable: list[list[tuple[int, ...]]]) -> Plan:
    pending = [c for c in chain.conditions if "mz_now" not in repr(c)]
    last = [c for c in chain.conditions if "mz_now" in repr(c)]

    def place(plan: Plan, cols: list[int]) -> Plan:
        ready = [c for c in pending if columns_used(c) <= set(cols)]
        if not ready:
            return plan
        for c in ready:
            pending.remove(c)
        position = {g: i for i, g in enumerate(cols)}
        return Filter(plan, tuple(remap_expr(c, position) for c in ready))

    first = order[0]
    cols = chain.columns(first)
    acc = place(relations[first], cols)
    joined = {first}
    for step, r in enumerate(order[1:]):
        pairs, _ = _join_keys(chain, order, step, joined, servable)
        position = {g: i for i, g in enumerate(cols)}
        acc = Join(acc, relations[r], tuple(position[a] for a, _ in pairs), tuple(b for _, b in pairs))
        cols = cols + chain.columns(r)
        joined.add(r)
        acc = place(acc, cols)
        acc, cols = _narrow(acc, cols, chain, joined, output, pending + last)
    position = {g: i for i, g in enumerate(cols)}
    if last:
        acc = Filter(acc, tuple(remap_expr(c, position) for c in last))
    columns = tuple(position[g] for g in output)
    if isinstance(acc, Project):  # (the last narrowing and the output order, as one)
        return Project(acc.input, tuple(acc.columns[c] for c in columns))
    return Project(acc, columns)


def _narrow(acc: Plan, cols: list[int], chain: JoinChain, joined: set[int], output: list[int],
            unplaced: list[ScalarExpr]) -> tuple[Plan, list[int]]:
    """Drop the running result's columns nothing later reads (the chain's output, the keys of
    joins to come, conditions not yet placed)."""
    needed = set(output)
    for c in unplaced:
        needed |= columns_used(c)
    for a, b in chain.edges:
        if (chain.owner(a) in joined) != (chain.owner(b) in joined):
            needed |= {a, b}
    keep = [i for i, g in enumerate(cols) if g in needed]
    if len(keep) == len(cols):
        return acc, cols
    return Project(acc, tuple(keep)), [cols[i] for i in keep]
