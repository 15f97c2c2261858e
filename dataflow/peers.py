"""The exchange between workers of one replica: a full mesh of TCP connections.

Each worker listens on a socket, learns its peers' addresses (Spark's barrier allGather), and
opens one outgoing connection to every peer. Reader threads drain incoming connections into an
inbox keyed by tag, so a sender never blocks on a peer that is busy sending to it.

`PeerNetwork.exchange(tag, parts)` sends parts[j] to worker j and returns the parts every worker
sent to this one (its own included), in worker order. All workers call it with the same tags in
the same order; the tag (dataflow key, step number, channel) keeps concurrent exchanges apart.

A dataflow that fails on one worker (an engine bug, or its state past the replica's memory
limit) is aborted on all of them at once: `abort(key, error)` tells every peer, whose exchanges
for that dataflow then raise `DataflowAborted` (carrying the same error) instead of waiting for
parts that will never come.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from typing import Any

import pyarrow as pa

from dataflow.batch import concat, partition
from dataflow.errors import SqlError
from dataflow.transport import recv_frame, send_frame

EXCHANGE_TIMEOUT_SECONDS = 120.0
_ABORT = "abort"   # the tag of an abort notice: (_ABORT, dataflow key)


class DataflowAborted(Exception):
    """The dataflow failed on another worker of the replica."""

    def __init__(self, error: SqlError) -> None:
        super().__init__(error.message)
        self.error = error


class PeerNetwork:
    def __init__(self, index: int, count: int, listener: socket.socket) -> None:
        self.index = index
        self.count = count
        self._listener = listener
        self._out: dict[int, socket.socket] = {}
        self._out_locks: dict[int, threading.Lock] = {}
        self._inbox: dict[Any, dict[int, Any]] = defaultdict(dict)
        self._cond = threading.Condition()
        self._failed: BaseException | None = None
        self._aborted: dict[Any, str] = {}   # dataflow key -> why it failed

    @staticmethod
    def listen(host: str = "0.0.0.0") -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        sock.listen(64)
        return sock

    def connect(self, addresses: list[tuple[str, int]]) -> None:
        """Open outgoing connections to every peer and accept theirs (count - 1 each way)."""
        accepted: list[socket.socket] = []

        def accept_all() -> None:
            for _ in range(self.count - 1):
                conn, _ = self._listener.accept()
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                accepted.append(conn)

        acceptor = threading.Thread(target=accept_all, daemon=True)
        acceptor.start()
        for j, (host, port) in enumerate(addresses):
            if j == self.index:
                continue
            sock = socket.create_connection((host, port), timeout=60)
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            send_frame(sock, self.index)
            self._out[j] = sock
            self._out_locks[j] = threading.Lock()
        acceptor.join()
        for conn in accepted:
            peer = recv_frame(conn)
            threading.Thread(target=self._read_loop, args=(peer, conn), daemon=True,
                             name=f"peer-{peer}").start()

    def _read_loop(self, peer: int, conn: socket.socket) -> None:
        try:
            while True:
                tag, payload = recv_frame(conn)
                with self._cond:
                    if tag[0] == _ABORT:
                        self._mark_aborted(tag[1], payload)
                    elif tag[0] not in self._aborted:   # (parts of an aborted dataflow: dropped)
                        self._inbox[tag][peer] = payload
                    self._cond.notify_all()
        except BaseException as e:  # a dead peer fails every exchange waiting on it
            with self._cond:
                self._failed = e
                self._cond.notify_all()

    def _mark_aborted(self, key: Any, error: SqlError) -> None:
        """Record that dataflow `key` failed; drop the parts already received for it. Holds _cond."""
        self._aborted.setdefault(key, error)
        for tag in [t for t in self._inbox if t[0] == key]:
            del self._inbox[tag]

    def abort(self, key: Any, error: SqlError) -> None:
        """Dataflow `key` failed here with `error`: fail it on every peer too."""
        with self._cond:
            self._mark_aborted(key, error)
        for j, sock in self._out.items():
            with self._out_locks[j]:
                send_frame(sock, ((_ABORT, key), error))

    def aborted(self, key: Any) -> SqlError | None:
        """Why dataflow `key` failed on some worker, or None."""
        with self._cond:
            return self._aborted.get(key)

    def forget(self, key: Any) -> None:
        """Dataflow `key` is gone on this worker: drop what is kept about it."""
        with self._cond:
            self._aborted.pop(key, None)
            for tag in [t for t in self._inbox if t[0] == key]:
                del self._inbox[tag]

    def exchange(self, tag: Any, parts: list[Any]) -> list[Any]:
        for j, sock in self._out.items():
            with self._out_locks[j]:
                send_frame(sock, (tag, parts[j]))
        deadline = time.monotonic() + EXCHANGE_TIMEOUT_SECONDS
        with self._cond:
            while len(self._inbox.get(tag, ())) < self.count - 1:
                if tag[0] in self._aborted:
                    raise DataflowAborted(self._aborted[tag[0]])
                if self._failed is not None:
                    raise ConnectionError(f"exchange peer failed: {self._failed!r}")
                if time.monotonic() > deadline:
                    # A peer abandoned this dataflow (it failed there): fail it here too.
                    self._inbox.pop(tag, None)
                    raise TimeoutError(f"exchange {tag!r}: peers did not answer in {EXCHANGE_TIMEOUT_SECONDS} s")
                self._cond.wait(timeout=1.0)
            got = self._inbox.pop(tag, {})
        got[self.index] = parts[self.index]
        return [got[j] for j in range(self.count)]


class DataflowExchange:
    """The engine's Exchange for one dataflow: shuffles by key hash over the peer network, tagging
    each exchange with (dataflow id, step number, channel)."""

    def __init__(self, network: PeerNetwork | None, dataflow_id: str, index: int, count: int,
                 generation: int = 0) -> None:
        self._network = network
        # A rebuilt dataflow reuses its id: the generation keeps its exchanges (and an abort of
        # the old one) apart from the old one's.
        self.key = (dataflow_id, generation)
        self.worker_index = index
        self.worker_count = count
        self.step_number = 0

    def shuffle(self, channel: str, batch: pa.Table, key: tuple[int, ...]) -> pa.Table:
        if self.worker_count == 1 or self._network is None:
            return batch
        # An empty part travels as None: pickling an empty table's schema costs more than the
        # few rows a step usually moves (most of a small write's exchanges carry nothing).
        parts = [p if p.num_rows else None for p in partition(batch, key, self.worker_count)]
        got = [g for g in self._network.exchange((self.key, self.step_number, channel), parts) if g is not None]
        return concat(got) if got else batch.slice(0, 0)

    def abort(self, error: SqlError) -> None:
        """This dataflow failed on this worker: fail it on the others too."""
        if self._network is not None:
            self._network.abort(self.key, error)

    def aborted(self) -> SqlError | None:
        """Why this dataflow failed on another worker, if it did."""
        return None if self._network is None else self._network.aborted(self.key)

    def forget(self) -> None:
        if self._network is not None:
            self._network.forget(self.key)
