"""Giving freed memory back to the operating system after bulk work.

Arrow's pool (jemalloc, see `configure_malloc`) and the C library's malloc (NumPy's arrays,
Python's larger objects) both keep memory they freed for reuse. After a bulk load or a
hydration that is most of a process: a worker holding 44 MB of state at a million orders kept
366 MB resident, 272 MB after `release_memory` (the pool's unused pages, then glibc's
`malloc_trim`). Called after steps that moved many rows, never per row or per small step (a
trim costs milliseconds).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import lru_cache


@lru_cache(maxsize=None)
def _glibc(name: str):
    """glibc's function `name`, or None where the C library has none (musl, macOS)."""
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None


def release_memory() -> None:
    """Return the Arrow pool's unused memory and the C heap's free pages to the OS."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)


# mallopt parameters (glibc's malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def configure_malloc() -> None:
    """Called at a process's entry point, before pyarrow is imported: Arrow's buffers come from
    jemalloc (`_choose_arrow_pool`). Allocations of 128 KiB or more (NumPy arrays of a
    bulk step) get their own mappings, returned to the OS when freed, instead of glibc's
    default, which raises the threshold to 32 MiB after the first large free and then carves
    them out of the heap, where what is freed stays resident behind live allocations; and at
    most two malloc arenas (this process's threads do little allocating of their own)."""
    _choose_arrow_pool()
    mallopt = _glibc("mallopt")
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
    mallopt(_M_ARENA_MAX, 2)


def _choose_arrow_pool() -> None:
    """Arrow's default pool on Linux is mimalloc, which kept more resident than jemalloc for the
    same state: after hydrating both reference views over a million orders the server held
    ~855 MB with mimalloc and ~750 MB with jemalloc (~188 -> ~176 MB per million orders) at the
    same speed (b=10k and hydration at 1M, back to back). Arrow reads the choice from the
    environment once, when pyarrow is imported (`pa.set_memory_pool` later is not enough: Arrow's
    C++ code keeps allocating from the first pool), and the workers Spark starts inherit it. A
    pool chosen by the user in `ARROW_DEFAULT_MEMORY_POOL` stands; a pyarrow built without
    jemalloc falls back to its default with a warning."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
