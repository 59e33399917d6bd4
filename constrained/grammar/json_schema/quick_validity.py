"""Validity of an instance under a schema of scalar keywords, decided without jsonschema.

The converter asks whether enum values and property names pass their schema's other keywords.
Most such schemas say only ``type``, ``pattern``, a length or a bound, or refer to such a
schema, beside annotations and keywords no validator reads; answering those here keeps the
jsonschema package (about 100 ms to import) and a validator per schema out of the compile.
Every answer is the one the Draft 2020-12 validator of jsonschema gives (no format checker:
``format`` never fails); ``None`` means the schema says more and the validator decides.
"""
from __future__ import annotations

import re

from .json_equality import enum_contains, json_equal
from .merge import CONTAINS_ALL

# the keywords a Draft 2020-12 validator evaluates; it ignores every other keyword
VALIDATION_KEYWORDS = frozenset({
    "$dynamicRef", "$ref", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "format", "if", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
    "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern",
    "patternProperties", "prefixItems", "properties", "propertyNames", "required", "type",
    "unevaluatedItems", "unevaluatedProperties", "uniqueItems"})
# ... and the converter's own keywords, which stand for some of those
_READ = VALIDATION_KEYWORDS | {CONTAINS_ALL}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


_JSON_TYPES = {"null": lambda v: v is None, "boolean": lambda v: isinstance(v, bool),
               "string": lambda v: isinstance(v, str), "array": lambda v: isinstance(v, list),
               "object": lambda v: isinstance(v, dict), "number": _is_number,
               "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
               or isinstance(v, float) and v.is_integer()}


def _type(instance, types) -> bool | None:
    names = types if isinstance(types, list) else [types]
    if not all(isinstance(t, str) and t in _JSON_TYPES for t in names):
        return None
    return any(_JSON_TYPES[t](instance) for t in names)


def _enum(instance, values) -> bool | None:
    return enum_contains(values, instance) if isinstance(values, list) else None


def _pattern(instance, pattern) -> bool | None:
    if not isinstance(pattern, str):
        return None
    if not isinstance(instance, str):
        return True
    try:
        return re.search(pattern, instance) is not None
    except re.error:
        return None


def _length(test):
    def check(instance, bound) -> bool | None:
        if not _is_count(bound):
            return None
        return not isinstance(instance, str) or test(len(instance), bound)
    return check


def _bound(test):
    def check(instance, bound) -> bool | None:
        if not _is_number(bound):
            return None
        return not _is_number(instance) or test(instance, bound)
    return check


def _all_of(instance, subs, resolve, depth) -> bool | None:
    if not isinstance(subs, list) or not subs:
        return None
    return _conjunction(quick_validity(instance, s, resolve, depth) for s in subs)


def _any_of(instance, subs, resolve, depth) -> bool | None:
    if not isinstance(subs, list) or not subs:
        return None
    results = [quick_validity(instance, s, resolve, depth) for s in subs]
    return None if None in results else any(results)


def _one_of(instance, subs, resolve, depth) -> bool | None:
    if not isinstance(subs, list) or not subs:
        return None
    results = [quick_validity(instance, s, resolve, depth) for s in subs]
    return None if None in results else sum(results) == 1


def _not(instance, sub, resolve, depth) -> bool | None:
    result = quick_validity(instance, sub, resolve, depth)
    return None if result is None else not result


def _ref(instance, uri, resolve, depth) -> bool | None:
    if resolve is None or not isinstance(uri, str) or depth >= MAX_REFS:
        return None
    try:
        target = resolve(uri)
    except Exception:  # noqa: BLE001 - an unresolvable reference: the validator decides
        return None
    return quick_validity(instance, target, resolve, depth + 1)


# applicators: their subschemas are judged the same way (references followed up to MAX_REFS
# deep, so a reference cycle ends undecided)
_APPLICATORS = {"allOf": _all_of, "anyOf": _any_of, "oneOf": _one_of, "not": _not, "$ref": _ref}
MAX_REFS = 16


_CHECKS = {
    "type": _type,
    "enum": _enum,
    "const": lambda instance, value: json_equal(instance, value),
    "format": lambda instance, name: True if isinstance(name, str) else None,
    "pattern": _pattern,
    "minLength": _length(lambda n, b: n >= b),
    "maxLength": _length(lambda n, b: n <= b),
    "minimum": _bound(lambda v, b: v >= b),
    "maximum": _bound(lambda v, b: v <= b),
    "exclusiveMinimum": _bound(lambda v, b: v > b),
    "exclusiveMaximum": _bound(lambda v, b: v < b),
}


def _conjunction(results) -> bool | None:
    """False when any result is False, else None when any is unknown, else True."""
    unknown = False
    for r in results:
        if r is False:
            return False
        unknown |= r is None
    return None if unknown else True


def quick_validity(instance, schema, resolve=None, depth: int = 0) -> bool | None:
    """Whether ``instance`` is valid under ``schema``, or None when that rests on a keyword
    other than the scalar ones above and the applicators (an object or array keyword, a
    reference without ``resolve``). ``resolve(uri)`` returns the schema a ``$ref`` names
    (it may raise: the validator then decides)."""
    if schema is True or schema is False:
        return schema
    if not isinstance(schema, dict):
        return None
    results = []
    for key, value in schema.items():
        if key in _READ:
            applicator = _APPLICATORS.get(key)
            if applicator is not None:
                results.append(applicator(instance, value, resolve, depth))
                continue
            check = _CHECKS.get(key)
            results.append(None if check is None else check(instance, value))
    return _conjunction(results)
