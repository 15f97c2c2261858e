"""AUCTION: an auction house. Materialize's documented relations and column types:

    organizations (id bigint, name text)
    users         (id bigint, org_id bigint, name text)
    accounts      (id bigint, org_id bigint, balance bigint)
    auctions      (id bigint, seller bigint, item text, end_time timestamptz)
    bids          (id bigint, buyer bigint, auction_id bigint, amount integer, bid_time timestamptz)

The initial snapshot (tick 0) holds the organizations, their users and accounts. Every tick
opens one auction (id = tick + 1) by a random seller, ending ten ticks later, and places 0-4 bids
on auctions opened in the last ten ticks (still open when the bid is placed). Values are
hash-derived per tick (see base.py), so any range of ticks is generated in one vectorised pass.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from dataflow.types import INT4, INT8, TEXT, TIMESTAMPTZ
from storage.sources.base import Generator, Output, col, rand_int, timestamps, updates

ORGANIZATIONS = ["Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries",
                 "Wayne Enterprises", "Wonka Industries", "Tyrell Corp", "Cyberdyne"]
USERS_PER_ORG = 40
ITEMS = ["Signed Memorabilia", "City Bar Crawl", "Best Pizza in Town", "Gift Basket",
         "Custom Art", "Concert Tickets", "Vintage Watch", "Rare Vinyl"]
AUCTION_TICKS = 10  # an auction is open for ten ticks
MAX_BIDS = 5  # 0..4 bids per tick

_S_SELLER, _S_ITEM, _S_NBIDS, _S_BUYER, _S_BACK, _S_AMOUNT, _S_OFFSET, _S_BALANCE = range(8)


class Auction(Generator):
    kind = "auction"

    OUTPUTS = {
        "accounts": (col("id", INT8), col("org_id", INT8), col("balance", INT8)),
        "auctions": (col("id", INT8), col("seller", INT8), col("item", TEXT), col("end_time", TIMESTAMPTZ)),
        "bids": (col("id", INT8), col("buyer", INT8), col("auction_id", INT8), col("amount", INT4),
                 col("bid_time", TIMESTAMPTZ)),
        "organizations": (col("id", INT8), col("name", TEXT)),
        "users": (col("id", INT8), col("org_id", INT8), col("name", TEXT)),
    }

    def outputs(self) -> list[Output]:
        return [Output(n, c) for n, c in self.OUTPUTS.items()]

    def growing(self) -> frozenset[str | None]:
        return frozenset({"auctions", "bids"})  # (organizations, users and accounts are fixed)

    @property
    def n_users(self) -> int:
        return len(ORGANIZATIONS) * USERS_PER_ORG

    def _types(self, name: str):
        return tuple(c.type for c in self.OUTPUTS[name])

    def generate(self, start: int, end: int) -> dict[str | None, pa.Table]:
        seed, out = self.options.seed, {}
        if start == 0 and end > 0:
            n_org = len(ORGANIZATIONS)
            org_ids = np.arange(1, n_org + 1, dtype=np.int64)
            out["organizations"] = updates(self._types("organizations"), [org_ids, ORGANIZATIONS])
            user_ids = np.arange(1, self.n_users + 1, dtype=np.int64)
            user_orgs = (user_ids - 1) // USERS_PER_ORG + 1
            names = pa.array([f"user{i}" for i in range(1, self.n_users + 1)])  # snapshot only
            out["users"] = updates(self._types("users"), [user_ids, user_orgs, names])
            balances = rand_int(seed, np.zeros(n_org, np.int64), _S_BALANCE, 1_000, 1_000_000, org_ids)
            out["accounts"] = updates(self._types("accounts"), [org_ids, org_ids, balances])
        ticks = np.arange(start, end, dtype=np.int64)
        due = self.due_ms(ticks)
        tick_ms = self.options.tick_ms
        seller = rand_int(seed, ticks, _S_SELLER, 1, self.n_users + 1)
        item = pa.array(ITEMS).take(pa.array(rand_int(seed, ticks, _S_ITEM, 0, len(ITEMS))))
        end_time = due + AUCTION_TICKS * tick_ms
        out["auctions"] = updates(self._types("auctions"), [ticks + 1, seller, item, timestamps(end_time)])
        # Bids: n per tick, each on an auction opened in the last AUCTION_TICKS ticks.
        n = rand_int(seed, ticks, _S_NBIDS, 0, MAX_BIDS)
        bid_tick = np.repeat(ticks, n)
        first = np.repeat(np.cumsum(n) - n, n)
        idx = np.arange(len(bid_tick), dtype=np.int64) - first  # 0..n-1 within a tick
        back = rand_int(seed, bid_tick, _S_BACK, 0, AUCTION_TICKS, idx)
        auction_tick = np.maximum(bid_tick - back, 0)
        buyer = rand_int(seed, bid_tick, _S_BUYER, 1, self.n_users + 1, idx)
        amount = rand_int(seed, bid_tick, _S_AMOUNT, 1, 100, idx).astype(np.int32)
        offset = rand_int(seed, bid_tick, _S_OFFSET, 0, max(tick_ms, 1), idx)
        bid_time = np.repeat(due, n) + offset
        out["bids"] = updates(self._types("bids"), [bid_tick * MAX_BIDS + idx + 1, buyer, auction_tick + 1,
                                                    amount, timestamps(bid_time)])
        return out
