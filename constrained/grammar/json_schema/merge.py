"""allOf: merging two schemas into one that accepts exactly what both accept.

Keywords combine by their meaning (types intersect, bounds tighten, required lists unite,
properties merge per name, enum values intersect). A combination that has no exact merged
form raises UnsupportedSchemaError with the pointer of the allOf.
"""
from __future__ import annotations

import json
import math
import re

from ...errors import UnsupportedSchemaError
from .json_equality import enum_contains, json_equal

_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")
_MAXIMA = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum",
           "maxContains")
_MINIMA = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum",
           "minContains")
_SAME = ("pattern", "format", "uniqueItems", "contains", "unevaluatedProperties",
         "unevaluatedItems", "$dynamicRef")
_CONDITION = ("if", "then", "else")
CONTAINS_ALL = "__contains__"
_CONTAINS_KEYS = ("contains", "minContains", "maxContains", CONTAINS_ALL)
_VALUES = ("enum", "const", "default", "examples")
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id", "id",
                         "$comment", "readOnly", "writeOnly", "deprecated", "$defs",
                         "definitions", "contentEncoding", "contentMediaType", "contentSchema",
                         "$anchor", "$dynamicAnchor", "$vocabulary", "example",
                         "__merged__"})


def type_set(schema: dict) -> set[str] | None:
    """The types a schema's "type" keyword allows (integer included by number), None if any."""
    t = schema.get("type")
    if t is None:
        return None
    ts = set([t] if isinstance(t, str) else t)
    if "number" in ts:
        ts.add("integer")
    return ts


def merge(a, b, pointer: str):
    """Schema accepting exactly the instances both ``a`` and ``b`` accept (no $ref at top)."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    a, b = _without_dangling_cases(a), _without_dangling_cases(b)
    ca, cb = contains_conditions(a), contains_conditions(b)
    a, b = (x if cx else _without_contains(x) for x, cx in ((a, ca), (b, cb)))
    if ca and cb and (CONTAINS_ALL in a or CONTAINS_ALL in b or a["contains"] != b["contains"]):
        rest = merge(_without_contains(a), _without_contains(b), pointer)
        if rest is False:
            return False
        out = {} if rest is True else dict(rest)
        conditions: dict[str, list] = {}
        for c in ca + cb:
            conditions.setdefault(json.dumps(c, sort_keys=True, default=repr), list(c))
        out[CONTAINS_ALL] = list(conditions.values())
        out["__merged__"] = True
        return out
    if ca and cb:   # one contains schema: its default minContains (1) must take part in the max
        a = a if "minContains" in a else {**a, "minContains": 1}
        b = b if "minContains" in b else {**b, "minContains": 1}
    if "if" in a and "if" in b:     # one condition stays, the other becomes its two cases
        b = _condition_as_union(b)
    out = dict(a)
    tuple_form = _has_prefix(a) or _has_prefix(b)
    if tuple_form:
        _merge_arrays(out, a, b)
    for key, bv in b.items():
        if tuple_form and key in ("items", "prefixItems", "additionalItems"):
            continue
        if key in ANNOTATIONS:
            out.setdefault(key, bv)
            continue
        if key not in out:
            out[key] = bv
            continue
        av = out[key]
        if av == bv:
            continue
        if key == "const" and not json_equal(av, bv):
            return False
        out[key] = _merge_key(key, av, bv, a, b, pointer)
    _merge_properties(out, a, b, pointer)
    out["__merged__"] = True
    return out


def contains_conditions(s) -> list[tuple[object, int, int | None]]:
    """The ``contains`` conditions of a (merged) schema: for each ``(schema, least, most)``,
    the number of items valid under ``schema`` lies in [least, most] (most None: unbounded).
    Merging two schemas with different ``contains`` keeps both under ``CONTAINS_ALL``."""
    if not isinstance(s, dict):
        return []
    if CONTAINS_ALL in s:
        return [tuple(c) for c in s[CONTAINS_ALL]]
    if "contains" not in s:
        return []
    most = s.get("maxContains")
    return [(s["contains"], int(s.get("minContains", 1)), None if most is None else int(most))]


def for_validator(s):
    """``s`` as a standard validator reads it: ``CONTAINS_ALL`` written out as an allOf of
    ``contains`` schemas (the same object back when nothing needed writing out)."""
    if isinstance(s, list):
        out = [for_validator(x) for x in s]
        return s if all(x is y for x, y in zip(out, s)) else out
    if not isinstance(s, dict):
        return s
    out = {k: v if k in _VALUES else for_validator(v) for k, v in s.items()}
    if CONTAINS_ALL in out:
        conds = [{"contains": for_validator(c), "minContains": least,
                  **({} if most is None else {"maxContains": most})}
                 for c, least, most in out.pop(CONTAINS_ALL)]
        return {"allOf": [out] + conds}
    return s if all(out[k] is s[k] for k in s) else out


def _without_contains(s: dict) -> dict:
    """``s`` without its contains conditions (and without minContains/maxContains, which
    mean nothing without contains)."""
    if not any(k in s for k in _CONTAINS_KEYS):
        return s
    return {k: v for k, v in s.items() if k not in _CONTAINS_KEYS}


def _without_dangling_cases(s: dict) -> dict:
    """``then``/``else`` without ``if`` have no effect: dropped before they meet an ``if``."""
    if "if" in s or not ("then" in s or "else" in s):
        return s
    return {k: v for k, v in s.items() if k not in ("then", "else")}


def _condition_as_union(s: dict) -> dict:
    """``s`` with if/then/else written as anyOf: (if and then) or (not if and else)."""
    s = dict(s)
    cond, then, other = s.pop("if"), s.pop("then", True), s.pop("else", True)
    cases = [{"allOf": [cond, then]}, {"allOf": [{"not": cond}, other]}]
    if "anyOf" in s:
        return {**s, "anyOf": [{"allOf": [x, y]} for x in s["anyOf"] for y in cases]}
    return {**s, "anyOf": cases}


def _has_prefix(s: dict) -> bool:
    return bool(s.get("prefixItems")) or isinstance(s.get("items"), list)


def _array_parts(s: dict):
    items = s.get("items", True)
    if isinstance(items, list):
        return items, s.get("additionalItems", True)
    return s.get("prefixItems", []), items


def _both(x, y):
    return y if x is True or x == {} else x if y is True or y == {} else {"allOf": [x, y]}


def _merge_arrays(out: dict, a: dict, b: dict) -> None:
    """Positional items of both sides, each position under both schemas."""
    pa, ra = _array_parts(a)
    pb, rb = _array_parts(b)
    n = max(len(pa), len(pb))
    out["prefixItems"] = [_both(pa[i] if i < len(pa) else ra, pb[i] if i < len(pb) else rb)
                          for i in range(n)]
    out["items"] = _both(ra, rb)
    out.pop("additionalItems", None)


def _merge_key(key, av, bv, a, b, pointer):
    if key == "type":
        ta, tb = type_set(a), type_set(b)
        both = [t for t in _TYPES if t in ta and t in tb]
        if "integer" in both and "number" in both:
            both.remove("integer")
        return both
    if key in _MAXIMA and _num(av) and _num(bv):
        return min(av, bv)
    if key in _MINIMA and _num(av) and _num(bv):
        return max(av, bv)
    if key == "required":
        return list(dict.fromkeys(list(av) + list(bv)))
    if key == "enum":
        return [v for v in av if enum_contains(bv, v)]
    if key in ("additionalProperties", "items", "additionalItems"):
        if isinstance(av, list) or isinstance(bv, list):
            raise UnsupportedSchemaError("allOf with two array-form items cannot be merged",
                                         pointer=pointer, keyword="allOf")
        return {"allOf": [av, bv]}
    if key in ("anyOf", "oneOf"):
        if len(av) * len(bv) > 256:
            raise UnsupportedSchemaError(f"allOf of two {key} lists is too large to expand",
                                         pointer=pointer, keyword="allOf")
        return [{"allOf": [x, y]} for x in av for y in bv]
    if key == "allOf":
        return list(av) + list(bv)
    if key == "multipleOf":
        if _num(av) and _num(bv) and float(av).is_integer() and float(bv).is_integer() \
                and av > 0 and bv > 0:
            return math.lcm(int(av), int(bv))
        raise UnsupportedSchemaError("allOf combines two multipleOf values that are not both "
                                     "integers", pointer=pointer, keyword="allOf")
    if key == "not":        # neither a nor b: not (a or b)
        return {"anyOf": [av, bv]}
    if key == "propertyNames":
        return {"allOf": [av, bv]}
    if key in ("dependentRequired", "dependentSchemas", "dependencies") \
            and isinstance(av, dict) and isinstance(bv, dict):
        return {n: _both_dependencies(av.get(n), bv.get(n)) for n in dict.fromkeys([*av, *bv])}
    if key in ("properties", "patternProperties"):
        return av  # combined in _merge_properties
    if key == "prefixItems":
        if len(av) != len(bv):
            raise UnsupportedSchemaError("allOf of prefixItems of different lengths",
                                         pointer=pointer, keyword="allOf")
        return [{"allOf": [x, y]} for x, y in zip(av, bv)]
    if key in _SAME or key not in _KNOWN_MERGEABLE:
        if key in _SAME:
            raise UnsupportedSchemaError(f"allOf combines two different {key!r} values",
                                         pointer=pointer, keyword="allOf")
        return av  # unknown keyword: an annotation
    return av


def _both_dependencies(x, y):
    """What two dependencies of one property require together."""
    if x is None or y is None:
        return y if x is None else x
    if isinstance(x, list) and isinstance(y, list):
        return list(dict.fromkeys(x + y))
    return {"allOf": [{"required": v} if isinstance(v, list) else v for v in (x, y)]}


_KNOWN_MERGEABLE = frozenset(_MAXIMA + _MINIMA + ("type", "required", "enum", "const", "multipleOf",
                                                  "additionalProperties", "items", "allOf",
                                                  "additionalItems", "anyOf", "oneOf",
                                                  "properties", "patternProperties",
                                                  "prefixItems", "not", "propertyNames",
                                                  "dependentRequired", "dependentSchemas",
                                                  "dependencies") + _CONDITION)


def _merge_properties(out: dict, a: dict, b: dict, pointer: str) -> None:
    _merge_patterns(out, a, b, pointer)
    pa, pb = a.get("properties", {}), b.get("properties", {})
    if not pa and not pb:
        return
    props = {}
    for name in list(pa) + [n for n in pb if n not in pa]:
        sa = pa[name] if name in pa else _other(a, name, pointer)
        sb = pb[name] if name in pb else _other(b, name, pointer)
        props[name] = sa if sb is True else sb if sa is True else {"allOf": [sa, sb]}
    out["properties"] = props


def _merge_patterns(out: dict, a: dict, b: dict, pointer: str) -> None:
    """Both sides' patternProperties (one schema per pattern). Exact while each side's
    additionalProperties still sees the keys it saw: the other side brings no new pattern
    where a side has additionalProperties."""
    qa, qb = a.get("patternProperties") or {}, b.get("patternProperties") or {}
    if not qa or not qb or qa == qb:
        return
    for side, other in ((a, qb), (b, qa)):
        ap = side.get("additionalProperties", True)
        if not (ap is True or ap == {}) and set(other) - set(side.get("patternProperties") or {}):
            raise UnsupportedSchemaError("allOf combines two patternProperties next to "
                                         "additionalProperties", pointer=pointer,
                                         keyword="allOf")
    out["patternProperties"] = {p: _both(qa[p], qb[p]) if p in qa and p in qb
                                else qa.get(p, qb.get(p)) for p in dict.fromkeys([*qa, *qb])}


def _other(schema: dict, name: str, pointer: str):
    """What ``schema`` says about property ``name`` it does not declare: the schemas of the
    patternProperties matching it, or additionalProperties when none does."""
    matching = []
    for pattern, sub in (schema.get("patternProperties") or {}).items():
        try:
            found = re.search(pattern, name) is not None
        except (re.error, TypeError):
            raise UnsupportedSchemaError(f"invalid patternProperties pattern {pattern!r}",
                                         pointer=pointer, keyword="allOf") from None
        if found:
            matching.append(sub)
    if matching:
        return matching[0] if len(matching) == 1 else {"allOf": matching}
    ap = schema.get("additionalProperties", True)
    return True if ap == {} else ap


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


