"""Rule: cheaper operators over inputs that only ever gain rows.

A source that never deletes (a webhook source, a load generator's growing output, each without
a RETENTION WINDOW) is read by a `Get` marked `append_only`. Its rows only arrive, so every
collection computed from it by row-wise operators and joins only gains rows too (it is
*monotonic*, in Materialize's words). Two operators over a monotonic input need not keep their
whole input to answer retractions that cannot come:

* `Reduce` with min/max keeps each group's current extremum only, not every value it saw;
* `TopK` with a LIMIT keeps each group's first offset+limit rows only, not the whole group.

    SELECT auction_id, max(amount) FROM bids GROUP BY auction_id        -- bids: append-only
    Reduce(Get(bids, append_only=True), (1,), (max(#3),))
      -> Reduce(Get(bids, append_only=True), (1,), (max(#3),), monotonic=True)

What is monotonic: an append-only Get, a Constant, Map/Filter/Project/FlatMap of a monotonic
input (not a temporal filter: `mz_now()` retracts rows when their time passes), a Join of two,
a Union of monotonic inputs. Not: anything with Negate (EXCEPT, outer joins' unmatched rows),
the output of Reduce, Distinct, Threshold, TopK, Window (they retract old results), recursive
bindings. The operators check what they were promised: a retraction
reaching one fails the dataflow (an internal error) instead of giving a wrong answer.
"""

from __future__ import annotations

from dataclasses import replace

from dataflow.operators.temporal import mentions_mz_now
from dataflow.plan import Constant, FlatMap, Filter, Get, Join, Map, Plan, Project, Reduce, TopK, Union_
from planner.rules.rewrite import rewrite_up

_ROW_WISE = (Map, Filter, Project, FlatMap)


def use_monotonic_operators(plan: Plan) -> Plan:
    """`plan` with each Reduce and TopK over a monotonic input marked `monotonic`."""
    monotonic: dict[int, bool] = {}  # by id of the nodes rule returns (rewrite_up keeps them)

    def rule(node: Plan) -> Plan:
        if isinstance(node, (Reduce, TopK)) and not node.monotonic and monotonic.get(id(node.input), False):
            if isinstance(node, Reduce) or node.limit is not None:
                node = replace(node, monotonic=True)
        monotonic[id(node)] = _grows_only(node, monotonic)
        return node

    return rewrite_up(plan, rule)


def _grows_only(node: Plan, monotonic: dict[int, bool]) -> bool:
    if isinstance(node, Get):
        return node.append_only
    if isinstance(node, Constant):
        return True
    if isinstance(node, Filter) and any(mentions_mz_now(p) for p in node.predicates):
        return False  # a temporal filter retracts rows when their time passes
    if isinstance(node, _ROW_WISE):
        return monotonic.get(id(node.input), False)
    if isinstance(node, Join):
        return monotonic.get(id(node.left), False) and monotonic.get(id(node.right), False)
    if isinstance(node, Union_):
        return all(monotonic.get(id(i), False) for i in node.inputs)
    return False

