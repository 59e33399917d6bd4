"""Strings with long length bounds (long_strings: chunks of 32 characters) through the engine.

The chunks rely on the greedy lexer ending a chunk exactly at its length, so these tests run
the compiled engine, not a grammar oracle: texts of every length around the chunk borders
(with escapes and multi-byte characters) are fed token by token and must be accepted exactly
when their length is within the bounds; random walks over the masks must end in strings of
allowed lengths.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.decoding.budget import CompletionPlanner
from constrained.decoding.byte_tokens import ByteTokenizer
from walks import random_walk

_MULTI = [b"aaaa", b"a" * 16, b"a" * 40, b'a"', b"\\n", b"\\u00e9", "é".encode(), b"ab\\",
          b'"}', b'", "', b"\\"]
VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + _MULTI + [b"<eos>"],
                                    eos_token_ids=[256 + len(_MULTI)])
CHARS = ["a", "é", "\n", "\"", "x", "€"]


def _tokens(text: bytes, rng: random.Random) -> list[int]:
    """A random tokenization of ``text`` with the vocabulary's multi-byte tokens."""
    by_bytes = {t: i for i, t in enumerate(VOCAB.token_bytes)}
    out, i = [], 0
    while i < len(text):
        fits = [t for t in _MULTI if text.startswith(t, i)]
        t = rng.choice(fits) if fits and rng.random() < 0.7 else text[i:i + 1]
        out.append(by_bytes[t])
        i += len(t)
    return out


def _accepts(compiled, text: bytes, rng: random.Random) -> bool:
    m = compiled.matcher()
    words = np.zeros((VOCAB.size + 31) // 32, dtype=np.int32)
    for tid in _tokens(text, rng):
        m.fill_next_token_bitmask(words)
        allowed = bool(words[tid >> 5] >> (tid & 31) & 1)
        if allowed != m.accept_token(tid):
            raise AssertionError("the mask and accept_token disagree")
        if not allowed:
            return False
    return m.is_accepting()


@pytest.mark.parametrize("lo,hi", [(0, 70), (66, None), (65, 129), (0, 96), (33, 64 * 3)])
def test_long_string_lengths_are_exact(lo, hi):
    schema = {"type": "string", "minLength": lo}
    if hi is not None:
        schema["maxLength"] = hi
    compiled = compile_grammar(Grammar.from_json_schema(schema), VOCAB)
    rng = random.Random(lo * 1000 + (hi or 0))
    top = (hi or lo) + 40
    for n in list(range(0, top)) + [top + 30]:
        chars = "".join(rng.choice(CHARS) if rng.random() < 0.2 else "a" for _ in range(n))
        text = json.dumps(chars, ensure_ascii=rng.random() < 0.5).encode()
        expected = lo <= n and (hi is None or n <= hi)
        assert _accepts(compiled, text, rng) == expected, (n, text)


def test_random_walks_end_in_allowed_lengths():
    planner = CompletionPlanner(ByteTokenizer.of(VOCAB))
    rng = random.Random(5)
    for lo, hi in [(40, 100), (0, 300), (100, None)]:
        schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": lo}},
                  "required": ["s"]}
        if hi is not None:
            schema["properties"]["s"]["maxLength"] = hi
        compiled = compile_grammar(Grammar.from_json_schema(schema), VOCAB)
        for _ in range(5):
            out = random_walk(compiled.matcher(), VOCAB, planner, rng, rng.choice([10, 60, 150]))
            assert out is not None
            n = len(json.loads(out.decode())["s"])
            assert lo <= n and (hi is None or n <= hi), (lo, hi, n)


@pytest.mark.slow
def test_long_strings_on_llama3(llama3_vocab):
    """Real tokens (up to 128 bytes, many spanning chunk borders) with maxLength 255."""
    import quicktok
    enc = quicktok.get_encoding("llama3")
    schema = {"type": "object", "properties": {"t": {"type": "string", "maxLength": 255}},
              "required": ["t"]}
    compiled = compile_grammar(Grammar.from_json_schema(schema), llama3_vocab)
    words = np.zeros((llama3_vocab.size + 31) // 32, dtype=np.int32)
    rng = random.Random(3)
    for n in (0, 31, 32, 33, 200, 255, 256, 300):
        body = "".join(rng.choice(["word ", "é", "-", "x", "\n", "==="]) for _ in range(n))[:n]
        text = json.dumps({"t": body})
        m = compiled.matcher()
        ok = True
        for tid in enc.encode_ordinary(text):
            m.fill_next_token_bitmask(words)
            if not words[tid >> 5] >> (tid & 31) & 1:
                ok = False
                break
            assert m.accept_token(tid)
        assert (ok and m.is_accepting()) == (n <= 255), n


def test_a_long_string_beside_an_extra_member_of_another_branch():
    """The value of a key one anyOf branch declares with a long string and another branch
    takes as an extra member of any value: the unbounded strings are chunked too, so greedy
    lexing does not read past the chunk border (found by a generated schema)."""
    declared = {"type": "object", "required": ["c"], "properties": {
        "v": {"type": "string", "minLength": 5, "maxLength": 105}, "c": {"type": "string"}}}
    other = {"type": "object", "required": ["limit"], "properties": {"limit": {"type": "number"}}}
    text = json.dumps({"v": "x" * 34, "c": "Bf"}).encode()
    compiled = compile_grammar(Grammar.from_json_schema({"anyOf": [declared, other]}), VOCAB)
    m = compiled.matcher()
    assert all(m.accept_token(t) for t in text) and m.is_accepting()


def test_unions_of_long_and_unbounded_strings_accept_every_length():
    from constrained.grammar.json_schema.api import schema_to_grammar
    declared = {"type": "object", "required": ["c"], "properties": {
        "v": {"type": "string", "minLength": 5, "maxLength": 105}, "c": {"type": "string"}}}
    other = {"type": "object", "required": ["n"], "properties": {
        "n": {"type": "number"}, "v": {"type": "string", "minLength": 40}}}
    schema = {"anyOf": [declared, other, {"type": "string"}]}
    g = schema_to_grammar(schema)
    assert any(t.pattern.endswith("{32}") for t in g.terminals.values())
    compiled = compile_grammar(Grammar.from_json_schema(schema), VOCAB)
    for n in (0, 5, 31, 32, 33, 40, 64, 65, 105, 106, 140):
        for doc in ({"v": "é" * n, "c": "x"}, {"n": 1, "v": "a" * n}, "\n" * n):
            text = json.dumps(doc, ensure_ascii=False).encode()
            m = compiled.matcher()
            ok = all(m.accept_token(t) for t in text) and m.is_accepting()
            valid = (isinstance(doc, str) or ("c" in doc and 5 <= n <= 105)
                     or ("n" in doc and n >= 40))
            assert ok == valid, (doc if isinstance(doc, str) else sorted(doc), n)


def test_a_long_string_reached_again_through_a_reference_in_a_union():
    """The target of a $ref converted once (for an earlier member) holds its chunked strings
    where the reference is met again, in a union beside a branch of any extra members."""
    declared = {"type": "object", "required": ["c"], "properties": {
        "v": {"type": "string", "minLength": 5, "maxLength": 105}, "c": {"type": "string"}}}
    other = {"type": "object", "required": ["limit"], "properties": {"limit": {"type": "number"}}}
    schema = {"$defs": {"L": declared}, "type": "object", "properties": {
        "first": {"$ref": "#/$defs/L"}, "u": {"anyOf": [{"$ref": "#/$defs/L"}, other]}}}
    text = json.dumps({"u": {"v": "x" * 34, "c": "Bf"}}).encode()
    compiled = compile_grammar(Grammar.from_json_schema(schema), VOCAB)
    m = compiled.matcher()
    assert all(m.accept_token(t) for t in text) and m.is_accepting()


def test_distinct_string_arrays_stay_enforced_where_every_string_is_chunked():
    declared = {"type": "object", "required": ["c"], "properties": {
        "v": {"type": "string", "maxLength": 105}, "c": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}
    other = {"type": "object", "required": ["limit"], "properties": {"limit": {"type": "number"}}}
    g = Grammar.from_json_schema({"anyOf": [declared, other]})
    assert g.distinct_arrays
    compiled = compile_grammar(g, VOCAB)
    for doc, ok in (({"v": "x" * 40, "c": "y" * 50, "tags": ["a" * 40, "b"]}, True),
                    ({"v": "x" * 40, "c": "y", "tags": ["a" * 40, "a" * 40]}, False)):
        m = compiled.matcher()
        text = json.dumps(doc).encode()
        assert (all(m.accept_token(t) for t in text) and m.is_accepting()) == ok, doc



_DECLARED = {"type": "object", "required": ["c"], "properties": {
    "v": {"type": "string", "minLength": 5, "maxLength": 105}, "c": {"type": "string"}}}
_OTHER = {"type": "object", "required": ["limit"], "properties": {"limit": {"type": "number"}}}


def _takes(compiled, doc) -> bool:
    m = compiled.matcher()
    return all(m.accept_token(t) for t in json.dumps(doc).encode()) and m.is_accepting()


@pytest.mark.parametrize("through_ref", [False, True])
def test_a_conversion_meeting_a_long_string_beside_another_branch_starts_again_chunked(
        through_ref, monkeypatch):
    """It stops at that union (or, where the schema's own words show the union, starts so):
    the grammar is the one of a conversion that chunks every string from the start, and what
    the rest of the schema refuses is still refused (or recorded once, when lenient)."""
    from constrained.errors import UnsupportedSchemaError
    from constrained.grammar.json_schema import api
    from constrained.grammar.json_schema.api import schema_to_grammar
    from constrained.grammar.json_schema.converter import Converter
    from constrained.grammar.json_schema.long_strings import union_meets_long_string
    from constrained.grammar.json_schema.options import SchemaOptions
    branch = {"$ref": "#/$defs/D"} if through_ref else _DECLARED
    schema = {"$defs": {"D": _DECLARED}, "type": "object", "properties": {
        "u": {"anyOf": [branch, _OTHER]}, "free": {"type": "string"},
        "m": {"type": "number", "multipleOf": 0.37}}}
    # a reference is not followed: that union is met, then the conversion starts again
    assert union_meets_long_string(schema, 64) is not through_ref
    passes = []
    monkeypatch.setattr(api, "Converter", lambda *a, **k: passes.append(k) or Converter(*a, **k))
    chunked = Converter(json.loads(json.dumps(schema)), SchemaOptions(lenient=True),
                        owned=True, chunk_strings=True)
    start = chunked.start()
    g = schema_to_grammar(schema, lenient=True)
    assert (g.start, g.rules, g.terminals) == (start, chunked.b.rules, chunked.b.terminals)
    assert [k["chunk_strings"] for k in passes] == ([False, True] if through_ref else [True])
    assert g.dropped == (("/properties/m/multipleOf", "multipleOf"),)
    with pytest.raises(UnsupportedSchemaError) as err:
        schema_to_grammar(schema)
    assert err.value.pointer == "/properties/m/multipleOf"


def test_a_complement_met_again_holds_its_chunked_strings():
    """A `not` schema converted once (one rule) and met again in a union beside a branch
    of any extra members: the union still sees its chunked string."""
    negated = dict(_DECLARED, **{"not": {"required": ["limit"]}})
    schema = {"type": "object", "properties": {
        "b": negated, "a": {"anyOf": [negated, _OTHER]}}}
    compiled = compile_grammar(Grammar.from_json_schema(schema), VOCAB)
    for n in (4, 33, 40, 105, 106):
        assert _takes(compiled, {"a": {"v": "x" * n, "c": "y"}}) == (5 <= n <= 105), n
        assert _takes(compiled, {"b": {"v": "x" * n, "c": "y" * 40}}) == (5 <= n <= 105), n


# a long string declared after an unbounded one
_DECLARED_LATE = {"type": "object", "required": ["c"], "properties": {
    "c": {"type": "string"}, "v": {"type": "string", "minLength": 5, "maxLength": 105}}}


@pytest.mark.parametrize("schema, doc", [
    # an array's items with contains: the items that satisfy it and those that do not are
    # two values at one place, not a union
    ({"type": "array", "items": {"anyOf": [_DECLARED_LATE, _OTHER]},
      "contains": {"type": "object", "properties": {"v": {"type": "number"}}}},
     [{"c": "y" * 40, "v": "x" * 40}, {"v": 1, "limit": 1}]),
    # an object's members that witness a negated universal keyword, and the others
    ({"type": "object", "additionalProperties": {"anyOf": [_DECLARED_LATE, _OTHER]},
      "not": {"additionalProperties": {"not": {"properties": {"v": {"type": "number"}}}}}},
     {"p": {"c": "y" * 40, "v": "x" * 40}, "q": {"limit": 1, "v": 1}}),
])
def test_long_strings_beside_unbounded_ones_at_one_place_outside_a_union(schema, doc):
    import jsonschema
    assert jsonschema.Draft202012Validator(schema).is_valid(doc)
    for options in ({}, {"property_order": "any"}):
        compiled = compile_grammar(Grammar.from_json_schema(schema, **options), VOCAB)
        assert _takes(compiled, doc), options


@pytest.mark.parametrize("schema, meets", [
    ({"anyOf": [_DECLARED, _OTHER]}, True),
    ({"oneOf": [{"type": "string", "maxLength": 100}, {"type": "array"}]}, True),
    ({"type": "object", "properties": {"x": {"anyOf": [
        {"type": "array", "items": {"type": "string", "minLength": 70}},
        {"enum": ["a", 1]}]}}}, True),
    # the other branches hold no quote: numbers, null, booleans, a const number
    ({"anyOf": [{"type": "string", "maxLength": 100}, {"type": "null"},
                {"type": ["integer", "boolean"]}, {"const": 3}]}, False),
    # bounds within max_string_length, a pattern, an enum: one terminal each
    ({"anyOf": [{"type": "string", "maxLength": 64}, {"type": "string"}]}, False),
    ({"anyOf": [{"type": "string", "maxLength": 100, "pattern": "^a+$"}, _OTHER]}, False),
    ({"anyOf": [{"type": "string", "minLength": 80, "maxLength": 90}, _OTHER]}, True),
    ({"anyOf": [{"type": "string", "minLength": 80, "maxLength": 70}, _OTHER]}, False),
    ({"anyOf": [{"type": "string", "minLength": 80, "enum": ["x"]}, _OTHER]}, False),
    # not in a union: a long string alone, or in $defs only a reference reaches
    ({"type": "object", "properties": {"v": {"type": "string", "maxLength": 200}}}, False),
    ({"$defs": {"L": _DECLARED}, "anyOf": [{"$ref": "#/$defs/L"}, _OTHER]}, False),
])
def test_a_union_meeting_a_long_string_is_seen_from_the_schema(schema, meets):
    from constrained.grammar.json_schema.converter import ChunkEveryString, Converter
    from constrained.grammar.json_schema.long_strings import union_meets_long_string
    from constrained.grammar.json_schema.options import SchemaOptions
    assert union_meets_long_string(schema, 64) is meets
    if meets:       # (where it says so, the first conversion would have stopped)
        with pytest.raises(ChunkEveryString):
            Converter(json.loads(json.dumps(schema)), SchemaOptions(), owned=True).start()
