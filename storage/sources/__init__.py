"""Sources: relations that fill themselves (load generators today), each a set of persist shards
written by an ingestion task at timestamps from the tables' timestamp oracle.

`base.py` holds what sources share (options, outputs, deterministic randomness, statistics);
one module per kind (`counter`, `auction`, `marketing`, `tpch`); `controller.py` runs the
ingestion tasks inside environmentd.
"""

from __future__ import annotations

from storage.sources.auction import Auction
from storage.sources.base import Generator, LoadGenOptions, Output, SourceStatistics
from storage.sources.counter import Counter
from storage.sources.marketing import Marketing
from storage.sources.tpch import Tpch

GENERATORS: dict[str, type[Generator]] = {g.kind: g for g in (Counter, Auction, Marketing, Tpch)}


def make_generator(kind: str, options: LoadGenOptions) -> Generator:
    return GENERATORS[kind](options)


__all__ = ["GENERATORS", "Generator", "LoadGenOptions", "Output", "SourceStatistics", "make_generator"]
