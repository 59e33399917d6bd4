"""quick_validity answers as jsonschema's Draft 2020-12 validator does, on random scalar schemas."""
import random

import jsonschema
import pytest

from constrained.grammar.json_schema.quick_validity import VALIDATION_KEYWORDS, quick_validity

INSTANCES = [None, True, False, 0, 1, -3, 2.5, 7.0, 1e300, "", "a", "abc", "ab1", "ZZZZ", "é€",
             [], [1], {}, {"a": 1}]


def _scalar(rnd: random.Random, depth: int = 0):
    keys = rnd.sample(["type", "enum", "const", "pattern", "minLength", "maxLength", "minimum",
                       "maximum", "exclusiveMinimum", "exclusiveMaximum", "format", "title",
                       "x-note", "readonly", "allOf", "anyOf", "oneOf", "not"],
                      rnd.randint(0, 4))
    s = {}
    for k in keys:
        if k == "type":
            s[k] = rnd.choice(["string", "integer", "number", "boolean", "null", "array",
                               "object", ["string", "null"], ["integer", "boolean"]])
        elif k == "enum":
            s[k] = rnd.sample(INSTANCES, rnd.randint(1, 4))
        elif k == "const":
            s[k] = rnd.choice(INSTANCES)
        elif k == "pattern":
            s[k] = rnd.choice(["^a", "b", "^[a-z]+$", "\\d", "^$", "é"])
        elif k in ("minLength", "maxLength"):
            s[k] = rnd.randint(0, 4)
        elif k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            s[k] = rnd.choice([0, 1, -3, 2.5, 7])
        elif k == "format":
            s[k] = rnd.choice(["email", "date", "uuid"])
        elif k in ("allOf", "anyOf", "oneOf"):
            if depth < 2:
                s[k] = [_scalar(rnd, depth + 1) for _ in range(rnd.randint(1, 3))]
        elif k == "not":
            if depth < 2:
                s[k] = _scalar(rnd, depth + 1)
        else:
            s[k] = "annotation"
    return s


def _validator_says(instance, schema) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema).is_valid(instance)
    except Exception:  # noqa: BLE001 - the converter counts a failing check as invalid
        return False


@pytest.mark.parametrize("seed", range(4))
def test_matches_the_validator(seed):
    rnd = random.Random(seed)
    decided = 0
    for _ in range(600):
        schema = _scalar(rnd)
        for instance in INSTANCES:
            quick = quick_validity(instance, schema)
            assert quick is not None, schema     # only scalar keywords: always decided
            assert quick == _validator_says(instance, schema), (instance, schema)
            decided += 1
    assert decided == 600 * len(INSTANCES)


@pytest.mark.parametrize("schema", [
    {"$ref": "#/$defs/a"}, {"properties": {"a": {}}}, {"multipleOf": 2},
    {"minLength": "3"}, {"type": "strin"}, {"pattern": "("}, {"allOf": []},
    {"anyOf": [{"type": "string"}, {"required": ["a"]}]},
])
def test_leaves_the_rest_to_the_validator(schema):
    assert quick_validity("abc", schema) is None


def test_a_failing_keyword_decides_beside_an_unknown_one():
    assert quick_validity(3, {"type": "string", "multipleOf": 2}) is False
    assert quick_validity("x", {"type": "string", "multipleOf": 2}) is None


def test_keywords_are_the_validators_own():
    assert VALIDATION_KEYWORDS == set(jsonschema.Draft202012Validator.VALIDATORS)


def test_boolean_schemas():
    assert quick_validity(1, True) is True and quick_validity(1, False) is False


def test_the_converters_own_keywords_are_left_to_the_validator():
    from constrained.grammar.json_schema.merge import CONTAINS_ALL
    assert quick_validity(["a"], {CONTAINS_ALL: [({"const": "b"}, 1, None)]}) is None


def test_references_are_followed_with_a_resolver():
    """``$ref`` (beside other keywords, through applicators, in cycles) as the validator reads
    it, when the caller resolves references; without a resolver the validator decides."""
    defs = {"color": {"enum": ["red", "blue", 3]}, "short": {"type": "string", "maxLength": 3},
            "both": {"allOf": [{"$ref": "#/$defs/color"}, {"$ref": "#/$defs/short"}]},
            "loop": {"anyOf": [{"$ref": "#/$defs/loop"}, {"type": "integer"}]},
            "object": {"properties": {"a": {}}}}
    root = {"$defs": defs}

    def resolve(uri):
        return defs[uri.rsplit("/", 1)[1]]
    schemas = [{"$ref": "#/$defs/color"}, {"$ref": "#/$defs/both"},
               {"$ref": "#/$defs/short", "not": {"$ref": "#/$defs/color"}},
               {"oneOf": [{"$ref": "#/$defs/color"}, {"$ref": "#/$defs/short"}]},
               {"$ref": "#/$defs/color", "type": "string"}]
    for schema in schemas:
        validator = jsonschema.Draft202012Validator({**schema, **root})
        for instance in INSTANCES + ["red", "blue", "green"]:
            assert quick_validity(instance, schema, resolve) == validator.is_valid(instance), (
                instance, schema)
        assert quick_validity("red", schema) is None
    assert quick_validity(3, {"$ref": "#/$defs/loop"}, resolve) is None   # a cycle: undecided
    assert quick_validity("abc", {"$ref": "#/$defs/object"}, resolve) is None
    assert quick_validity("abc", {"$ref": "#/$defs/missing"}, resolve) is None


def test_enum_filters_through_references_keep_jsonschema_unloaded():
    """Converting a schema whose enum values are checked against referenced enums reads
    no validator (the jsonschema package is not imported for it)."""
    import subprocess
    import sys
    code = ("import sys, json\n"
            "from constrained import Grammar\n"
            "s = {'$defs': {'e': {'enum': ['a', 'b', 3]}}, 'type': 'object', 'properties': {\n"
            "  'x': {'allOf': [{'$ref': '#/$defs/e'}, {'enum': ['b', 3, 'c']}]}}}\n"
            "g = Grammar.from_json_schema(s)\n"
            "print('jsonschema' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
