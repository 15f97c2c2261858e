"""Blob storage: an immutable-ish key -> bytes store where persist keeps its parts.

Parts are written once under a fresh key and never modified, so a blob only needs atomic,
durable `set`, plus `get`, `delete` and prefix listing. `LocalBlob` is the embedded default: a
directory tree where a key `a/b.arrow` is the file `root/a/b.arrow`.

>>> import tempfile, pathlib
>>> blob = LocalBlob(pathlib.Path(tempfile.mkdtemp()))
>>> blob.set("s1/p0", b"hello"); blob.get("s1/p0"), blob.list_keys("s1/")
(b'hello', ['s1/p0'])
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Protocol, runtime_checkable

_TMP_PREFIX = ".tmp-"


@runtime_checkable
class Blob(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, data: bytes) -> None:
        """Atomic and durable: after return the data survives a crash; readers never see a prefix."""

    def delete(self, key: str) -> None:
        """Idempotent: deleting a missing key is not an error."""

    def list_keys(self, prefix: str) -> list[str]: ...


class LocalBlob:
    """A directory of files. Writes go to a temp file, fsync, rename, then fsync the directory,
    so a crash leaves either the whole part or nothing (plus perhaps a stray temp file)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(p in ("", ".", "..") or p.startswith(_TMP_PREFIX) for p in parts):
            raise ValueError(f"invalid blob key {key!r}")
        return self.root.joinpath(*parts)

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def set(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f"{_TMP_PREFIX}{uuid.uuid4().hex}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(path.parent)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list_keys(self, prefix: str) -> list[str]:
        # Walk only the deepest directory the prefix names, not the whole tree.
        head, _, _ = prefix.rpartition("/")
        start = self.root.joinpath(*head.split("/")) if head else self.root
        if not start.is_dir():
            return []
        keys = []
        for dirpath, _dirs, files in os.walk(start):
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in files:
                if name.startswith(_TMP_PREFIX):
                    continue
                key = name if rel == "." else f"{rel}/{name}"
                if key.startswith(prefix):
                    keys.append(key)
        return sorted(keys)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
