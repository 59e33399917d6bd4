"""A schema document checked against its dialect's metaschema before conversion.

What the metaschemas of drafts 4, 6, 7, 2019-09 and 2020-12 say about each keyword's value
(a schema, a non-empty array of schemas, a non-negative integer, a string array without
duplicates, ...), checked in one iterative pass over the document: the first violation is a
GrammarError with its JSON pointer. The same pass refuses what is not JSON at all (non-string
object keys, NaN and infinities, Python values JSON has no spelling for) and applies the
document limits (nesting depth, values in one enum).

The dialect is the root's ``$schema`` (2020-12 when absent or unknown, as the jsonschema package
does). Keywords of later drafts are checked with their later meaning in every dialect: the
converter enforces them, so a value it cannot read is refused rather than misread.
"""
from __future__ import annotations

import math
import re

from ...errors import GrammarError, LimitExceededError
from .refs import Place, place_pointer

_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ANCHOR = {2019: re.compile(r"[A-Za-z][-A-Za-z0-9.:_]*"),
           2020: re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")}

# keyword -> kind of value (draft 2020-12; other dialects override below)
_KINDS = {
    "$id": "id", "$schema": "string", "$ref": "string", "$anchor": "anchor",
    "$dynamicRef": "string", "$dynamicAnchor": "anchor", "$recursiveRef": "string",
    "$recursiveAnchor": "anchor", "$vocabulary": "vocabulary", "$comment": "string",
    "$defs": "schema_map", "definitions": "schema_map", "dependencies": "dependencies",
    "prefixItems": "schema_array", "items": "schema", "contains": "schema",
    "additionalProperties": "schema", "properties": "schema_map",
    "patternProperties": "schema_map", "dependentSchemas": "schema_map",
    "propertyNames": "schema", "if": "schema", "then": "schema", "else": "schema",
    "allOf": "schema_array", "anyOf": "schema_array", "oneOf": "schema_array", "not": "schema",
    "unevaluatedItems": "schema", "unevaluatedProperties": "schema",
    "additionalItems": "schema", "contentSchema": "schema",
    "type": "types", "const": "any", "enum": "array", "multipleOf": "positive_number",
    "maximum": "number", "exclusiveMaximum": "number", "minimum": "number",
    "exclusiveMinimum": "number", "maxLength": "count", "minLength": "count",
    "pattern": "string", "maxItems": "count", "minItems": "count", "uniqueItems": "boolean",
    "maxContains": "count", "minContains": "count", "maxProperties": "count",
    "minProperties": "count", "required": "string_array", "dependentRequired": "string_arrays",
    "title": "string", "description": "string", "default": "any", "deprecated": "boolean",
    "readOnly": "boolean", "writeOnly": "boolean", "examples": "array",
    "contentEncoding": "string", "contentMediaType": "string", "format": "string",
}
_DIALECT_KINDS = {
    2019: {"items": "schema_or_array", "$recursiveAnchor": "boolean"},
    7: {"items": "schema_or_array", "$id": "string", "$recursiveAnchor": "any"},
    6: {"items": "schema_or_array", "$id": "string", "$recursiveAnchor": "any"},
    4: {"items": "schema_or_array", "$id": "string", "id": "string",
        "$recursiveAnchor": "any", "exclusiveMaximum": "boolean",
        "exclusiveMinimum": "boolean", "additionalItems": "schema_or_bool",
        "additionalProperties": "schema_or_bool", "enum": "array4",
        "required": "string_array4"},
}
_SCHEMA_KINDS = frozenset({"schema", "schema_or_bool"})


def dialect_of(schema) -> int:
    """4, 6, 7, 2019 or 2020, from the root's ``$schema``."""
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    if isinstance(uri, str):
        for mark, dialect in (("draft-04", 4), ("draft-06", 6), ("draft-07", 7),
                              ("2019-09", 2019), ("2020-12", 2020)):
            if mark in uri:
                return dialect
    return 2020


def check_schema(schema, *, max_depth: int, max_enum: int) -> int:
    """GrammarError (with the JSON pointer) at the first value the dialect's metaschema
    forbids or that is not JSON; LimitExceededError past ``max_depth`` levels of nesting or
    ``max_enum`` enum values. Returns the dialect."""
    dialect = dialect_of(schema)
    kinds = dict(_KINDS, **_DIALECT_KINDS.get(dialect, {}))
    stack = [(schema, "", 0, "schema")]
    while stack:
        node, ptr, depth, kind = stack.pop()
        if depth > max_depth:
            raise LimitExceededError(f"the schema nests deeper than max_schema_depth="
                                     f"{max_depth} (at {place_pointer(ptr) or '#'})")
        if kind == "value":
            _check_json(node, ptr)
            if isinstance(node, dict):
                stack.extend((v, (ptr, k), depth + 1, "value") for k, v in node.items())
            elif isinstance(node, list):
                stack.extend((v, (ptr, i), depth + 1, "value") for i, v in enumerate(node))
            continue
        if isinstance(node, bool) and (dialect > 4 or kind == "schema_or_bool"):
            continue
        if not isinstance(node, dict):
            raise _error(ptr, "a schema must be an object" + (" or a boolean" if dialect > 4
                                                              else ""), node)
        if dialect == 4:
            for bound in ("Maximum", "Minimum"):
                if f"exclusive{bound}" in node and bound.lower() not in node:
                    raise GrammarError(f"exclusive{bound} needs {bound.lower()} in draft 4",
                                       pointer=place_pointer((ptr, f"exclusive{bound}")))
        for key, value in node.items():
            if not isinstance(key, str):
                raise _error(ptr, "object keys must be strings", key)
            kind = kinds.get(key, "any")
            if kind == "string":            # the commonest kinds, without a call
                if isinstance(value, str):
                    continue
            elif kind in _SCHEMA_KINDS:
                stack.append((value, (ptr, key), depth + 1, kind))
                continue
            elif kind == "types":
                if value.__class__ is str and value in _TYPES:
                    continue
            elif kind == "number":
                cls = value.__class__
                if cls is int or cls is float and math.isfinite(value):
                    continue
            elif kind == "count":
                if value.__class__ is int and value >= 0:
                    continue
            stack.extend(_children(kind, key, value, (ptr, key), depth, dialect, max_enum))
    return dialect


def _children(kind: str, key: str, value, at: Place, depth: int, dialect: int,
              max_enum: int) -> list:
    """Checks ``value`` as a ``kind``; returns the nodes still to check below it."""
    deeper = depth + 1
    if kind in _SCHEMA_KINDS:
        return [(value, at, deeper, kind)]
    if kind == "schema_or_array":
        if isinstance(value, list):
            kind = "schema_array"
        else:
            return [(value, at, deeper, "schema")]
    if kind == "schema_array":
        if not isinstance(value, list) or not value:
            raise _error(at, "must be a non-empty array of schemas", value)
        return [(v, (at, i), deeper + 1, "schema") for i, v in enumerate(value)]
    if kind in ("schema_map", "dependencies", "string_arrays", "vocabulary"):
        if not isinstance(value, dict):
            raise _error(at, "must be an object", value)
        out = []
        for k, v in value.items():
            if not isinstance(k, str):
                raise _error(at, "object keys must be strings", k)
            where = (at, k)
            if kind == "schema_map" or kind == "dependencies" and not isinstance(v, list):
                out.append((v, where, deeper + 1, "schema"))
            elif kind == "vocabulary":
                if not isinstance(v, bool):
                    raise _error(where, "must be a boolean", v)
            else:
                _string_array(v, where, min_items=1 if dialect == 4 else 0)
        return out
    if kind in ("array", "array4"):
        if not isinstance(value, list):
            raise _error(at, "must be an array", value)
        if key == "enum" and len(value) > max_enum:
            raise LimitExceededError(f"enum with {len(value)} values, more than max_enum="
                                     f"{max_enum} (at {place_pointer(at)})")
        if kind == "array4":
            if not value:
                raise _error(at, "must be a non-empty array", value)
            _unique(value, at)
        return [(value, at, depth, "value")]
    if kind in ("string_array", "string_array4"):
        _string_array(value, at, min_items=1 if kind == "string_array4" else 0)
    elif kind == "types":
        _types(value, at)
    elif kind == "count":
        if not _is_integer(value, dialect) or value < 0:
            raise _error(at, "must be a non-negative integer", value)
    elif kind in ("number", "positive_number"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _error(at, "must be a number", value)
        _check_json(value, at)
        if kind == "positive_number" and not value > 0:
            raise _error(at, "must be a number greater than 0", value)
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise _error(at, "must be a boolean", value)
    elif kind in ("string", "id", "anchor"):
        if not isinstance(value, str):
            raise _error(at, "must be a string", value)
        if kind == "id" and dialect >= 2019 and "#" in value[:-1]:
            raise _error(at, "must not have a non-empty fragment", value)
        if kind == "anchor" and dialect >= 2019 and not _ANCHOR[dialect].fullmatch(value):
            raise _error(at, "is not a valid anchor name", value)
    else:
        return [(value, at, depth, "value")]
    return []


def _string_array(value, at: Place, min_items: int) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _error(at, "must be an array of strings", value)
    if len(value) < min_items:
        raise _error(at, "must not be empty", value)
    if len(set(value)) != len(value):
        raise _error(at, "must not repeat a string", value)


def _types(value, at: Place) -> None:
    names = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        raise _error(at, "must name at least one type", value)
    for name in names:
        if not isinstance(name, str) or name not in _TYPES:
            raise _error(at, f"must be one of {', '.join(sorted(_TYPES))} or an array of "
                             "them", name)
    if len(set(names)) != len(names):
        raise _error(at, "must not repeat a type", value)


def _unique(values: list, at: Place) -> None:
    seen = set()
    for v in values:
        key = _hashable(v)
        if key in seen:
            raise _error(at, "must not repeat a value", v)
        seen.add(key)


def _hashable(v):
    """Equal for JSON-equal values (1 and 1.0 alike, true and 1 not)."""
    if isinstance(v, bool) or v is None:
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    if isinstance(v, list):
        return ("a", tuple(_hashable(x) for x in v))
    if isinstance(v, dict):
        return ("o", frozenset((k, _hashable(x)) for k, x in v.items()))
    return ("s", v)


def _is_integer(value, dialect: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return dialect > 4 and isinstance(value, float) and math.isfinite(value) \
        and value.is_integer()


def _check_json(value, at: Place) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _error(at, "must be a finite number (JSON has no NaN or infinity)", value)
    if value is not None and not isinstance(value, (dict, list, str, int, float, bool)):
        raise GrammarError(f"not a JSON value: a Python {type(value).__name__}",
                           pointer=place_pointer(at))
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise _error(at, "object keys must be strings", k)


def _error(at: Place, what: str, value) -> GrammarError:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return GrammarError(f"invalid schema: {what}, not {shown}", pointer=place_pointer(at))

