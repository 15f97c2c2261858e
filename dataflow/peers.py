"""The exchange between workers of one replica: a full mesh of TCP connections.

Each worker listens on a socket, learns its peers' addresses (Spark's barrier allGather), and
opens one outgoing connection to every peer. Reader threads drain incoming connections into an
inbox keyed by tag, so a sender never blocks on a peer that is busy sending to it.

`PeerNetwork.exchange(tag, parts)` sends parts[j] to worker j and returns the parts every worker
sent to this one (its own included), in worker order. All workers call it with the same tags in
the same order; the tag (dataflow id, step number, channel) keeps concurrent exchanges apart.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from typing import Any

import pyarrow as pa

from dataflow.batch import concat, partition
from dataflow.transport import recv_frame, send_frame

EXCHANGE_TIMEOUT_SECONDS = 120.0


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
                    self._inbox[tag][peer] = payload
                    self._cond.notify_all()
        except BaseException as e:  # a dead peer fails every exchange waiting on it
            with self._cond:
                self._failed = e
                self._cond.notify_all()

    def exchange(self, tag: Any, parts: list[Any]) -> list[Any]:
        for j, sock in self._out.items():
            with self._out_locks[j]:
                send_frame(sock, (tag, parts[j]))
        deadline = time.monotonic() + EXCHANGE_TIMEOUT_SECONDS
        with self._cond:
            while len(self._inbox.get(tag, ())) < self.count - 1:
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

    def __init__(self, network: PeerNetwork | None, dataflow_id: str, index: int, count: int) -> None:
        self._network = network
        self._dataflow_id = dataflow_id
        self.worker_index = index
        self.worker_count = count
        self.step_number = 0

    def shuffle(self, channel: str, batch: pa.Table, key: tuple[int, ...]) -> pa.Table:
        if self.worker_count == 1 or self._network is None:
            return batch
        parts = partition(batch, key, self.worker_count)
        got = self._network.exchange((self._dataflow_id, self.step_number, channel), parts)
        return concat(got)
