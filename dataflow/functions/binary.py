"""Kernels of the bytea and uuid functions (signatures: `planner.functions.binary`).

encode/decode go through Python's codecs once per distinct value (no vectorised base64 in
Arrow); lengths are Arrow's binary_length. sha224/256/384/512 hash each distinct value once
with hashlib (Arrow has no SHA-2 kernel): a Python call per distinct value, unavoidable.
hmac and constant_time_eq (webhook CHECKs) likewise call Python's hmac per row: Arrow has neither.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid

import pyarrow as pa
import pyarrow.compute as pc

from dataflow.bytea_uuid import bytea_parse, bytea_parse_escape
from dataflow.errors import SqlError, SqlState
from dataflow.expr import Call


def _arr(x) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x


def _format(vals: list[pa.Array], index: int) -> list:
    fmt = _arr(vals[index])
    names = {v for v in fmt.to_pylist() if v is not None}
    for n in names:
        if n.lower() not in ("hex", "base64", "escape"):
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'unrecognized encoding: "{n}"')
    return [None if v is None else v.lower() for v in fmt.to_pylist()]


def _escape(b: bytes) -> str:
    out = []
    for c in b:
        if c == 0x5C:
            out.append("\\\\")
        elif c == 0 or c >= 0x80:
            out.append(f"\\{c:03o}")
        else:
            out.append(chr(c))
    return "".join(out)


def _encode(vals: list[pa.Array], expr: Call) -> pa.Array:
    data = _arr(vals[0]).to_pylist()
    fmts = _format(vals, 1)
    out = []
    for b, f in zip(data, fmts):
        if b is None or f is None:
            out.append(None)
        elif f == "hex":
            out.append(b.hex())
        elif f == "base64":
            # PostgreSQL breaks base64 lines at 76 characters.
            text = base64.b64encode(b).decode()
            out.append("\n".join(text[i:i + 76] for i in range(0, len(text), 76)))
        else:
            out.append(_escape(b))
    return pa.array(out, pa.string())


def _decode(vals: list[pa.Array], expr: Call) -> pa.Array:
    data = _arr(vals[0]).to_pylist()
    fmts = _format(vals, 1)
    out = []
    for s, f in zip(data, fmts):
        if s is None or f is None:
            out.append(None)
        elif f == "hex":
            out.append(bytea_parse("\\x" + s))
        elif f == "base64":
            try:
                out.append(base64.b64decode("".join(s.split()), validate=True))
            except ValueError:
                raise SqlError(SqlState.INVALID_PARAMETER_VALUE, "invalid base64 end sequence") from None
        else:
            out.append(bytea_parse_escape(s))
    return pa.array(out, pa.binary())


def _bytea_length(vals: list[pa.Array], expr: Call) -> pa.Array:
    return pc.binary_length(_arr(vals[0])).cast(pa.int32())


def _gen_random_uuid(vals: list[pa.Array], expr: Call) -> pa.Array:
    """A version 4 uuid per row (Python's uuid4 per row: no vectorised form)."""
    return pa.array([str(uuid.uuid4()) for _ in range(len(vals[0]))], pa.string())


def _bytea_concat(vals: list[pa.Array], expr: Call) -> pa.Array:
    a, b = (_as_binary(v) for v in vals)
    return pc.binary_join_element_wise(a, b, pa.scalar(b"", pa.binary()))


def _as_binary(v) -> pa.Array:
    v = v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v
    return v.cast(pa.binary())


def _sha2(algorithm: str):
    def run(vals: list[pa.Array], expr: Call) -> pa.Array:
        """sha224/sha256/sha384/sha512(bytea): each distinct value hashed once with hashlib,
        the rows' digests gathered by the dictionary indices."""
        encoded = pc.dictionary_encode(_as_binary(vals[0]))
        digests = pa.array([hashlib.new(algorithm, b).digest() for b in encoded.dictionary.to_pylist()],
                           pa.binary())
        return digests.take(encoded.indices)
    return run


_HMAC_ALGORITHMS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")


def _bytes_of(v) -> list:
    a = _arr(v)
    if pa.types.is_string(a.type) or pa.types.is_large_string(a.type):
        return [None if s is None else s.encode() for s in a.to_pylist()]
    return a.to_pylist()


def _hmac(vals: list[pa.Array], expr: Call) -> pa.Array:
    """hmac(data, key, algorithm), pgcrypto's: the digest of data keyed with key (text is its
    UTF-8 bytes)."""
    out = []
    for data, key, alg in zip(_bytes_of(vals[0]), _bytes_of(vals[1]), _arr(vals[2]).to_pylist()):
        if data is None or key is None or alg is None:
            out.append(None)
            continue
        if alg.lower() not in _HMAC_ALGORITHMS:
            raise SqlError(SqlState.INVALID_PARAMETER_VALUE, f'invalid hash algorithm "{alg}"')
        out.append(hmac.new(key, data, alg.lower()).digest())
    return pa.array(out, pa.binary())


def _constant_time_eq(vals: list[pa.Array], expr: Call) -> pa.Array:
    """a = b in time independent of where they differ (hmac.compare_digest)."""
    return pa.array([None if a is None or b is None else hmac.compare_digest(a, b)
                     for a, b in zip(_bytes_of(vals[0]), _bytes_of(vals[1]))], pa.bool_())


KERNELS = {"hmac": _hmac, "constant_time_eq": _constant_time_eq,"encode": _encode, "decode": _decode, "bytea_length": _bytea_length,
           "gen_random_uuid": _gen_random_uuid, "bytea_concat": _bytea_concat,
           **{f"sha{n}": _sha2(f"sha{n}") for n in (224, 256, 384, 512)}}
