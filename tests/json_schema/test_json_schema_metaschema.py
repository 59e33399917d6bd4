"""The metaschema check agrees with the jsonschema package's own metaschemas.

Random values in every keyword of every dialect (drafts 4, 6, 7, 2019-09, 2020-12): the check
refuses a schema iff the dialect's metaschema does, with the JSON pointer of the keyword.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
specifications = pytest.importorskip("jsonschema_specifications")

from constrained import Grammar  # noqa: E402
from constrained.errors import ConstrainedError, GrammarError, LimitExceededError  # noqa: E402
from constrained.grammar.json_schema.metaschema import check_schema  # noqa: E402

DIALECTS = {
    4: ("http://json-schema.org/draft-04/schema#", "draft4", jsonschema.Draft4Validator),
    6: ("http://json-schema.org/draft-06/schema#", "draft6", jsonschema.Draft6Validator),
    7: ("http://json-schema.org/draft-07/schema#", "draft7", jsonschema.Draft7Validator),
    2019: ("https://json-schema.org/draft/2019-09/schema", "draft201909",
           jsonschema.Draft201909Validator),
    2020: ("https://json-schema.org/draft/2020-12/schema", "draft202012",
           jsonschema.Draft202012Validator),
}

VALUES = [
    -1, 0, 1, 2, 1.0, 2.5, -0.5, 10**30, True, False, None,
    "a", "", "string", "integer", "#x", "x#y", "a b", "_a", "a:b", "http://x/y#",
    [], ["a"], ["a", "a"], ["a", "b"], [1], [{}], [True, 1], [1, 1.0], ["string", "null"],
    ["string", "string"], ["strin"], [{"type": "string"}, True], [[]],
    {}, {"a": {}}, {"a": 1}, {"a": ["b"]}, {"a": []}, {"a": True}, {"a": {"type": 5}},
    {"type": "string"}, {"minLength": -2}, {"a": {"minimum": "x"}},
]


def _keywords(folder: str) -> list[str]:
    """Every keyword a dialect's metaschema (and its vocabularies) describes."""
    root = Path(specifications.__file__).parent / "schemas" / folder
    names: set[str] = set()
    for path in [root / "metaschema.json", *sorted((root / "vocabularies").glob("*"))]:
        if path.is_file():
            names.update(json.loads(path.read_text()).get("properties", {}))
    return sorted(names - {"$schema"})


def _metaschema_error(validator, schema) -> bool:
    return next(validator(validator.META_SCHEMA).iter_errors(schema), None) is not None


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_check_agrees_with_the_metaschema(dialect):
    uri, folder, validator = DIALECTS[dialect]
    rng = random.Random(dialect)
    keywords = _keywords(folder)
    cases = 0
    for keyword in keywords:
        for value in VALUES:
            for nested in (False, True):
                body = {keyword: value}
                if dialect == 4 and keyword.startswith("exclusiveM"):
                    body[keyword[9:].lower()] = 1      # draft 4: exclusive bounds need a bound
                schema = {"$schema": uri, "properties": {"p": body}} if nested \
                    else {"$schema": uri, **body}
                want = _metaschema_error(validator, schema)
                try:
                    check_schema(schema, max_depth=1024, max_enum=4096)
                    got = False
                except GrammarError as e:
                    got = True
                    where = f"/properties/p/{keyword}" if nested else f"/{keyword}"
                    assert e.pointer.startswith(where), (schema, e.pointer)
                assert got == want, (dialect, schema)
                cases += 1
    # and a few random combinations of two keywords
    for _ in range(400):
        schema = {"$schema": uri}
        for keyword in rng.sample(keywords, 2):
            schema[keyword] = rng.choice(VALUES)
        try:
            check_schema(schema, max_depth=1024, max_enum=4096)
            got = False
        except GrammarError:
            got = True
        assert got == _metaschema_error(validator, schema), schema
    assert cases > 1000


@pytest.mark.parametrize("schema, pointer", [
    ({"properties": {1: {}}}, "/properties"),
    ({"const": float("nan")}, "/const"),
    ({"enum": [1, float("inf")]}, "/enum/1"),
    ({"maximum": float("inf")}, "/maximum"),
    ({"default": {"a": {1, 2}}}, "/default/a"),
    ({"items": ({"type": "string"},)}, "/items"),
    ([1, 2], ""),
])
def test_values_json_cannot_spell_are_refused(schema, pointer):
    with pytest.raises(GrammarError) as err:
        Grammar.from_json_schema(schema)
    assert err.value.pointer == pointer


def test_json_text_with_an_infinite_number_is_refused_by_pointer():
    with pytest.raises(GrammarError) as err:
        Grammar.from_json_schema('{"type": "number", "maximum": 1e999}')
    assert err.value.pointer == "/maximum"


def test_schema_bytes_that_are_not_utf8_are_a_grammar_error():
    with pytest.raises(GrammarError) as err:
        Grammar.from_json_schema(b'{"description": "caf\xe9"}')
    assert err.value.position is not None


@pytest.mark.parametrize("keyword", ["items", "properties", "ref"])
def test_nesting_up_to_the_documented_depth_converts(keyword):
    """max_schema_depth is the real limit: 1,000 levels convert (on a deeper stack)."""
    schema = {"type": "string"}
    if keyword == "ref":
        defs = {f"d{i}": {"type": "array", "items": {"$ref": f"#/$defs/d{i + 1}"}}
                for i in range(1000)}
        defs["d1000"] = {"type": "string"}
        schema = {"$defs": defs, "$ref": "#/$defs/d0"}
    else:
        for _ in range(1000 if keyword == "items" else 500):
            schema = {"type": "array", "items": schema} if keyword == "items" else \
                {"type": "object", "properties": {"a": schema}}
    grammar = Grammar.from_json_schema(schema)
    assert len(grammar.rules) > 1000
    with pytest.raises(LimitExceededError):
        Grammar.from_json_schema(schema, max_schema_depth=100)


def test_errors_quote_bounded_text():
    deep = {"type": "string"}
    for _ in range(3000):
        deep = {"type": "object", "properties": {"a": deep}}
    for schema in (deep, {"properties": {"x" * 100_000: {"type": 5}}},
                   {"enum": ["y" * 100_000], "type": 7}):
        with pytest.raises(ConstrainedError) as err:
            Grammar.from_json_schema(schema)
        assert len(str(err.value)) < 700
