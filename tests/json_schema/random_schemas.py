"""Test helper: random JSON Schemas and random JSON values over a small shared domain.

Schemas combine every keyword the converter takes (types, bounds, lengths, patterns, enums,
multipleOf, objects, arrays, contains, not, anyOf, oneOf, allOf, if/then/else, dependencies,
unevaluated*), so tests can compare the converter with jsonschema on schemas nobody wrote by
hand. Values share the schemas' small vocabulary of keys, strings and numbers, so both valid
and invalid instances come up.
"""
from __future__ import annotations

import random

KEYS = ["a", "b", "c", "ab"]
STRINGS = ["", "a", "b", "ab", "abc", "ba", "xyz", "é", "a b", "2020-01-01"]
NUMBERS = [0, 1, 2, 3, 6, -1, -4, 10, 2.5, 0.5, -2.5, 1.0]
PATTERNS = ["^a", "b$", "^[ab]+$", "a.c", "^$", "[0-9]"]
SCALARS = [None, True, False] + NUMBERS + STRINGS


def random_value(rng: random.Random, depth: int = 0, scalars=SCALARS, keys=KEYS):
    """A JSON value at most two containers deep, from ``scalars`` and ``keys``."""
    roll = rng.random()
    if depth >= 2 or roll < 0.5:
        return rng.choice(scalars)
    if roll < 0.75:
        return [random_value(rng, depth + 1, scalars, keys) for _ in range(rng.randint(0, 4))]
    return {k: random_value(rng, depth + 1, scalars, keys)
            for k in rng.sample(keys, rng.randint(0, min(3, len(keys))))}


def random_schema(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth >= 3 or roll < 0.45:
        return _leaf(rng)
    if roll < 0.6:
        return _object(rng, depth)
    if roll < 0.72:
        return _array(rng, depth)
    return _combinator(rng, depth)


def _leaf(rng: random.Random):
    kind = rng.choice(["string", "number", "integer", "enum", "type", "bool"])
    if kind == "bool":
        return rng.choice([True, False, {}])
    if kind == "enum":
        values = rng.sample(SCALARS, rng.randint(1, 4))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if kind == "type":
        return {"type": rng.sample(["null", "boolean", "string", "number", "integer", "object",
                                    "array"], rng.randint(1, 3))}
    s: dict = {"type": kind} if rng.random() < 0.7 else {}
    if kind == "string":
        if rng.random() < 0.5:
            s["minLength"] = rng.randint(0, 2)
        if rng.random() < 0.5:
            s["maxLength"] = rng.randint(1, 3)
        if rng.random() < 0.4:
            s["pattern"] = rng.choice(PATTERNS)
    else:
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if rng.random() < 0.25:
                s[key] = rng.choice([-2, 0, 1, 2.5, 3])
        if rng.random() < 0.2:
            s["multipleOf"] = rng.choice([2, 3])
    return s


def _object(rng: random.Random, depth: int) -> dict:
    s: dict = {"type": "object"} if rng.random() < 0.7 else {}
    names = rng.sample(KEYS, rng.randint(0, 3))
    if names:
        s["properties"] = {n: random_schema(rng, depth + 1) for n in names}
    if rng.random() < 0.4:
        s["required"] = rng.sample(KEYS, rng.randint(1, 2))
    roll = rng.random()
    if roll < 0.2:
        s["additionalProperties"] = False
    elif roll < 0.35:
        s["additionalProperties"] = random_schema(rng, depth + 1)
    if rng.random() < 0.15:
        s["patternProperties"] = {"^a": random_schema(rng, depth + 1)}
    if rng.random() < 0.15:
        s["dependentRequired"] = {rng.choice(KEYS): [rng.choice(KEYS)]}
    if rng.random() < 0.1:
        s["dependentSchemas"] = {rng.choice(KEYS): random_schema(rng, depth + 1)}
    if rng.random() < 0.1:
        s["minProperties"] = rng.randint(1, 2)
    if rng.random() < 0.1:
        s["maxProperties"] = rng.randint(1, 2)
    if rng.random() < 0.1:
        s["unevaluatedProperties"] = rng.choice([False, {"type": "integer"}])
    return s


def _array(rng: random.Random, depth: int) -> dict:
    s: dict = {"type": "array"} if rng.random() < 0.7 else {}
    if rng.random() < 0.3:
        s["prefixItems"] = [random_schema(rng, depth + 1) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.6:
        s["items"] = random_schema(rng, depth + 1)
    if rng.random() < 0.3:
        s["minItems"] = rng.randint(0, 2)
    if rng.random() < 0.3:
        s["maxItems"] = rng.randint(1, 3)
    if rng.random() < 0.3:
        s["contains"] = random_schema(rng, depth + 1)
        if rng.random() < 0.4:
            s["minContains"] = rng.randint(0, 2)
        if rng.random() < 0.4:
            s["maxContains"] = rng.randint(1, 2)
    if rng.random() < 0.1:
        s["unevaluatedItems"] = rng.choice([False, {"type": "string"}])
    return s


def _combinator(rng: random.Random, depth: int) -> dict:
    kind = rng.choice(["not", "anyOf", "oneOf", "allOf", "if"])
    if kind == "not":
        return {"not": random_schema(rng, depth + 1)}
    if kind == "if":
        s = {"if": random_schema(rng, depth + 1)}
        if rng.random() < 0.8:
            s["then"] = random_schema(rng, depth + 1)
        if rng.random() < 0.6:
            s["else"] = random_schema(rng, depth + 1)
        return s
    return {kind: [random_schema(rng, depth + 1) for _ in range(rng.randint(2, 3))]}
