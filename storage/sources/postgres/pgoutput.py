"""Decoding pgoutput, PostgreSQL's logical replication output plugin (protocol version 1).

Each XLogData message of the replication stream carries one pgoutput message; its first byte is
its kind. A transaction arrives as Begin, then its changes (Relation messages describe a table
before its first change in a session, Type messages a non-built-in type), then Commit:

    B  Begin     final_lsn int64, commit_ts int64, xid int32
    C  Commit    flags int8, commit_lsn int64, end_lsn int64, commit_ts int64
    O  Origin    lsn int64, name string
    R  Relation  oid int32, namespace string, name string, replica_identity int8,
                 ncols int16, per column: flags int8 (1 = key), name string, type oid int32, typmod int32
    Y  Type      oid int32, namespace string, name string
    I  Insert    oid int32, 'N', tuple
    U  Update    oid int32, ['K' key tuple | 'O' old tuple], 'N' new tuple
    D  Delete    oid int32, 'K' key tuple | 'O' old tuple
    T  Truncate  nrels int32, options int8, oids int32 * nrels
    M  Message   (logical decoding messages; only sent when asked for, ignored)

A tuple is ncols int16 and per column 'n' (NULL), 'u' (an unchanged TOASTed value, only in an
update's new tuple) or 't' len int32 + the value's text form. Values stay bytes here; the
ingestion turns whole columns of them into Arrow arrays and casts those (types.py), so nothing
is converted per value in Python.

>>> decode(b'B' + (0x16B374D848).to_bytes(8, 'big') + (0).to_bytes(8, 'big') + (740).to_bytes(4, 'big'))
Begin(final_lsn=97500059720, commit_ts=0, xid=740)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

NULL = None
UNCHANGED = b"\x00unchanged-toast"  # marker object for 'u' columns (compared by identity)


@dataclass(frozen=True)
class Begin:
    final_lsn: int
    commit_ts: int
    xid: int


@dataclass(frozen=True)
class Commit:
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts: int


@dataclass(frozen=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True)
class RelationColumn:
    name: str
    type_oid: int
    typmod: int
    key: bool


@dataclass(frozen=True)
class Relation:
    oid: int
    namespace: str
    name: str
    replica_identity: str  # 'd' default, 'n' nothing, 'f' full, 'i' index
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True)
class TypeMessage:
    oid: int
    namespace: str
    name: str


# A tuple: one entry per column, bytes (the text form), None (NULL) or UNCHANGED.
Tuple = tuple


@dataclass(frozen=True)
class Insert:
    oid: int
    new: Tuple


@dataclass(frozen=True)
class Update:
    oid: int
    old: Tuple | None  # with REPLICA IDENTITY FULL: the whole old row ('O')
    key: Tuple | None  # only the key columns ('K'), the others None
    new: Tuple


@dataclass(frozen=True)
class Delete:
    oid: int
    old: Tuple | None
    key: Tuple | None


@dataclass(frozen=True)
class Truncate:
    options: int  # 1 CASCADE, 2 RESTART IDENTITY
    oids: tuple[int, ...]


@dataclass(frozen=True)
class LogicalMessage:
    prefix: str


Message = Begin | Commit | Origin | Relation | TypeMessage | Insert | Update | Delete | Truncate | LogicalMessage

_I32 = struct.Struct("!i").unpack_from
_U32 = struct.Struct("!I").unpack_from
_I16 = struct.Struct("!h").unpack_from
_Q = struct.Struct("!Q").unpack_from
_q = struct.Struct("!q").unpack_from


class DecodeError(ValueError):
    pass


def _string(buf: bytes, pos: int) -> tuple[str, int]:
    end = buf.index(b"\0", pos)
    return buf[pos:end].decode(), end + 1


def _tuple(buf: bytes, pos: int) -> tuple[Tuple, int]:
    (n,) = _I16(buf, pos)
    pos += 2
    values: list = []
    append = values.append
    for _ in range(n):
        kind = buf[pos]
        pos += 1
        if kind == 0x74:  # 't'
            (ln,) = _I32(buf, pos)
            pos += 4
            append(buf[pos:pos + ln])
            pos += ln
        elif kind == 0x6E:  # 'n'
            append(None)
        elif kind == 0x75:  # 'u'
            append(UNCHANGED)
        else:
            raise DecodeError(f"unknown tuple column kind {chr(kind)!r} (binary values need protocol version 2)")
    return tuple(values), pos


def decode(buf: bytes) -> Message:
    """One pgoutput message."""
    kind = buf[:1]
    if kind == b"I":
        (oid,) = _U32(buf, 1)
        if buf[5:6] != b"N":
            raise DecodeError("insert without a new tuple")
        new, _ = _tuple(buf, 6)
        return Insert(oid, new)
    if kind == b"U":
        (oid,) = _U32(buf, 1)
        pos, old, key = 5, None, None
        tag = buf[pos:pos + 1]
        if tag == b"O":
            old, pos = _tuple(buf, pos + 1)
        elif tag == b"K":
            key, pos = _tuple(buf, pos + 1)
        if buf[pos:pos + 1] != b"N":
            raise DecodeError("update without a new tuple")
        new, _ = _tuple(buf, pos + 1)
        return Update(oid, old, key, new)
    if kind == b"D":
        (oid,) = _U32(buf, 1)
        tag = buf[5:6]
        t, _ = _tuple(buf, 6)
        if tag == b"O":
            return Delete(oid, t, None)
        if tag == b"K":
            return Delete(oid, None, t)
        raise DecodeError(f"delete with tuple kind {tag!r}")
    if kind == b"B":
        final_lsn, = _Q(buf, 1)
        ts, = _q(buf, 9)
        xid, = _I32(buf, 17)
        return Begin(final_lsn, ts, xid & 0xFFFFFFFF)
    if kind == b"C":
        flags = buf[1]
        commit_lsn, = _Q(buf, 2)
        end_lsn, = _Q(buf, 10)
        ts, = _q(buf, 18)
        return Commit(flags, commit_lsn, end_lsn, ts)
    if kind == b"R":
        (oid,) = _I32(buf, 1)
        namespace, pos = _string(buf, 5)
        name, pos = _string(buf, pos)
        ident = chr(buf[pos])
        (n,) = _I16(buf, pos + 1)
        pos += 3
        cols = []
        for _ in range(n):
            flags = buf[pos]
            cname, pos = _string(buf, pos + 1)
            (typ,) = _I32(buf, pos)
            (typmod,) = _I32(buf, pos + 4)
            pos += 8
            cols.append(RelationColumn(cname, typ & 0xFFFFFFFF, typmod, bool(flags & 1)))
        return Relation(oid & 0xFFFFFFFF, namespace, name, ident, tuple(cols))
    if kind == b"Y":
        (oid,) = _I32(buf, 1)
        namespace, pos = _string(buf, 5)
        name, _ = _string(buf, pos)
        return TypeMessage(oid & 0xFFFFFFFF, namespace, name)
    if kind == b"T":
        (n,) = _I32(buf, 1)
        options = buf[5]
        oids = struct.unpack_from(f"!{n}I", buf, 6)
        return Truncate(options, tuple(oids))
    if kind == b"O":
        lsn, = _Q(buf, 1)
        name, _ = _string(buf, 9)
        return Origin(lsn, name)
    if kind == b"M":
        prefix, _ = _string(buf, 10)
        return LogicalMessage(prefix)
    raise DecodeError(f"unknown pgoutput message kind {kind!r}")
