"""The schema algebra (not, if/then/else, oneOf, dependencies, contains) against jsonschema.

Each schema of data/algebra_cases.json is converted; random instances (and a fixed set of
edge values) must be accepted by the grammar exactly when jsonschema validates them. The
grammar is read by an independent Earley recognizer, so this checks the converter alone.
"""
from __future__ import annotations

import json
import random
import zlib
from pathlib import Path

import jsonschema
import pytest

from constrained.grammar.json_schema import schema_to_grammar
from json_schema_lark_oracle import EarleyOracle, reorder
from random_schemas import random_value

CASES = json.loads((Path(__file__).parent / "data" / "algebra_cases.json").read_text())
SCALARS = [None, True, False, 0, 1, 2, 3, -1, -4, 5, 41, 2.5, 0.5, -2.5, 1.0, 1e-3, "", "a",
           "b", "ab", "abc", "ba", "bc", "bbc", "xyz", "é", "a\n", "a/b", "2020-01-01", "x"]
KEYS = ["a", "b", "c", "ab", "x"]


def instances(seed: int, n: int = 300) -> list:
    rng = random.Random(seed)
    fixed = SCALARS + [[], {}, ["a"], [1, 1], [1, "a", 1], {"a": 1}, {"a": "x", "b": 2},
                       {"a": 1, "b": "s", "c": None}, {"ab": "s"}, {"ab": 3}, {"c": 1},
                       ["a", 1, 2], [1, 2, 3, 4, 5], {"a": {"a": {}}}, {"a": {"a": 1}}]
    return fixed + [random_value(rng, 0, SCALARS, KEYS) for _ in range(n)]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_algebra_matches_jsonschema(case):
    schema = case["schema"]
    grammar = schema_to_grammar(schema, property_order="any", integer_spelling="any")
    oracle = EarleyOracle(grammar)
    validator = jsonschema.validators.validator_for(schema)(schema)
    wrong = []
    for i, value in enumerate(instances(zlib.crc32(case["name"].encode()))):
        text = json.dumps(reorder(schema, value), ensure_ascii=False)
        expected = validator.is_valid(value)
        if oracle.accepts(text) != expected:
            wrong.append((text, "valid" if expected else "invalid"))
    assert not wrong, f"{len(wrong)} disagreements, e.g. {wrong[:5]}"


def test_integer_literals_by_default():
    oracle = EarleyOracle(schema_to_grammar({"type": "integer"}))
    assert oracle.accepts("20") and oracle.accepts("-3")
    assert not oracle.accepts("20.0") and not oracle.accepts("2e1")
    spelled = EarleyOracle(schema_to_grammar({"type": "integer"}, integer_spelling="any",
                                             max_fraction_zeros=3))
    assert spelled.accepts("20.0") and spelled.accepts("20.000")
    assert not spelled.accepts("20.0000") and not spelled.accepts("20.5")
    numbers = EarleyOracle(schema_to_grammar({"type": "number"}))
    assert numbers.accepts("20.0") and numbers.accepts("2e1")


def test_unknown_formats_are_listed_annotations():
    g = schema_to_grammar({"properties": {"c": {"type": "string", "format": "color"},
                                          "u": {"type": "string", "format": "uri-template"}}})
    assert set(g.format_annotations) == {("/properties/c", "color"),
                                         ("/properties/u", "uri-template")}
    assert EarleyOracle(g).accepts('{"c": "not a color"}')
    from constrained.errors import UnsupportedSchemaError
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar({"properties": {"c": {"type": "string", "format": "color"}}},
                          strict_formats=True)
    assert e.value.pointer == "/properties/c/format"


def test_complement_refusals_name_the_place():
    from constrained.errors import UnsupportedSchemaError
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar({"properties": {"p": {"not": {"uniqueItems": True}}}})
    assert e.value.pointer == "/properties/p/not/uniqueItems"


def test_complement_pruning_tells_member_names_from_annotations():
    """Branches differing only under a member named like an annotation keyword stay apart."""
    schema = {"oneOf": [
        {"required": ["a"], "properties": {"a": {"properties": {"title": {"type": "string"}}}}},
        {"required": ["a"], "properties": {"a": {"properties": {"title": {"type": "integer"}}}}},
    ]}
    oracle = EarleyOracle(schema_to_grammar(schema, property_order="any"))
    validator = jsonschema.Draft202012Validator(schema)
    for value in [{"a": {"title": "s"}}, {"a": {"title": 1}}, {"a": {}}, {"a": {"title": None}},
                  {"a": 1}, {}, {"b": 1}]:
        assert oracle.accepts(json.dumps(value)) == validator.is_valid(value), value


def test_oneof_of_many_overlapping_object_branches_compiles():
    """Eight branches told apart by one required member each, sharing typed optional members:
    each branch's complement of the others stays small once the contradictions are pruned."""
    names = ["a", "b", "c", "ab", "x", "k5", "k6", "k7"]
    shared = {"x": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "array"}}
    branches = [{"type": "object", "required": [n],
                 "properties": {**shared, n: {"type": "boolean"} if n not in shared else shared[n]}}
                for n in names]
    schema = {"oneOf": branches}
    oracle = EarleyOracle(schema_to_grammar(schema, property_order="any"))
    validator = jsonschema.Draft202012Validator(schema)
    wrong = [v for v in instances(8, 400)
             if oracle.accepts(json.dumps(reorder(schema, v))) != validator.is_valid(v)]
    assert not wrong, wrong[:5]


def test_oneof_discriminated_branches_need_no_complement():
    """Branches told apart by a member one of them requires (a discriminator) are disjoint
    within the type beside the oneOf: each becomes its own alternative, with no complement of
    the others. Without that type, non-objects match both branches and they overlap."""
    from constrained.grammar.json_schema.converter import Converter
    from constrained.grammar.json_schema.oneof import disjoint
    from constrained.grammar.json_schema.options import SchemaOptions
    kind_a = {"required": ["kind"], "properties": {"kind": {"const": "a"}, "n": {}}}
    kind_b = {"properties": {"kind": {"enum": ["b", "c"]}}}
    cv = Converter({}, SchemaOptions(), owned=True)
    assert disjoint(kind_a, kind_b, cv, within={"type": "object"})
    assert disjoint(kind_b, kind_a, cv, within={"type": "object"})
    assert not disjoint(kind_a, kind_b, cv)
    assert not disjoint(kind_a, kind_b, cv, within={"type": ["object", "string"]})
    optional = {"properties": {"kind": {"const": "a"}}}    # neither side requires it
    assert not disjoint(optional, kind_b, cv, within={"type": "object"})
    small = schema_to_grammar({"type": "object", "oneOf": [kind_a, kind_b]})
    big = schema_to_grammar({"type": ["object", "string"], "oneOf": [kind_a, kind_b]})
    assert len(small.rules) < len(big.rules)
