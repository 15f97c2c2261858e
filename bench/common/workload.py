"""The reference workload (shared/BENCHMARK-WORKLOAD.md): orders, customers, a change stream,
and the ground truth of the two views. Deterministic (fixed seed) and vectorised with NumPy.

    >>> w = generate_base(1_000)
    >>> w.customers().num_rows, w.orders().num_rows
    (100, 1000)
    >>> s = generate_changes(w, 100)
    >>> b = s.batch(0, 10)            # the first 10 changes as (old rows out, new rows in)
    >>> b.deletes.num_rows + b.inserts.num_rows >= 10
    True
    >>> final = s.final_orders()      # orders after all 100 changes
    >>> v1 = ground_truth_v1(w, final); v2 = ground_truth_v2(final)
    >>> sorted(v1.columns), int(v2["count"].sum()) == final.num_rows
    (['count', 'region', 'sum'], True)

Tables (ids start at 1):
- customers(id int8, region text): n/10 rows, region drawn uniformly from 10 names.
- orders(id int8, customer_id int8, amount int8 in 100..99999, status text):
  status captured 60 % / pending 30 % / refunded 10 %, customer uniform.

Changes touch orders only: 60 % inserts of new ids (n+1, n+2, ...), 30 % updates of an existing
base order (customer kept, amount always changes, status redrawn), 10 % deletes; no base row is
touched twice, so a prefix of k changes can be applied as one (deletes, inserts) pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

SEED = 20240601
REGIONS = ("north", "south", "east", "west", "central", "northeast", "northwest", "southeast",
           "southwest", "islands")
STATUSES = ("captured", "pending", "refunded")
STATUS_P = (0.6, 0.3, 0.1)
AMOUNT_LO, AMOUNT_HI = 100, 99_999  # inclusive
INSERT, UPDATE, DELETE = 0, 1, 2
KIND_P = (0.6, 0.3, 0.1)

SIZES = {"100k": 100_000, "1M": 1_000_000, "10M": 10_000_000}

CUSTOMERS_DDL = "CREATE TABLE customers (id bigint, region text)"
ORDERS_DDL = "CREATE TABLE orders (id bigint, customer_id bigint, amount bigint, status text)"
V1_SQL = ("SELECT c.region, count(*), sum(o.amount) FROM orders o JOIN customers c "
          "ON o.customer_id = c.id WHERE o.status = 'captured' GROUP BY c.region")
V2_SQL = "SELECT customer_id, count(*), sum(amount) FROM orders GROUP BY customer_id"

CUSTOMERS_SCHEMA = pa.schema([("id", pa.int64()), ("region", pa.string())])
ORDERS_SCHEMA = pa.schema([("id", pa.int64()), ("customer_id", pa.int64()), ("amount", pa.int64()),
                           ("status", pa.string())])

_REGION_NAMES = pa.array(REGIONS, pa.string())
_STATUS_NAMES = pa.array(STATUSES, pa.string())


def parse_size(text: str) -> int:
    """'100k' / '1M' / '10M' / '2500' -> number of orders."""
    t = text.strip()
    mult = {"k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if mult != 1 else t) * mult)


def size_label(n: int) -> str:
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


@dataclass(frozen=True)
class OrderColumns:
    """Orders as NumPy columns; status as codes into STATUSES."""

    id: np.ndarray
    customer_id: np.ndarray
    amount: np.ndarray
    status: np.ndarray  # int8 codes

    def __len__(self) -> int:
        return len(self.id)

    def take(self, idx: np.ndarray) -> "OrderColumns":
        return OrderColumns(self.id[idx], self.customer_id[idx], self.amount[idx], self.status[idx])

    def to_arrow(self) -> pa.Table:
        status = pc.take(_STATUS_NAMES, pa.array(self.status.astype(np.int32)))
        return pa.Table.from_arrays([pa.array(self.id), pa.array(self.customer_id), pa.array(self.amount),
                                     status], schema=ORDERS_SCHEMA)


def _concat_orders(parts: list[OrderColumns]) -> OrderColumns:
    return OrderColumns(*(np.concatenate([getattr(p, f) for p in parts])
                          for f in ("id", "customer_id", "amount", "status")))


@dataclass(frozen=True)
class Workload:
    """The base tables of one size."""

    n_orders: int
    customer_region: np.ndarray  # region code of customer id i at index i-1
    base: OrderColumns
    seed: int

    @property
    def n_customers(self) -> int:
        return len(self.customer_region)

    def customers(self) -> pa.Table:
        ids = np.arange(1, self.n_customers + 1, dtype=np.int64)
        region = pc.take(_REGION_NAMES, pa.array(self.customer_region.astype(np.int32)))
        return pa.Table.from_arrays([pa.array(ids), region], schema=CUSTOMERS_SCHEMA)

    def orders(self) -> pa.Table:
        return self.base.to_arrow()


def generate_base(n_orders: int, seed: int = SEED) -> Workload:
    rng = np.random.default_rng(seed)
    n_cust = max(1, n_orders // 10)
    region = rng.integers(0, len(REGIONS), n_cust, dtype=np.int8)
    base = OrderColumns(
        id=np.arange(1, n_orders + 1, dtype=np.int64),
        customer_id=rng.integers(1, n_cust + 1, n_orders, dtype=np.int64),
        amount=rng.integers(AMOUNT_LO, AMOUNT_HI + 1, n_orders, dtype=np.int64),
        status=rng.choice(len(STATUSES), n_orders, p=STATUS_P).astype(np.int8),
    )
    return Workload(n_orders, region, base, seed)


@dataclass(frozen=True)
class ChangeBatch:
    """A group of changes as rows to remove (old versions) and rows to add (new versions).
    An update appears in both, with the same id."""

    deletes: pa.Table
    inserts: pa.Table

    @property
    def size(self) -> int:
        """Changes in the batch: an update counts once."""
        return self.inserts.num_rows + self.deletes.num_rows - _common_ids(self)


def _common_ids(b: ChangeBatch) -> int:
    if b.deletes.num_rows == 0 or b.inserts.num_rows == 0:
        return 0
    return int(np.isin(b.deletes["id"].to_numpy(), b.inserts["id"].to_numpy()).sum())


@dataclass(frozen=True)
class ChangeStream:
    """n changes, change i having kind[i]; `old` holds the pre-image (updates, deletes) and `new`
    the post-image (inserts, updates), both indexed by change number (unused slots are junk)."""

    workload: Workload
    kind: np.ndarray
    old: OrderColumns
    new: OrderColumns

    def __len__(self) -> int:
        return len(self.kind)

    def batch(self, start: int, size: int) -> ChangeBatch:
        """Changes start..start+size-1 (in stream order)."""
        k = self.kind[start:start + size]
        out = np.flatnonzero(k != INSERT) + start
        into = np.flatnonzero(k != DELETE) + start
        return ChangeBatch(self.old.take(out).to_arrow(), self.new.take(into).to_arrow())

    def batches(self, size: int, limit: int | None = None):
        """Consecutive batches of `size` changes (at most `limit` of them)."""
        count = len(self) // size if limit is None else min(limit, len(self) // size)
        for i in range(count):
            yield self.batch(i * size, size)

    def final_order_columns(self, upto: int | None = None) -> OrderColumns:
        """Orders after the first `upto` changes (all by default)."""
        upto = len(self) if upto is None else upto
        k = self.kind[:upto]
        base = self.workload.base
        gone = self.old.id[:upto][k != INSERT]
        keep = np.ones(len(base), dtype=bool)
        keep[gone - 1] = False  # base ids are 1..n
        added = self.new.take(np.flatnonzero(k != DELETE))
        return _concat_orders([base.take(np.flatnonzero(keep)), added])

    def final_orders(self, upto: int | None = None) -> pa.Table:
        return self.final_order_columns(upto).to_arrow()


def generate_changes(workload: Workload, n_changes: int, seed: int | None = None) -> ChangeStream:
    """A deterministic stream of n_changes changes over `workload`'s orders."""
    rng = np.random.default_rng((workload.seed if seed is None else seed) + 1)
    kind = rng.choice(3, n_changes, p=KIND_P).astype(np.int8)
    touched = np.flatnonzero(kind != INSERT)
    base = workload.base
    if len(touched) > len(base):
        raise ValueError(f"{n_changes} changes would touch {len(touched)} base rows; only {len(base)} exist")
    # Distinct base rows, each touched once.
    victims = rng.choice(len(base), len(touched), replace=False)
    n = n_changes
    old = OrderColumns(np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
                       np.zeros(n, np.int8))
    for f in ("id", "customer_id", "amount", "status"):
        getattr(old, f)[touched] = getattr(base, f)[victims]
    ins = np.flatnonzero(kind == INSERT)
    upd = np.flatnonzero(kind == UPDATE)
    new = OrderColumns(old.id.copy(), old.customer_id.copy(), np.zeros(n, np.int64),
                       rng.choice(len(STATUSES), n, p=STATUS_P).astype(np.int8))
    new.id[ins] = workload.n_orders + 1 + np.arange(len(ins), dtype=np.int64)
    new.customer_id[ins] = rng.integers(1, workload.n_customers + 1, len(ins), dtype=np.int64)
    new.amount[ins] = rng.integers(AMOUNT_LO, AMOUNT_HI + 1, len(ins), dtype=np.int64)
    # An update always changes the amount: shift by 1..span-1 around the range.
    span = AMOUNT_HI - AMOUNT_LO + 1
    shift = rng.integers(1, span, len(upd), dtype=np.int64)
    new.amount[upd] = AMOUNT_LO + (old.amount[upd] - AMOUNT_LO + shift) % span
    return ChangeStream(workload, kind, old, new)


# ---------------------------------------------------------------------------------------------
# Ground truth


def ground_truth_v1(workload: Workload, orders: pa.Table | OrderColumns) -> pd.DataFrame:
    """V1 (region, count, sum) over captured orders, sorted by region; groups with no rows absent."""
    o = _as_columns(orders)
    captured = o.status == STATUSES.index("captured")
    region = workload.customer_region[o.customer_id[captured] - 1]
    counts = np.bincount(region, minlength=len(REGIONS))
    sums = np.bincount(region, weights=o.amount[captured], minlength=len(REGIONS))
    present = np.flatnonzero(counts)
    df = pd.DataFrame({"region": [REGIONS[i] for i in present], "count": counts[present].astype(np.int64),
                       "sum": sums[present].astype(np.int64)})
    return df.sort_values("region", ignore_index=True)


def ground_truth_v2(orders: pa.Table | OrderColumns) -> pd.DataFrame:
    """V2 (customer_id, count, sum), sorted by customer_id."""
    o = _as_columns(orders)
    counts = np.bincount(o.customer_id)
    sums = np.bincount(o.customer_id, weights=o.amount)  # float64 is exact below 2**53
    present = np.flatnonzero(counts)
    return pd.DataFrame({"customer_id": present.astype(np.int64), "count": counts[present].astype(np.int64),
                         "sum": sums[present].astype(np.int64)})


def _as_columns(orders: pa.Table | OrderColumns) -> OrderColumns:
    if isinstance(orders, OrderColumns):
        return orders
    status = pc.index_in(orders["status"], value_set=_STATUS_NAMES)
    return OrderColumns(orders["id"].to_numpy(), orders["customer_id"].to_numpy(), orders["amount"].to_numpy(),
                        status.to_numpy().astype(np.int8))


def frame_matches(actual: pd.DataFrame, expected: pd.DataFrame) -> bool:
    """Same rows regardless of order and column names (positional), integer-exact."""
    if actual.shape != expected.shape:
        return False
    a = actual.copy(); a.columns = expected.columns
    key = list(expected.columns[:1])
    a = a.sort_values(key, ignore_index=True)
    e = expected.sort_values(key, ignore_index=True)
    return all((a[c].astype(e[c].dtype).to_numpy() == e[c].to_numpy()).all() for c in e.columns)
