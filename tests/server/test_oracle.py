"""The timestamp oracle: strictly increasing write timestamps, reads at the latest applied write,
and never a timestamp twice across restarts, even when the wall clock goes backwards."""

from server.oracle import WINDOW_MS, TimestampOracle


class Store:
    def __init__(self) -> None:
        self.value: int | None = None
        self.writes = 0

    def load(self) -> int | None:
        return self.value

    def store(self, v: int) -> None:
        self.value = v
        self.writes += 1


def test_write_timestamps_increase_even_when_the_clock_stalls():
    store, clock = Store(), [1_000]
    oracle = TimestampOracle(store.load, store.store, clock=lambda: clock[0])
    stamps = [oracle.allocate_write_ts() for _ in range(5)]
    assert stamps == [1_000, 1_001, 1_002, 1_003, 1_004]
    clock[0] = 5_000
    assert oracle.allocate_write_ts() == 5_000


def test_reads_see_only_applied_writes():
    store = Store()
    oracle = TimestampOracle(store.load, store.store, clock=lambda: 10)
    first = oracle.allocate_write_ts()
    oracle.applied(first)
    second = oracle.allocate_write_ts()
    assert oracle.read_ts() == first  # `second` is allocated but not yet applied
    oracle.applied(second)
    assert oracle.read_ts() == second
    oracle.applied(first)  # never goes backwards
    assert oracle.read_ts() == second


def test_restart_with_a_clock_that_went_backwards_never_reuses_a_timestamp():
    store, clock = Store(), [50_000]
    before = TimestampOracle(store.load, store.store, clock=lambda: clock[0])
    used = [before.allocate_write_ts() for _ in range(100)]
    clock[0] = 10_000  # the machine's clock stepped back across the restart
    after = TimestampOracle(store.load, store.store, clock=lambda: clock[0])
    assert after.allocate_write_ts() > max(used)
    # The durable high-water mark is bumped in windows, not on every write.
    assert store.writes <= 1 + 100 // WINDOW_MS + 1
