"""Unit tests of the JSON Schema converter, checked with an exact Earley oracle."""
from __future__ import annotations

import json

import jsonschema
import pytest

from constrained import Grammar
from constrained.errors import (EmptyLanguageError, GrammarError, LimitExceededError,
                                UnsupportedSchemaError)
from constrained.grammar.json_schema import SchemaOptions, schema_to_grammar
from json_schema_lark_oracle import EarleyOracle, LarkOracle, to_lark


def _check(schema, valid, invalid, **options):
    g = schema_to_grammar(schema, **options)
    oracle = EarleyOracle(g)
    for v in valid:
        jsonschema.validate(v, schema if isinstance(schema, dict) else {})
        assert oracle.accepts(json.dumps(v)), (schema, v)
    for v in invalid:
        assert not oracle.accepts(json.dumps(v)), (schema, v)
    return g, oracle


def test_json_schema_scalar_types():
    _check({"type": "null"}, [None], [0, "", False])
    _check({"type": "boolean"}, [True, False], [None, 0])
    _check({"type": "string"}, ["", "a\"b\\c\n", "é\U0001F600"], [1, None])
    _check({"type": "integer"}, [0, -5, 12345], [1.5, "1", None, 3.0])  # integer literals
    _check({"type": "number"}, [0, -5.25, 1e-7, 12], ["1", None])
    _check({"type": ["string", "null"]}, ["x", None], [1, True])


def test_json_schema_integer_ranges_exact():
    schema = {"type": "integer", "minimum": -12, "exclusiveMaximum": 105}
    _check(schema, [-12, -1, 0, 9, 10, 99, 104], [-13, 105, 1000, -100, 4.5])
    _check({"type": "integer", "exclusiveMinimum": 7}, [8, 70, 10**20], [7, 0, -8])
    _check({"type": "integer", "minimum": 1.5, "maximum": 3.5}, [2, 3], [1, 4])


def test_json_schema_number_bounds():
    _check({"type": "number", "minimum": 0, "maximum": 1}, [0, 0.5, 1, 1.0, 0.999],
           [-0.1, 1.01, 2])
    _check({"type": "number", "exclusiveMinimum": -2.5, "maximum": 3.25},
           [-2.4, 0, 3.25, 3.2], [-2.5, -3, 3.26, 4])


def test_json_schema_string_lengths_pattern_format():
    _check({"type": "string", "minLength": 2, "maxLength": 3}, ["ab", "abc", "é\n"],
           ["a", "abcd"])
    _check({"type": "string", "pattern": "^[a-z]+-[0-9]{2}$"}, ["ab-12"], ["ab-1", "Ab-12"])
    _check({"type": "string", "pattern": "[0-9]"}, ["a1b", "9"], ["abc", ""])
    # anchors inside alternatives and groups (Python's parser factors a shared ^ out)
    _check({"type": "string", "pattern": r"^$|^([0-9]{1,3}\.){3}[0-9]{1,3}(/[0-9]{2})?$"},
           ["", "10.0.0.1", "255.255.255.0/24"], ["x", "10.0.0", " 10.0.0.1", "1.2.3.4/5"])
    _check({"type": "string", "pattern": "(^a|b$)"}, ["ax", "xb", "ab"], ["xa", "bx", ""])
    _check({"type": "string", "pattern": "(^a|b$)c"}, ["ac", "acx"], ["bc", "xac", "b"])
    _check({"type": "string", "pattern": "^(ab|cd)$"}, ["ab", "cd"], ["abcd", "ab "])
    _check({"type": "string", "format": "date"}, ["2024-02-29", "1999-12-31"],
           ["2023-02-29", "2024-13-01", "x"])
    _check({"type": "string", "format": "date-time"}, ["2024-01-02T03:04:05Z",
                                                      "2024-01-02T03:04:05.123+05:30"],
           ["2024-01-02 03:04:05", "2024-01-02T25:00:00Z"])
    _check({"type": "string", "format": "uuid"}, ["123e4567-e89b-12d3-a456-426614174000"],
           ["123e4567e89b12d3a456426614174000"])
    _check({"type": "string", "format": "email"}, ["a.b@example.com"], ["a@", "@b.com", "a"])
    _check({"type": "string", "format": "ipv4"}, ["192.168.0.1"], ["256.1.1.1", "1.2.3"])
    _check({"type": "string", "format": "ipv6"}, ["::1", "2001:db8::1"], ["1:::2"])
    _check({"type": "string", "format": "uri"}, ["https://x.org/a?b#c"], ["no scheme"])
    _check({"type": "string", "format": "hostname"}, ["a-b.example.com"], ["-a.com", "a..b"])
    _check({"type": "string", "format": "time"}, ["12:30:00Z"], ["12:30"])


def test_json_schema_unknown_format_is_annotation():
    _check({"type": "string", "format": "int32"}, ["anything"], [1])


def test_json_schema_enum_const():
    _check({"enum": ["a", 1, None, [1, 2], {"k": "v"}]}, ["a", 1, None, [1, 2], {"k": "v"}],
           ["b", 2, [1], {"k": "w"}])
    _check({"const": "x\"y"}, ["x\"y"], ["x"])
    _check({"type": "string", "enum": ["a", 1]}, ["a"], [1])


def test_json_schema_object_properties_required_order():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                               "c": {"type": "boolean"}},
              "required": ["b"], "additionalProperties": False}
    _check(schema, [{"b": "x"}, {"a": 1, "b": "x"}, {"b": "x", "c": True},
                    {"a": 1, "b": "", "c": False}],
           [{}, {"a": 1}, {"b": 1}, {"b": "x", "d": 1}, {"a": 1, "b": "x", "c": 1}])
    g = schema_to_grammar(schema)
    assert not EarleyOracle(g).accepts('{"a": 1, "b": "x",}')
    assert not EarleyOracle(g).accepts('{, "b": "x"}')


def test_json_schema_many_optional_properties_stay_linear():
    props = {f"p{i}": {"type": "integer"} for i in range(60)}
    g = schema_to_grammar({"type": "object", "properties": props,
                           "additionalProperties": False})
    assert len(g.rules) < 400
    o = EarleyOracle(g)
    assert o.accepts(json.dumps({"p3": 1, "p40": 2, "p59": 3}))
    assert not o.accepts(json.dumps({"p40": 2, "p3": 1}))  # schema order


def test_json_schema_additional_properties():
    base = {"type": "object", "properties": {"a": {"type": "integer"}}}
    _check(base, [{"a": 1, "x": [1, {"y": None}]}, {"x": 1, "a": 2}, {}], [{"a": "s"}])
    _check({**base, "additionalProperties": {"type": "string"}}, [{"a": 1, "b": "s"}],
           [{"a": 1, "b": 2}, {"a": "s"}])
    _check(base, [{"a": 1}], [{"a": 1, "x": 1}], strict_properties=True)


def test_json_schema_pattern_properties_and_property_names():
    _check({"type": "object", "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": False},
           [{"x-a": 1, "x-b": 2}, {}], [{"x-a": "s"}, {"y": 1}])
    _check({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
           [{"ab": 1}, {}], [{"Ab": 1}])


def test_json_schema_min_max_properties():
    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 1}
    _check(schema, [{"a": 1}, {"b": 2}], [{}])
    _check({"type": "object", "minProperties": 2}, [{"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}],
           [{"a": 1}, {}])
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar({"type": "object", "minProperties": 10**6})
    assert e.value.pointer == "/minProperties"


def test_json_schema_arrays():
    _check({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
           [[1], [1, 2, 3]], [[], [1, 2, 3, 4], ["a"]])
    _check({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": False}, [["a", 1], ["a"], []], [["a", 1, 2], [1]])
    _check({"type": "array", "prefixItems": [{"type": "string"}], "minItems": 3},
           [["a", 1, None]], [["a", 1], [1, 2, 3]])
    _check({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
            "items": [{"type": "string"}], "additionalItems": False},
           [["a"], []], [["a", "b"]])


def test_json_schema_any_of_one_of_all_of():
    _check({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}, ["a", 5],
           [4, None])
    _check({"oneOf": [{"type": "string"}, {"type": "array"}]}, ["a", []], [1])
    _check({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}, "x": {}},
                       "required": ["k"]},
                      {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}]},
           [{"k": "a", "x": 1}, {"k": "b"}], [{"k": "c"}])
    _check({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}},
                       "required": ["a"]},
                      {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
           [{"a": 1, "b": "x"}], [{"a": 1}, {"b": "x"}, {"a": "1", "b": "x"}])
    _check({"type": ["integer", "null"], "allOf": [{"minimum": 3}, {"maximum": 5}]},
           [3, 5, None], [2, 6])


def test_json_schema_one_of_overlap_is_exact():
    schema = {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}
    _check(schema, [-3, -40, 2.5, 0.5], [3, 0, -2.5, "x"])


def test_json_schema_refused_keyword_is_dropped_when_lenient():
    schema = {"type": "array", "uniqueItems": True}
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar(schema)
    assert e.value.pointer == "/uniqueItems" and e.value.keyword == "uniqueItems"
    g = schema_to_grammar(schema, lenient=True)
    assert ("/uniqueItems", "uniqueItems") in g.dropped


def test_json_schema_refs_and_recursion():
    tree = {"$defs": {"node": {"type": "object",
                               "properties": {"v": {"type": "integer"},
                                              "kids": {"type": "array",
                                                       "items": {"$ref": "#/$defs/node"}}},
                               "required": ["v"], "additionalProperties": False}},
            "$ref": "#/$defs/node"}
    deep = {"v": 0}
    for i in range(30):
        deep = {"v": i, "kids": [deep, {"v": -1}]}
    _check(tree, [{"v": 1}, {"v": 1, "kids": [{"v": 2, "kids": []}]}, deep],
           [{"v": 1, "kids": [{"w": 2}]}])
    _check({"definitions": {"a": {"type": "integer"}}, "properties": {"x": {"$ref": "#/definitions/a"}}},
           [{"x": 1}], [{"x": "1"}])


def test_json_schema_reference_spelt_with_escapes_is_resolved():
    # the key "$ref" written with a JSON escape: the text shows no "ref" but refers
    text = ('{"properties": {"x": {"$r\\u0065f": "#/$defs/a"}}, '
            '"$defs": {"a": {"type": "integer"}}}')
    schema = json.loads(text)
    assert "$ref" in schema["properties"]["x"]
    g = schema_to_grammar(text)
    oracle = EarleyOracle(g)
    assert oracle.accepts('{"x": 1}') and not oracle.accepts('{"x": "1"}')


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"items": {"enum": [1, 2]}}}},
    {"$id": "https://example.com/s.json", "properties": {"ref": {"type": "integer"}}},
    {"properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$anchor": "a", "type": "null"}}},
])
def test_json_schema_index_walk_skipped_only_without_references(schema):
    from constrained.grammar.json_schema.converter import Converter
    from constrained.grammar.json_schema.refs import may_refer
    text = json.dumps(schema)
    options = SchemaOptions()
    with_walk = Converter(json.loads(text), options, owned=True)
    rules = (with_walk.start(), with_walk.b.rules, with_walk.b.terminals)
    without = Converter(json.loads(text), options, owned=True, refers=may_refer(text))
    assert (without.start(), without.b.rules, without.b.terminals) == rules
    assert may_refer(text) == ("$ref" in text or '"ref"' in text)


def test_json_schema_boolean_and_empty_schemas():
    _check(True, [1, "a", [None, {"a": {}}]], [])
    _check({}, [1, "a", [None, {"a": {}}]], [])
    empty_member = {"type": "object", "properties": {"a": {"enum": []}}, "required": ["a"]}
    for schema, pointer in ((False, ""), (empty_member, "/properties/a")):
        with pytest.raises(EmptyLanguageError) as err:
            schema_to_grammar(schema)
        assert err.value.pointer == pointer


@pytest.mark.parametrize("keyword,schema", [
    ("uniqueItems", {"type": "array", "uniqueItems": True}),
    ("multipleOf", {"type": "number", "multipleOf": 0.5}),
    ("not", {"not": {"type": "array", "uniqueItems": True}}),
    ("$dynamicRef", {"$dynamicRef": "#node"}),
])
def test_json_schema_unsupported_keywords_raise_with_pointer(keyword, schema):
    nested = {"type": "object", "properties": {"p": schema}}
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar(nested)
    assert e.value.pointer.startswith("/properties/p/")
    assert e.value.keyword == keyword
    g = schema_to_grammar(nested, lenient=True)
    assert any(k == keyword and p.startswith("/properties/p") for p, k in g.dropped)


def test_json_schema_remote_ref_is_refused():
    with pytest.raises(UnsupportedSchemaError):
        schema_to_grammar({"$ref": "https://example.com/other.json"})


def test_json_schema_whitespace_modes():
    value = {"a": [1, {"b": None}], "c": "x"}
    schema = {"type": "object"}
    flex = EarleyOracle(schema_to_grammar(schema))
    assert flex.accepts(json.dumps(value)) and flex.accepts(json.dumps(value, indent=2))
    assert not flex.accepts(json.dumps(value).replace(": ", ":" + " " * 40))
    compact = EarleyOracle(schema_to_grammar(schema, whitespace="compact"))
    assert compact.accepts(json.dumps(value, separators=(",", ":")))
    assert not compact.accepts(json.dumps(value))
    seps = EarleyOracle(schema_to_grammar(schema, whitespace="compact", separators=(", ", ": ")))
    assert seps.accepts(json.dumps(value)) and not seps.accepts(json.dumps(value, indent=1))
    schema = {"type": "object", "properties": {"a": {"type": "array"}, "c": {}}}
    ind = EarleyOracle(schema_to_grammar(schema, whitespace="indented", indent=2))
    assert ind.accepts(json.dumps(value, indent=2)) and ind.accepts(json.dumps({}, indent=2))
    assert not ind.accepts(json.dumps(value)) and not ind.accepts(json.dumps(value, indent=4))
    with pytest.raises(ValueError):
        SchemaOptions(whitespace="pretty")


def test_json_schema_limits_raise():
    with pytest.raises(LimitExceededError):
        schema_to_grammar({"type": "array", "minItems": 10**6})
    with pytest.raises(UnsupportedSchemaError) as err:
        schema_to_grammar({"properties": {"a": {"type": "string", "maxLength": 10**6,
                                                "pattern": "^a"}}}, max_string_length=50)
    assert err.value.pointer == "/properties/a/maxLength"
    g = schema_to_grammar({"type": "string", "maxLength": 10**6, "pattern": "^a"},
                          max_string_length=50, lenient=True)
    assert ("/maxLength", "maxLength") in g.dropped
    o = EarleyOracle(g)
    assert o.accepts(json.dumps("a" * 50)) and not o.accepts(json.dumps("a" * 51))


def test_json_schema_huge_length_bounds_stay_small():
    """Plain strings with huge bounds are counted in binary: few rules, exact lengths."""
    for lo, hi in ((0, 10**30), (10**30, None), (40, 2**31 - 1)):
        schema = {"type": "string", "minLength": lo}
        if hi is not None:
            schema["maxLength"] = hi
        g = schema_to_grammar(schema)
        assert len(g.rules) < 400
    o = EarleyOracle(schema_to_grammar({"type": "string", "minLength": 40,
                                        "maxLength": 2**31 - 1}))
    assert o.accepts(json.dumps("a" * 40)) and o.accepts(json.dumps("a" * 300))
    assert not o.accepts(json.dumps("a" * 39))


def test_json_schema_grammar_classmethods_and_pydantic():
    pydantic = pytest.importorskip("pydantic")

    class Item(pydantic.BaseModel):
        name: str
        price: float = 0.0
        tags: list[str] = []
        parent: "Item | None" = None

    g = Grammar.from_pydantic(Item)
    o = EarleyOracle(g)
    good = Item(name="x", tags=["a"], parent=Item(name="p")).model_dump_json()
    assert o.accepts(json.dumps(json.loads(good)))
    assert not o.accepts(json.dumps({"price": 1.0}))
    g2 = Grammar.from_json_schema('{"type": "integer"}')
    assert isinstance(g2, Grammar) and g2.source == "json_schema"
    with pytest.raises(GrammarError):
        Grammar.from_json_schema("{not json")


def test_json_schema_lark_text_export_parses():
    g = schema_to_grammar({"type": "object", "properties": {"a": {"enum": ["x", "y"]}}})
    assert "start:" in to_lark(g)
    assert LarkOracle(g).accepts('{"a": "x"}')


def test_json_schema_one_of_exact_special_forms():
    _check({"oneOf": [{"enum": ["r", "o", 6]}, {"enum": ["b", "o", 6, 3]}]}, ["r", 3, "b"],
           ["o", 6, "x"])
    _check({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}], "additionalProperties": False},
           [{"a": 1}, {"b": 1, "c": 2}], [{"a": 1, "b": 2}, {}, {"c": 1}])


def test_json_schema_number_multiple_of_one_is_integer():
    _check({"type": "number", "multipleOf": 1}, [3, -7], [3.5])


def test_json_schema_finite_sets_checked_by_validation_and_not_type():
    _check({"allOf": [{"enum": [[1], [True], 3]}, {"not": {"enum": [[True]]}}]}, [[1], 3],
           [[True]])
    _check({"enum": [1, 2, 3, 4], "not": {"multipleOf": 2}}, [1, 3], [2, 4])
    _check({"not": {"type": ["string", "object"]}}, [1, None, [1]], ["a", {}])
    _check({"type": "number", "not": {"type": "integer"}}, [2.5, -0.5], [2, 2.0, -3, "a"])


def test_json_schema_strict_formats_refuse_what_is_not_enforced():
    nested = {"type": "object", "properties": {"p": {"type": "string", "format": "regex"}}}
    with pytest.raises(UnsupportedSchemaError) as e:
        schema_to_grammar(nested, strict_formats=True)
    assert e.value.pointer == "/properties/p/format" and e.value.keyword == "format"
    assert schema_to_grammar(nested).format_annotations == (("/properties/p", "regex"),)


def test_json_schema_property_counts():
    schema = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}}, "minProperties": 2,
              "maxProperties": 2}
    _check(schema, [{"a": 1, "b": 2}, {"a": 1, "c": 2}, {"b": 1, "x": 2}],
           [{"a": 1}, {"a": 1, "b": 2, "c": 3}, {}, {"x": 1, "y": 2, "z": 3}])
    _check({"type": "object", "maxProperties": 1}, [{}, {"k": [1]}], [{"a": 1, "b": 2}])


def test_json_schema_property_order_any():
    import itertools
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                               "c": {"type": "boolean"}},
              "required": ["a", "b"], "additionalProperties": False}
    full = {"a": 1, "b": "x", "c": True}
    perms = [dict((k, full[k]) for k in p) for p in itertools.permutations("abc")]
    perms += [dict((k, full[k]) for k in p) for p in itertools.permutations("ab")]
    g, oracle = _check(schema, perms, [{"a": 1}, {"b": "x", "c": True}, {"a": 1, "b": 2}, {},
                                       {"a": 1, "b": "x", "d": 0}], property_order="any")
    for dup in ['{"a": 1, "a": 2, "b": "x"}', '{"a": 1, "b": "x", "b": "y"}',
                '{"c": true, "a": 1, "c": false, "b": "x"}']:
        assert not oracle.accepts(dup), dup
    # extra properties anywhere, declared ones once each
    open_schema = {**schema, "additionalProperties": {"type": "null"}}
    _, oracle = _check(open_schema, [{"z": None, "b": "x", "a": 1}, {"b": "x", "z": None, "a": 1,
                                                                      "y": None}],
                       [{"z": 1, "a": 1, "b": "x"}], property_order="any")
    assert not oracle.accepts('{"a": 1, "z": null, "a": 2, "b": "x"}')
    # counts without extras are exact in any order
    counted = {"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
               "additionalProperties": False, "minProperties": 1, "maxProperties": 2}
    _check(counted, [{"c": 1}, {"c": 1, "a": 2}, {"b": 0, "a": 0}],
           [{}, {"a": 1, "b": 2, "c": 3}], property_order="any")
    # schema order stays the default; any order holds for objects of any size
    _, oracle = _check(schema, [{"a": 1, "b": "x"}], [], property_order="schema")
    assert not oracle.accepts('{"b": "x", "a": 1}')
    big = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(40)},
           "required": ["p3", "p30"], "additionalProperties": False}
    g, oracle = _check(big, [{"p3": 1, "p30": 2}, {"p30": 2, "p39": 0, "p3": 1}],
                       [{"p3": 1}, {"p3": 1, "p30": 2, "x": 0}], property_order="any")
    assert oracle.accepts('{"p30": 2, "p3": 1, "p0": 5}')
    assert not oracle.accepts('{"p30": 2, "p3": 1, "p30": 5}')
    assert len(g.rules) < 400     # members are counted, not written out per subset
    # a member whose value has no instance: counted objects leave it out (the count of
    # required members could otherwise be reached only by repeating a key)
    nothing = {"type": "object", "required": ["x", "y"],
               "oneOf": [{"required": ["x"]}, {"required": ["y"]}]}
    empty = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string"}, "b": nothing}}
    with pytest.raises(EmptyLanguageError):
        schema_to_grammar(empty, property_order="any")
    optional = {"type": "object", "additionalProperties": False, "properties": {
        "a": {"const": "x"}, "b": nothing}}
    _, oracle = _check(optional, [{"a": "x"}, {}], [], property_order="any")
    assert not oracle.accepts('{"a": "x", "a": "x"}')
    with pytest.raises(ValueError):
        SchemaOptions(property_order="sorted")


@pytest.mark.parametrize("additional", [None, {"type": "string"}])
def test_json_schema_additional_keys_beside_pattern_properties(additional):
    """Keys matching no declared name and no pattern are additional properties (allowed by
    default); keys matching a pattern take the pattern's schema, never the additional one."""
    from constrained import compile_grammar
    from constrained.vocabulary import Vocabulary
    schema = {"type": "object", "properties": {"a": {"type": "integer"}},
              "patternProperties": {"^x-": {"type": "integer"}, "^[0-9]+$": {"type": "boolean"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    docs = [{"a": 1, "x-b": 2, "other": "s"}, {"x-b": "s"}, {"zz": [1, 2]}, {"12": True},
            {"12": 1}, {"x-": 1}, {"a": "s"}, {"zz": "s"}, {"12a": "s"}, {"x-y": "s", "q": 1}]
    ok = [jsonschema.Draft202012Validator(schema).is_valid(d) for d in docs]
    valid = [d for d, v in zip(docs, ok) if v]
    invalid = [d for d, v in zip(docs, ok) if not v]
    assert len(valid) >= 4 and len(invalid) >= 3
    _check(schema, valid, invalid)
    vocab = Vocabulary.from_token_bytes([bytes([i]) for i in range(256)] + [b"<eos>"],
                                        eos_token_ids=[256])
    compiled = compile_grammar(Grammar.from_json_schema(schema), vocab)
    for d, v in zip(docs, ok):
        m = compiled.matcher()
        assert (m.accept_string(json.dumps(d)) and m.is_accepting()) == v, d


def test_json_schema_member_order_is_part_of_the_converted_schema():
    """Two schemas that differ only in the order of their properties are two schemas: with
    property_order="schema" each grammar writes its own order (a conversion cache keyed by
    sorted text once handed the second schema the first one's grammar)."""
    ab = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
          "required": ["a", "b"], "additionalProperties": False}
    ba = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}},
          "required": ["a", "b"], "additionalProperties": False}
    g_ab, g_ba = schema_to_grammar(ab), schema_to_grammar(ba)
    assert EarleyOracle(g_ab).accepts('{"a": 1, "b": 2}')
    assert not EarleyOracle(g_ab).accepts('{"b": 2, "a": 1}')
    assert EarleyOracle(g_ba).accepts('{"b": 2, "a": 1}')
    assert not EarleyOracle(g_ba).accepts('{"a": 1, "b": 2}')
    assert json.loads(g_ba.text) == ba and list(json.loads(g_ba.text)["properties"]) == ["b", "a"]


def test_scalar_schemas_converted_once_keep_every_record_and_option():
    """Schemas of scalar keywords are converted once per process and options: the same
    terminals whatever the annotations, yet every dropped keyword and format annotation is
    recorded at its own place, in every conversion, and other options give other pieces."""
    def terminals(g):      # the values' terminals (not the keys')
        return sorted(t.pattern for n, t in g.terminals.items() if n.startswith("VAL"))

    first = {"type": "object", "properties": {
        "a": {"type": "number", "multipleOf": 0.37, "title": "A"},
        "b": {"type": "string", "format": "expose"},
        "n": {"type": "integer", "minimum": 3, "maximum": 977, "description": "first"}}}
    second = {"type": "object", "properties": {
        "c": {"type": "number", "multipleOf": 0.37},
        "d": {"type": "string", "format": "expose", "description": "again"},
        "m": {"type": "integer", "minimum": 3, "maximum": 977, "description": "second"}}}
    for _ in range(2):
        g1 = Grammar.from_json_schema(first, lenient=True)
        g2 = Grammar.from_json_schema(second, lenient=True)
        assert g1.dropped == (("/properties/a/multipleOf", "multipleOf"),)
        assert g2.dropped == (("/properties/c/multipleOf", "multipleOf"),)
        assert g1.format_annotations == (("/properties/b", "expose"),)
        assert g2.format_annotations == (("/properties/d", "expose"),)
        assert terminals(g1) == terminals(g2)
    with pytest.raises(UnsupportedSchemaError):
        Grammar.from_json_schema(second)      # strict: the same subschema is refused
    spelled = Grammar.from_json_schema(second, lenient=True, integer_spelling="any")
    assert terminals(spelled) != terminals(g2)
    # the range is enforced in every conversion: 978 is out, 977 in
    for g in (g1, g2):
        oracle = EarleyOracle(g)
        key = "n" if g is g1 else "m"
        assert oracle.accepts(json.dumps({key: 977}))
        assert not oracle.accepts(json.dumps({key: 978}))


def test_scalar_pieces_cache_keeps_short_texts_only():
    """A long enum is converted each time (hostile schemas cannot fill the cache with large
    keys) and is enforced all the same."""
    from constrained.grammar.json_schema import converter
    values = [f"value number {i} " + "x" * 20 for i in range(200)]
    schema = {"type": "object", "properties": {"e": {"type": "string", "enum": values}},
              "required": ["e"]}
    for _ in range(2):
        oracle = EarleyOracle(Grammar.from_json_schema(schema))
        assert oracle.accepts(json.dumps({"e": values[123]}))
        assert not oracle.accepts(json.dumps({"e": "value number 200 "}))
    cache = converter._SCALAR_PIECES
    keys = list(cache._young) + list(cache._old)
    assert keys and all(len(k[3]) <= converter._MAX_SCALAR_TEXT for k in keys)
    assert not any("value number 123" in k[3] for k in keys)


def test_counted_member_chains_from_shapes_equal_the_chains_built_anew(monkeypatch):
    """Objects in any order reuse the rule shape of earlier objects with the same counts
    (objects._counted_chain): the grammar is the one the member chain builds itself."""
    import random
    from constrained.grammar.json_schema import api, objects
    rng = random.Random(3)
    schemas = []
    for _ in range(60):
        n = rng.randint(2, 7)
        names = [f"{rng.choice('abcxyz')}{i}" for i in range(n)]
        s = {"type": "object", "properties": {k: {"type": "integer"} for k in names},
             "required": rng.sample(names, rng.randint(0, n))}
        extra = rng.choice([None, False, {"type": "string"},
                            {"patternProperties": {"^p[0-9]$": {"type": "null"}}}])
        if isinstance(extra, dict) and "patternProperties" in extra:
            s.update(extra, additionalProperties=False)
        elif extra is not None:
            s["additionalProperties"] = extra
        if rng.random() < 0.3:
            s["minProperties"] = rng.randint(0, n)
        if rng.random() < 0.3:
            s["maxProperties"] = rng.randint(len(s["required"]), n + 1)
        schemas.append(s)

    def convert(s):
        api._CONVERTED.clear()
        try:
            g = schema_to_grammar(s, property_order="any")
        except (EmptyLanguageError, UnsupportedSchemaError) as e:
            return type(e)
        return g.start, g.rules, g.terminals

    objects._CHAIN_SHAPES.clear()
    shaped = [convert(s) for s in schemas]
    again = [convert(s) for s in schemas]               # every shape found in the cache
    with monkeypatch.context() as m:
        m.setattr(objects, "_counted_chain", lambda *args: None)
        built = [convert(s) for s in schemas]
    assert shaped == built == again
    assert len(objects._CHAIN_SHAPES) < len(schemas)   # shapes were shared


def test_linear_member_chains_equal_the_searched_ones():
    """In schema order without counts or witnesses, the chain's states are read off the
    members (_MemberChain._linear_states): the same states, moves, ends and live states as
    the search finds."""
    import random
    from constrained.grammar.json_schema import objects
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(0, 8)
        members = [((f"K{i}", ":", f"V{i}"), rng.random() < 0.5, []) for i in range(n)]
        x_sym = rng.choice([None, "X"])
        args = (None, (",",), members, x_sym, [], 0, None, 0, 0, "schema",
                None if x_sym else 0)
        chain = objects._MemberChain(*args)
        searched = objects._MemberChain.__new__(objects._MemberChain)
        searched.__dict__.update({k: v for k, v in chain.__dict__.items()
                                  if k not in ("_succ", "_ending", "_live")})
        searched._succ = []
        live = searched._live_states()
        assert (chain._succ, chain._ending, chain._live) == (searched._succ, searched._ending,
                                                             live), (members, x_sym)


def test_builder_terminals_equal_constructed_ones():
    """The builder makes its terminals without the dataclass constructor
    (Terminal._plain): they are the terminals the constructor makes, field for field."""
    import dataclasses
    from constrained.grammar._grammar import Terminal
    g = schema_to_grammar({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3},
                                                            "b": {"enum": [1, "x"]}},
                           "additionalProperties": {"type": "integer"}}, property_order="any")
    fields = {f.name for f in dataclasses.fields(Terminal)}
    assert len(g.terminals) > 3
    for name, t in g.terminals.items():
        assert set(vars(t)) == fields
        assert t == Terminal(name, t.pattern, exclude=t.exclude, automaton=t.automaton)
        with pytest.raises(dataclasses.FrozenInstanceError):
            t.pattern = "x"


def test_scalar_cache_key_text_is_sorted_compact_json():
    from constrained.grammar.json_schema.converter import _SORTED_TEXT
    for value in ({"type": "string", "enum": ["é", "a\"b", None, True, 1, 1.5, -0.0]},
                  {"maximum": 1e300, "minimum": float("-inf"), "b": {"z": [], "a": {}}}, [], "s"):
        assert _SORTED_TEXT(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))
    with pytest.raises(TypeError):
        _SORTED_TEXT({"enum": {1, 2}})
