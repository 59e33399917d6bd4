"""Disjointness of oneOf branches: when no instance can match two branches, oneOf = anyOf."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .merge import type_set

if TYPE_CHECKING:
    from .converter import Converter

_ALL = {"null", "boolean", "object", "array", "number", "string", "integer"}


def _types(s: dict) -> set[str]:
    if "const" in s or "enum" in s:
        vals = [s["const"]] if "const" in s else list(s.get("enum") or [])
        return {_type_of(v) for v in vals}
    t = type_set(s)
    return set(_ALL) if t is None else t


def _type_of(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int) or isinstance(v, float) and v.is_integer():
        return "integer"
    if isinstance(v, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(v)]


def disjoint(a, b, cv: "Converter", depth: int = 0, within: dict | None = None) -> bool:
    """True only when provably no instance is valid under both schemas (flattened) and under
    ``within`` (the keywords beside a oneOf: branches often leave ``type`` to their parent)."""
    if a is False or b is False:
        return True
    if not isinstance(a, dict) or not isinstance(b, dict) or depth > 4:
        return False
    ta, tb = _types(a), _types(b)
    common = ta & tb
    if "number" in ta and "integer" in tb or "number" in tb and "integer" in ta:
        common.add("integer")
    if isinstance(within, dict):
        common &= _types(within)
    if not common:
        return True
    for x, y in ((a, b), (b, a)):
        if "const" in x or "enum" in x:
            vals = [x["const"]] if "const" in x else list(x.get("enum") or [])
            if not any(cv.validates(v, y) for v in vals):
                return True
    if common == {"object"}:
        return _objects_disjoint(a, b, cv, depth)
    return False


def _objects_disjoint(a: dict, b: dict, cv, depth: int) -> bool:
    """Objects valid under both would hold a member one side requires, whose value both
    sides' ``properties`` constrain (a discriminator), or only names both sides allow."""
    pa, pb = a.get("properties") or {}, b.get("properties") or {}
    ra, rb = set(a.get("required") or []), set(b.get("required") or [])
    for name in dict.fromkeys([*(a.get("required") or []), *(b.get("required") or [])]):
        if isinstance(name, str) and name in pa and name in pb:
            sa = cv._flatten(pa[name], "", frozenset())
            sb = cv._flatten(pb[name], "", frozenset())
            if disjoint(sa, sb, cv, depth + 1):
                return True
    for x, rx, y in ((a, ra, b), (b, rb, a)):
        if y.get("additionalProperties") is False and not y.get("patternProperties"):
            py = y.get("properties") or {}
            if any(r not in py for r in rx):
                return True
    return False
