"""TPC-H data for the live-view test and benchmark: the schema, `tpchgen-cli` output loaded with
COPY FROM STDIN (into Slipstream and into PostgreSQL alike), and deterministic refresh sets.

Refresh functions (TPC-H clause 2.5): RF1 inserts new orders with fresh order keys and 1-7
lineitems each; RF2 deletes existing orders and their lineitems. Each touches about 0.1 % of the
orders (SF * 1500). The sets are generated here from a seeded RNG over the loaded data, with the
value rules of clause 4.2.3 (prices from the part's retail price, dates from the order date,
return flag and line status from the 1995-06-17 "current date", order status from its lines).
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]

SCHEMA = {
    "region": "r_regionkey integer, r_name char(25), r_comment varchar(152)",
    "nation": "n_nationkey integer, n_name char(25), n_regionkey integer, n_comment varchar(152)",
    "supplier": "s_suppkey integer, s_name char(25), s_address varchar(40), s_nationkey integer, "
                "s_phone char(15), s_acctbal numeric(15,2), s_comment varchar(101)",
    "customer": "c_custkey integer, c_name varchar(25), c_address varchar(40), "
                "c_nationkey integer, c_phone char(15), c_acctbal numeric(15,2), "
                "c_mktsegment char(10), c_comment varchar(117)",
    "part": "p_partkey integer, p_name varchar(55), p_mfgr char(25), p_brand char(10), "
            "p_type varchar(25), p_size integer, p_container char(10), "
            "p_retailprice numeric(15,2), p_comment varchar(23)",
    "partsupp": "ps_partkey integer, ps_suppkey integer, ps_availqty integer, "
                "ps_supplycost numeric(15,2), ps_comment varchar(199)",
    "orders": "o_orderkey integer, o_custkey integer, o_orderstatus char(1), "
              "o_totalprice numeric(15,2), o_orderdate date, o_orderpriority char(15), "
              "o_clerk char(15), o_shippriority integer, o_comment varchar(79)",
    "lineitem": "l_orderkey integer, l_partkey integer, l_suppkey integer, "
                "l_linenumber integer, l_quantity numeric(15,2), l_extendedprice numeric(15,2), "
                "l_discount numeric(15,2), l_tax numeric(15,2), l_returnflag char(1), "
                "l_linestatus char(1), l_shipdate date, l_commitdate date, "
                "l_receiptdate date, l_shipinstruct char(25), l_shipmode char(10), "
                "l_comment varchar(44)",
}


def tpchgen_bin() -> str:
    """The tpchgen-cli next to this interpreter (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("tpchgen-cli")
    if local.exists():
        return str(local)
    found = shutil.which("tpchgen-cli")
    if not found:
        raise FileNotFoundError("tpchgen-cli not found: pip install tpchgen-cli "
                                "(it is in pyproject's test extras)")
    return found


def generate(sf: float, out_dir: Path) -> Path:
    """Generate the eight .tbl files at `sf` into out_dir (reused when already complete)."""
    out_dir = Path(out_dir)
    marker = out_dir / ".complete"
    if marker.exists():
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([tpchgen_bin(), "-s", str(sf), "-o", str(out_dir), "--overwrite"],
                   check=True, stdout=subprocess.DEVNULL)
    marker.write_text(str(sf))
    return out_dir


def copy_text(path: Path) -> bytes:
    """A .tbl file (pipe-separated, trailing pipe) as COPY text format (no tabs or backslashes
    occur in TPC-H data)."""
    data = path.read_bytes()
    return data.replace(b"|\n", b"\n").replace(b"|", b"\t")


# Indexes for the PostgreSQL oracle only (they change no answer): once autovacuum has analyzed
# the tables, PostgreSQL runs Q20's correlated subquery as a scan of lineitem per partsupp row.
ORACLE_INDEXES = ["lineitem (l_partkey, l_suppkey)", "lineitem (l_orderkey)",
                  "orders (o_orderkey)", "orders (o_custkey)", "partsupp (ps_partkey, ps_suppkey)",
                  "part (p_partkey)", "customer (c_custkey)", "supplier (s_suppkey)"]


# Indexes on each table's key, for Slipstream: joins on these keys probe them in place, and
# chains of joins become delta joins where that arranges less (planner/delta_joins.py).
KEY_INDEXES = ["customer (c_custkey)", "orders (o_orderkey)", "lineitem (l_orderkey)", "part (p_partkey)",
               "supplier (s_suppkey)", "nation (n_nationkey)", "region (r_regionkey)", "partsupp (ps_partkey)"]


def create_key_indexes(conn, prefix: str = "") -> None:
    for spec in KEY_INDEXES:
        conn.execute(f"CREATE INDEX ON {prefix}{spec}")


def create_oracle_indexes(conn) -> None:
    for i, spec in enumerate(ORACLE_INDEXES):
        conn.execute(f"CREATE INDEX tpch_oracle_{i} ON {spec}")
    conn.execute("ANALYZE")


def create_tables(conn, prefix: str = "") -> None:
    for t in TABLES:
        conn.execute(f"CREATE TABLE {prefix}{t} ({SCHEMA[t]})")


def load(conn, data_dir: Path, prefix: str = "", chunk: int = 8 << 20) -> dict[str, int]:
    """COPY every table from data_dir over `conn` (psycopg 3); returns row counts."""
    counts = {}
    for t in TABLES:
        payload = copy_text(Path(data_dir) / f"{t}.tbl")
        with conn.cursor().copy(f"COPY {prefix}{t} FROM STDIN") as copy:
            for i in range(0, len(payload), chunk):
                copy.write(payload[i:i + chunk])
        counts[t] = payload.count(b"\n")
    return counts


# --- refresh functions -------------------------------------------------------------------

CURRENT_DATE = dt.date(1995, 6, 17)
START_DATE = dt.date(1992, 1, 1)
END_DATE = dt.date(1998, 12, 31)
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
INSTRUCTIONS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
WORDS = ["special", "requests", "furiously", "pending", "accounts", "ironic", "deposits",
         "carefully", "blithely", "final", "packages", "regular", "express", "bold", "foxes"]


@dataclass
class RefreshPair:
    """One RF1 (orders + lineitems to insert) and one RF2 (order keys to delete)."""
    new_orders: list[tuple]
    new_lineitems: list[tuple]
    delete_keys: list[int]


class RefreshGenerator:
    """Deterministic refresh sets over the loaded data in data_dir."""

    def __init__(self, data_dir: Path, sf: float, seed: int = 42):
        self.rng = random.Random(seed)
        self.per_refresh = max(1, round(sf * 1500))
        self.clerks = max(1, round(sf * 1000))
        data_dir = Path(data_dir)
        self.order_keys = [int(line.split("|", 1)[0])
                           for line in (data_dir / "orders.tbl").read_text().splitlines()]
        self.next_key = max(self.order_keys) + 1
        self.live_keys = list(self.order_keys)
        self.custkeys = [int(line.split("|", 1)[0])
                         for line in (data_dir / "customer.tbl").read_text().splitlines()]
        self.retail = {}
        for line in (data_dir / "part.tbl").read_text().splitlines():
            f = line.split("|")
            self.retail[int(f[0])] = Decimal(f[7])
        self.supps_of: dict[int, list[int]] = {}
        for line in (data_dir / "partsupp.tbl").read_text().splitlines():
            f = line.split("|", 2)
            self.supps_of.setdefault(int(f[0]), []).append(int(f[1]))
        self.partkeys = sorted(self.supps_of)

    def _comment(self, limit: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(2, 6)))[:limit]

    def next_pair(self) -> RefreshPair:
        rng = self.rng
        orders, lines = [], []
        for _ in range(self.per_refresh):
            key = self.next_key
            # TPC-H leaves gaps in order keys: 8 used of every 32.
            self.next_key += 1 if key % 32 < 7 else 25
            # Customers with custkey % 3 == 0 place no orders in TPC-H (Q13/Q22 rely on it).
            cust = rng.choice([c for c in rng.sample(self.custkeys, 8) if c % 3] or [1])
            odate = START_DATE + dt.timedelta(days=rng.randint(0, (END_DATE - START_DATE).days - 151))
            total = Decimal(0)
            statuses = set()
            for ln in range(1, rng.randint(1, 7) + 1):
                part = rng.choice(self.partkeys)
                supp = rng.choice(self.supps_of[part])
                qty = rng.randint(1, 50)
                price = self.retail[part] * qty
                disc = Decimal(rng.randint(0, 10)) / 100
                tax = Decimal(rng.randint(0, 8)) / 100
                ship = odate + dt.timedelta(days=rng.randint(1, 121))
                commit = odate + dt.timedelta(days=rng.randint(30, 90))
                receipt = ship + dt.timedelta(days=rng.randint(1, 30))
                rflag = rng.choice("RA") if receipt <= CURRENT_DATE else "N"
                lstatus = "O" if ship > CURRENT_DATE else "F"
                statuses.add(lstatus)
                total += (price * (1 + tax) * (1 - disc)).quantize(Decimal("0.01"))
                lines.append((key, part, supp, ln, Decimal(qty), price, disc, tax, rflag, lstatus,
                              ship, commit, receipt, rng.choice(INSTRUCTIONS), rng.choice(MODES),
                              self._comment(44)))
            ostatus = "F" if statuses == {"F"} else "O" if statuses == {"O"} else "P"
            orders.append((key, cust, ostatus, total, odate, rng.choice(PRIORITIES),
                           f"Clerk#{rng.randint(1, self.clerks):09d}", 0,
                           self._comment(79)))
        doomed = rng.sample(self.live_keys, self.per_refresh)
        gone = set(doomed)
        self.live_keys = [k for k in self.live_keys if k not in gone]
        self.live_keys.extend(o[0] for o in orders)
        return RefreshPair(orders, lines, sorted(doomed))


def _literal(v) -> str:
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    return str(v)


def rf1_statements(pair: RefreshPair, prefix: str = "") -> list[str]:
    def values(rows):
        return ", ".join("(" + ", ".join(_literal(v) for v in r) + ")" for r in rows)
    return [f"INSERT INTO {prefix}orders VALUES {values(pair.new_orders)}",
            f"INSERT INTO {prefix}lineitem VALUES {values(pair.new_lineitems)}"]


def rf2_statements(pair: RefreshPair, prefix: str = "") -> list[str]:
    keys = ", ".join(map(str, pair.delete_keys))
    return [f"DELETE FROM {prefix}lineitem WHERE l_orderkey IN ({keys})",
            f"DELETE FROM {prefix}orders WHERE o_orderkey IN ({keys})"]
