"""Enum membership by hashed keys against JSON equality compared value by value."""
import random

from constrained.grammar.json_schema.json_equality import enum_contains, json_equal, json_key


def _value(rng: random.Random, depth: int = 0):
    kind = rng.choice(["int", "float", "bool", "null", "str"] + (["list", "dict"] if depth < 2
                                                                  else []))
    if kind == "int":
        return rng.randint(-2, 2)
    if kind == "float":
        return rng.choice([0.0, 1.0, -1.0, 0.5, 2.0])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "str":
        return rng.choice(["", "a", "1", "true"])
    if kind == "list":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    return {rng.choice("ab"): _value(rng, depth + 1) for _ in range(rng.randint(0, 2))}


def test_json_equality_cases():
    assert json_equal(1, 1.0) and json_key(1) == json_key(1.0)
    assert not json_equal(True, 1) and json_key(True) != json_key(1)
    assert not json_equal(0, False) and json_key(0) != json_key(False)
    assert json_equal({"a": [1, None]}, {"a": [1.0, None]})
    assert json_key({"a": [1, None]}) == json_key({"a": [1.0, None]})
    assert not json_equal([1, 2], [2, 1]) and json_key([1, 2]) != json_key([2, 1])
    assert not json_equal("1", 1) and json_key("1") != json_key(1)


def test_enum_membership_matches_comparing_every_value():
    rng = random.Random(3)
    for _ in range(300):
        values = [_value(rng) for _ in range(rng.randint(0, 20))]
        for _ in range(10):
            probe = _value(rng)
            want = any(json_equal(probe, v) for v in values)
            assert enum_contains(values, probe) == want, (values, probe)
