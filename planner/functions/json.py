"""json and jsonb operators and functions.

Operators (their sqlglot nodes are mapped to these symbols in `planner.scalar`):
  ->  ->>  (by key or index)   #>  #>>  (by path, a text[] literal like '{a,0}')
  @>  <@  ?  (containment, top-level key)   ||  (concatenation)   -  #-  (deletion)
Functions: json_build_object/array, to_json (json's own text: `dataflow.json_text`), jsonb_typeof, jsonb_array_length, jsonb_build_object/array, to_jsonb,
jsonb_strip_nulls, jsonb_pretty, jsonb_extract_path(_text), jsonb_set, jsonb_insert, jsonb_set_lax, jsonb_object_keys is a set function
(not here). json values get the same operators where PostgreSQL has them for json.

    SELECT doc -> 'a' ->> 'b'   -> Call('json_get_text', (Call('json_get', (doc, 'a'), JSONB), 'b'), TEXT)
"""

from __future__ import annotations

from dataflow.expr import Call, Literal, ScalarExpr
from dataflow.types import BOOL, INT4, JSON, JSONB, TEXT, array_of
from planner.functions.registry import ANY, Overload, overloads

_BOTH = (JSONB, JSON)


def _set_lax(args: list[ScalarExpr], ctx) -> ScalarExpr:
    """jsonb_set_lax with its defaults (create_if_missing true, 'use_json_null')."""
    defaults = [Literal(True, BOOL), Literal("use_json_null", TEXT)]
    return Call("jsonb_set_lax", (*args, *defaults[len(args) - 3:]), JSONB)

FUNCTIONS = overloads(
    *(Overload("->", (t, TEXT), t, kernel="json_get") for t in _BOTH),
    *(Overload("->", (t, INT4), t, kernel="json_get") for t in _BOTH),
    *(Overload("->>", (t, TEXT), TEXT, kernel="json_get_text") for t in _BOTH),
    *(Overload("->>", (t, INT4), TEXT, kernel="json_get_text") for t in _BOTH),
    *(Overload("#>", (t, TEXT), t, kernel="json_get_path") for t in _BOTH),
    *(Overload("#>>", (t, TEXT), TEXT, kernel="json_get_path_text") for t in _BOTH),
    Overload("@>", (JSONB, JSONB), BOOL, kernel="jsonb_contains"),
    Overload("<@", (JSONB, JSONB), BOOL, kernel="jsonb_contained"),
    Overload("?", (JSONB, TEXT), BOOL, kernel="jsonb_has_key"),
    Overload("?|", (JSONB, array_of(TEXT)), BOOL, kernel="jsonb_has_any_key"),
    Overload("?&", (JSONB, array_of(TEXT)), BOOL, kernel="jsonb_has_all_keys"),
    Overload("||", (JSONB, JSONB), JSONB, kernel="jsonb_concat"),
    Overload("-", (JSONB, TEXT), JSONB, kernel="jsonb_delete"),
    Overload("-", (JSONB, INT4), JSONB, kernel="jsonb_delete"),
    Overload("#-", (JSONB, TEXT), JSONB, kernel="jsonb_delete_path"),
    Overload("jsonb_typeof", (JSONB,), TEXT, kernel="json_typeof"),
    Overload("json_typeof", (JSON,), TEXT, kernel="json_typeof"),
    Overload("jsonb_array_length", (JSONB,), INT4, kernel="json_array_length"),
    Overload("json_array_length", (JSON,), INT4, kernel="json_array_length"),
    Overload("jsonb_build_object", (ANY,), JSONB, kernel="jsonb_build_object", variadic=True),
    Overload("jsonb_build_array", (ANY,), JSONB, kernel="jsonb_build_array", variadic=True),
    Overload("to_jsonb", (ANY,), JSONB, kernel="to_jsonb"),
    Overload("json_build_object", (ANY,), JSON, kernel="json_build_object", variadic=True),
    Overload("json_build_array", (ANY,), JSON, kernel="json_build_array", variadic=True),
    Overload("to_json", (ANY,), JSON, kernel="to_json"),
    Overload("jsonb_strip_nulls", (JSONB,), JSONB, kernel="jsonb_strip_nulls"),
    Overload("jsonb_pretty", (JSONB,), TEXT, kernel="jsonb_pretty"),
    Overload("jsonb_extract_path", (JSONB, TEXT), JSONB, kernel="json_extract_path", variadic=True),
    Overload("jsonb_set", (JSONB, array_of(TEXT), JSONB), JSONB, kernel="jsonb_set"),
    Overload("jsonb_set", (JSONB, array_of(TEXT), JSONB, BOOL), JSONB, kernel="jsonb_set"),
    Overload("jsonb_insert", (JSONB, array_of(TEXT), JSONB), JSONB, kernel="jsonb_insert"),
    Overload("jsonb_insert", (JSONB, array_of(TEXT), JSONB, BOOL), JSONB, kernel="jsonb_insert"),
    # Not strict (planner.functions._NOT_STRICT): an SQL NULL value is the treatment's to decide.
    *(Overload("jsonb_set_lax", (JSONB, array_of(TEXT), JSONB, BOOL, TEXT)[:n], JSONB, build=_set_lax)
      for n in (3, 4, 5)),
    Overload("jsonb_extract_path_text", (JSONB, TEXT), TEXT, kernel="json_extract_path_text", variadic=True),
)
