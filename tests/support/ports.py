"""Free loopback ports and waiting for a listener."""

from __future__ import annotations

import random
import socket
import time


# Below the kernel's ephemeral range (Linux: 32768-60999), from which every outgoing connection
# takes its local port: a port the OS hands out (bind to 0) can be taken by some connection the
# moment its server stops, and a server restarted on its port then fails with "address already
# in use" (seen in CI: a restart test's port taken while another server's workers reconnected).
_TEST_PORTS = (20000, 32000)


def free_port() -> int:
    """A TCP port nobody listens on right now, outside the ephemeral range (tiny race accepted:
    another free_port may pick it before it is bound)."""
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(*_TEST_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # (all tried were taken)
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout: float, interval: float = 0.2) -> bool:
    """Poll `predicate()` until it is true or `timeout` seconds passed; returns the last result."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
