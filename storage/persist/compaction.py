"""Which batches to merge: a geometric (LSM-style) plan over the shard's ordered batches.

Walking from oldest to newest with a stack, a batch merges into its older neighbour while that
neighbour is no more than twice its size; sizes therefore fall geometrically from old to new and a
shard with N updates keeps O(log N) batches. If more than `max_batches` remain, the cheapest
adjacent pairs merge too. Merging also advances times to `since` and consolidates, which is what
keeps an upsert-like collection proportional to its live keys.

>>> plan_merges([100, 10, 10, 1])
[(1, 3)]
>>> plan_merges([1, 1, 1, 1])
[(0, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_MAX_BATCHES = 8


def plan_merges(rows: Sequence[int], max_batches: int = DEFAULT_MAX_BATCHES) -> list[tuple[int, int]]:
    """Runs [start, end) of adjacent batches (by index) to merge, each of length >= 2."""
    stack: list[list[int]] = []  # [start, end, rows]
    for i, n in enumerate(rows):
        stack.append([i, i + 1, n])
        while len(stack) >= 2 and stack[-2][2] <= 2 * stack[-1][2]:
            top = stack.pop()
            stack[-1][1], stack[-1][2] = top[1], stack[-1][2] + top[2]
    while len(stack) > max_batches:
        j = min(range(len(stack) - 1), key=lambda k: stack[k][2] + stack[k + 1][2])
        nxt = stack.pop(j + 1)
        stack[j][1], stack[j][2] = nxt[1], stack[j][2] + nxt[2]
    return [(s, e) for s, e, _ in stack if e - s >= 2]
