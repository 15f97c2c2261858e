"""bytea and uuid functions: encode/decode between bytes and text, lengths, `bytea || bytea`,
gen_random_uuid(), sha224/sha256/sha384/sha512.

    SELECT encode('\\x00ff'::bytea, 'base64')   -> Call('encode', (bytea, Literal('base64')), TEXT)
"""

from __future__ import annotations

from dataflow.types import BYTEA, INT4, TEXT, UUID
from planner.functions.registry import Overload, overloads

FUNCTIONS = overloads(
    Overload("encode", (BYTEA, TEXT), TEXT, kernel="encode"),
    Overload("decode", (TEXT, TEXT), BYTEA, kernel="decode"),
    Overload("octet_length", (BYTEA,), INT4, kernel="bytea_length"),
    Overload("length", (BYTEA,), INT4, kernel="bytea_length"),
    Overload("gen_random_uuid", (), UUID, kernel="gen_random_uuid", volatile=True),
    Overload("||", (BYTEA, BYTEA), BYTEA, kernel="bytea_concat"),
    *(Overload(f"sha{n}", (BYTEA,), BYTEA, kernel=f"sha{n}") for n in (224, 256, 384, 512)),
)
