"""JSON equality (1 == 1.0, true != 1, objects by members, arrays by order) and enum membership
in constant time: a schema's ``enum`` becomes a set of hashable keys once, so checking each of
its N values against it costs N lookups, not N * N comparisons."""
from __future__ import annotations

from ...lru import LRUCache

_SMALL = 8                      # shorter enums are compared value by value
_SETS = LRUCache(256)           # id(enum list) -> (the list, frozenset of keys)


def json_equal(a, b) -> bool:
    """JSON equality: 1 == 1.0, true != 1, objects by members, arrays by order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def json_key(value):
    """A hashable key equal for JSON-equal values (and only for them)."""
    if value is None:
        return ("z",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)         # 1 and 1.0 are equal and hash alike
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(json_key(x) for x in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, json_key(x)) for k, x in value.items()))
    return ("o", id(value))         # not a JSON value: equal to itself only


def enum_contains(values: list, instance) -> bool:
    """Whether ``instance`` is JSON-equal to one of ``values``."""
    if len(values) < _SMALL:
        return any(json_equal(instance, v) for v in values)
    entry = _SETS.get(id(values))
    if entry is None or entry[0] is not values:
        entry = (values, frozenset(json_key(v) for v in values))
        _SETS.put(id(values), entry)
    return json_key(instance) in entry[1]
