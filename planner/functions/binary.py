"""bytea and uuid functions: encode/decode between bytes and text, lengths, `bytea || bytea`,
gen_random_uuid(), sha224/sha256/sha384/sha512, and Materialize's hmac(data, key, algorithm) and
constant_time_eq(a, b) (what webhook sources' CHECK expressions use).

    SELECT encode('\\x00ff'::bytea, 'base64')   -> Call('encode', (bytea, Literal('base64')), TEXT)
"""

from __future__ import annotations

from dataflow.types import BOOL, BYTEA, INT4, TEXT, UUID
from planner.functions.registry import Overload, overloads

FUNCTIONS = overloads(
    Overload("encode", (BYTEA, TEXT), TEXT, kernel="encode"),
    Overload("decode", (TEXT, TEXT), BYTEA, kernel="decode"),
    Overload("octet_length", (BYTEA,), INT4, kernel="bytea_length"),
    Overload("length", (BYTEA,), INT4, kernel="bytea_length"),
    Overload("gen_random_uuid", (), UUID, kernel="gen_random_uuid", volatile=True),
    Overload("||", (BYTEA, BYTEA), BYTEA, kernel="bytea_concat"),
    *(Overload(f"sha{n}", (BYTEA,), BYTEA, kernel=f"sha{n}") for n in (224, 256, 384, 512)),
    Overload("hmac", (TEXT, TEXT, TEXT), BYTEA, kernel="hmac"),
    Overload("hmac", (BYTEA, BYTEA, TEXT), BYTEA, kernel="hmac"),
    Overload("constant_time_eq", (TEXT, TEXT), BOOL, kernel="constant_time_eq"),
    Overload("constant_time_eq", (BYTEA, BYTEA), BOOL, kernel="constant_time_eq"),
)
