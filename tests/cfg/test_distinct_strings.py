"""Masks of JSON grammars whose objects never repeat a key and whose arrays of distinct
strings never repeat an item, against a brute-force oracle.

Each schema below has finitely many valid texts (compact separators), so the oracle can list
them all: a token is allowed after a prefix iff the prefix followed by the token's bytes starts
some valid text, and end-of-sequence iff the prefix is one. Every prefix reachable with the
test vocabulary is visited once, its mask compared with the oracle's and every allowed token
accepted (rollback between siblings). The vocabulary has single bytes and random pieces of the
valid texts (tokens crossing keys, separators and values), and the escape spellings of keys.
"""
from __future__ import annotations

import itertools
import json
import random

import jsonschema
import numpy as np
import pytest

from constrained import compile_grammar
from constrained.cfg import distinct_strings
from constrained.grammar.json_schema import schema_to_grammar
from constrained.vocabulary import Vocabulary

from cfg_vocab import small_vocab

E_SPELLINGS = ["é", "\\u00e9", "\\u00E9"]


class Arr(tuple):
    """An array value of the enumerated instances (objects are lists of (key, value))."""


def _objects(members: dict, required=(), extra_keys=()):
    """Every object (as a list of (key, value) pairs) with keys from ``members`` and
    ``extra_keys``, each at most once, in any order, the required ones present."""
    names = list(members) + list(extra_keys)
    for k in range(len(names) + 1):
        for chosen in itertools.permutations(names, k):
            if not set(required) <= set(chosen):
                continue
            for values in itertools.product(*(members.get(n, ["p"]) for n in chosen)):
                yield list(zip(chosen, values))


def _arrays(items: list, most: int, distinct: bool):
    """Every array of at most ``most`` items from ``items`` (distinct ones, or repeats)."""
    for k in range(most + 1):
        pick = itertools.permutations(items, k) if distinct else itertools.product(items,
                                                                                   repeat=k)
        yield from (Arr(p) for p in pick)


def _spell(text: str) -> list[str]:
    """The spellings the grammar accepts for a declared key or an enum string (é three
    ways)."""
    parts = [E_SPELLINGS if c == "é" else [json.dumps(c)[1:-1]] for c in text]
    return ['"' + "".join(p) + '"' for p in itertools.product(*parts)]


def _texts(value, separators=(",", ":")) -> list[str]:
    """Every spelling of an enumerated instance with the given (item, key) separators."""
    item, colon = separators
    if isinstance(value, Arr):
        return ["[" + item.join(combo) + "]"
                for combo in itertools.product(*(_texts(v, separators) for v in value))]
    if isinstance(value, list):
        options = [[k + colon + v for k in _spell(key) for v in _texts(val, separators)]
                   for key, val in value]
        return ["{" + item.join(combo) + "}" for combo in itertools.product(*options)]
    if isinstance(value, str):
        return _spell(value)
    return [json.dumps(value)]


CASES = {
    "any order, no extras, a key prefix of another, escaped key": (
        {"type": "object", "properties": {"a": {"enum": ["p", "q"]}, "ab": {"enum": ["p", "q"]},
                                          "é": {"const": "p"}},
         "required": ["a"], "additionalProperties": False},
        {"property_order": "any"},
        lambda: _objects({"a": ["p", "q"], "ab": ["p", "q"], "é": ["p"]}, required=["a"])),
    "schema order, finitely many pattern keys": (
        {"type": "object", "properties": {"a": {"const": "p"}},
         "patternProperties": {"^x[12]$": {"const": "p"}}, "additionalProperties": False},
        {},
        lambda: _objects({"a": ["p"]}, extra_keys=["x1", "x2"])),
    "any order, finitely many pattern keys and a count": (
        {"type": "object", "properties": {"a": {"const": "p"}, "b": {"const": "p"}},
         "patternProperties": {"^x[12]$": {"const": "p"}}, "additionalProperties": False,
         "minProperties": 2},
        {"property_order": "any"},
        lambda: [o for o in _objects({"a": ["p"], "b": ["p"]}, extra_keys=["x1", "x2"])
                 if len(o) >= 2]),
    "any order, optional and pattern keys running out apart, a key prefix of pattern keys": (
        {"type": "object", "properties": {"x": {"const": "p"}, "y": {"const": "p"}},
         "required": ["y"], "patternProperties": {"^x[12]$": {"const": "p"}},
         "additionalProperties": False},
        {"property_order": "any"},
        lambda: _objects({"x": ["p"], "y": ["p"]}, required=["y"], extra_keys=["x1", "x2"])),
    "any order, closed, two required and two optional members (counted)": (
        {"type": "object", "properties": {k: {"const": "p"} for k in ("a", "b", "c", "d")},
         "required": ["a", "b"], "additionalProperties": False},
        {"property_order": "any"},
        lambda: _objects({k: ["p"] for k in ("a", "b", "c", "d")}, required=["a", "b"])),
    "nested objects with the same keys": (
        {"type": "object", "properties": {
            "a": {"const": "p"},
            "o": {"type": "object", "properties": {"a": {"const": "p"}, "o": {"const": "p"}},
                  "additionalProperties": False}},
         "required": ["o"], "additionalProperties": False},
        {"property_order": "any"},
        lambda: [[(k, v) for k, v in outer]
                 for inner in _objects({"a": ["p"], "o": ["p"]})
                 for outer in _objects({"a": ["p"], "o": [inner]}, required=["o"])]),
    "any order, a member whose value has no instance": (
        {"type": "object", "additionalProperties": False, "properties": {
            "a": {"const": "p"}, "b": {"const": "p"},
            "c": {"type": "object", "required": ["x", "y"],
                  "oneOf": [{"required": ["x"]}, {"required": ["y"]}]}}},
        {"property_order": "any"},
        lambda: _objects({"a": ["p"], "b": ["p"]})),
    "a string value ending in an escaped quote before a key": (
        {"type": "object", "additionalProperties": False, "properties": {
            "a": {"const": "p"}, "ab": {"const": "p"}, "s": {"const": 'p"'}}},
        {"property_order": "any"},
        lambda: _objects({"a": ["p"], "ab": ["p"], "s": ['p"']})),
    "nested arrays of distinct strings": (
        {"type": "array", "maxItems": 2,
         "items": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True}},
        {},
        lambda: [Arr(x) for k in range(3)
                 for x in itertools.product(list(_arrays(["a", "b"], 2, True)), repeat=k)]),
    "objects in an array, a token closing one and repeating a key in the next": (
        {"type": "array", "maxItems": 2, "items": {
            "type": "object", "properties": {"a": {"const": "p"}, "b": {"const": "p"}},
            "additionalProperties": False}},
        {"property_order": "any"},
        lambda: [Arr(x) for k in range(3)
                 for x in itertools.product(list(_objects({"a": ["p"], "b": ["p"]})),
                                            repeat=k)]),
    "array of distinct strings, a prefix of another, escaped item": (
        {"type": "array", "items": {"enum": ["a", "ab", "é"]}, "uniqueItems": True},
        {},
        lambda: _arrays(["a", "ab", "é"], 3, distinct=True)),
    "spaced separators: keys open after whitespace, a key prefix of another": (
        {"type": "object", "properties": {"a": {"enum": ["p", "q"]}, "ab": {"const": "p"},
                                          "é": {"const": "p"}},
         "additionalProperties": False},
        {"property_order": "any", "separators": (", ", ": ")},
        lambda: _objects({"a": ["p", "q"], "ab": ["p"], "é": ["p"]})),
    "spaced separators, nested objects with the same keys": (
        {"type": "object", "properties": {
            "a": {"const": "p"},
            "o": {"type": "object", "properties": {"a": {"const": "p"}, "ab": {"const": "p"}},
                  "additionalProperties": False}},
         "required": ["o"], "additionalProperties": False},
        {"property_order": "any", "separators": (", ", ": ")},
        lambda: [[(k, v) for k, v in outer]
                 for inner in _objects({"a": ["p"], "ab": ["p"]})
                 for outer in _objects({"a": ["p"], "o": [inner]}, required=["o"])]),
    "an array of strings and objects, each spelling a key of the object around it": (
        {"type": "object", "properties": {
            "a": {"const": "p"},
            "l": {"type": "array", "maxItems": 2, "items": {"anyOf": [
                {"const": "a"},
                {"type": "object", "properties": {"a": {"const": "p"}},
                 "additionalProperties": False}]}}},
         "additionalProperties": False},
        {"property_order": "any"},
        lambda: _objects({"a": ["p"], "l": list(_arrays(["a", [], [("a", "p")]], 2, False))})),
    "distinct and plain arrays side by side, minItems": (
        {"type": "object", "properties": {
            "u": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True,
                  "minItems": 1},
            "n": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}},
         "additionalProperties": False},
        {"property_order": "any"},
        lambda: _objects({"u": list(a for a in _arrays(["a", "b"], 2, True) if a),
                          "n": list(_arrays(["a", "b"], 2, False))})),
}


def _valid_texts(schema, instances, separators=(",", ":")) -> set[bytes]:
    out = set()
    for obj in instances:
        for text in _texts(obj, separators):
            instance = json.loads(text)
            jsonschema.validate(instance, schema)
            out.add(text.encode())
    return out


@pytest.mark.parametrize("by_walk", [False, True], ids=["completions", "walk"])
@pytest.mark.parametrize("name", list(CASES))
def test_masks_match_the_oracle(name, by_walk, monkeypatch):
    if by_walk:     # key prefixes judged by walking the lexer, never by its completion sets
        monkeypatch.setattr(distinct_strings._KeyWalk, "_suffixes", lambda self, q: None)
    schema, options, objects = CASES[name]
    valid = _valid_texts(schema, objects(), options.get("separators") or (",", ":"))
    grammar = schema_to_grammar(schema, whitespace="compact", **options)
    docs = sorted(t.decode() for t in valid)
    vocab = small_vocab("", docs, seed=len(name), n_pieces=300,
                        extra=(b"\\u00", b"e9", b"E9\"", b"\\u00e9\":", b'":"p","', b'},"',
                               b'"a', b'a"', b'":', b',"', b'"ab":', b'["a","a"', b'["a","a',
                               b'[["a","a', b'"","a"', b'"","ab"', b'p\\', b'"],["a","a',
                               b'"},{"a":"p","a', b'"},{"a', b'"p"},{"b":"p","a', b' "',
                               b' "a', b' "ab', b', "a', b', "\\', b' "\\u00', b'}, "a',
                               b'},"a"', b'"a"]', b'],"a', b'{"a":"p"},"a'))
    compiled = compile_grammar(grammar, vocab)
    prefixes = {v[:i] for v in valid for i in range(len(v) + 1)}
    eos = min(vocab.eos_token_ids)
    matcher = compiled.matcher()
    seen: set[bytes] = set()
    checked = 0

    def visit(prefix: bytes) -> None:
        nonlocal checked
        if prefix in seen:
            return
        seen.add(prefix)
        allowed = set(matcher.allowed_token_ids().tolist())
        expect = {t for t in range(vocab.n_tokens) if vocab.text_token_mask[t]
                  and prefix + vocab.token_bytes[t] in prefixes}
        if prefix in valid:
            expect |= set(vocab.eos_token_ids)
        assert allowed == expect, (name, prefix, sorted(vocab.token_bytes[t] for t in
                                                         allowed ^ expect if t < vocab.n_tokens))
        checked += 1
        for t in sorted(allowed - {eos} - set(vocab.eos_token_ids)):
            assert matcher.accept_token(t)
            visit(prefix + vocab.token_bytes[t])
            matcher.rollback(1)
        # a token the mask forbids is refused by accept_token too
        for t in random.Random(len(prefix)).sample(range(vocab.n_tokens), 20):
            if t not in allowed and vocab.text_token_mask[t]:
                assert not matcher.accept_token(t), (prefix, vocab.token_bytes[t])

    visit(b"")
    assert checked >= len(valid)
    assert valid <= seen


LLAMA3_SCHEMAS = [
    {"type": "object",
     "properties": {f"field_{i}": {"type": "integer"} for i in range(12)},
     "required": ["field_3", "field_7"], "additionalProperties": {"type": "boolean"}},
    {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 3},
                 "uniqueItems": True, "minItems": 2},
        "name": {"type": "string"}},
     "required": ["tags"], "additionalProperties": False},
    {"type": "object", "patternProperties": {"^k[0-9]$": {"type": "integer"}},
     "properties": {"kx": {"type": "null"}}, "minProperties": 3,
     "additionalProperties": False},
]


def _no_repeats(text: str):
    def pairs(items):
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), keys
        return dict(items)
    value = json.loads(text, object_pairs_hook=pairs)
    return value


@pytest.mark.parametrize("index", range(len(LLAMA3_SCHEMAS)))
def test_llama3_walks_end_valid(llama3_vocab, index):
    """Uniform choices among the allowed llama3 tokens, then the completion planner: the mask
    is never empty and every walk ends in a document jsonschema accepts, with distinct keys
    and items."""
    from constrained.bitmask import allowed_token_ids
    from constrained.decoding.budget import CompletionPlanner
    from constrained.decoding.byte_tokens import ByteTokenizer
    schema = LLAMA3_SCHEMAS[index]
    compiled = compile_grammar(schema_to_grammar(schema, property_order="any"), llama3_vocab)
    planner = CompletionPlanner(ByteTokenizer.of(llama3_vocab))
    rng = random.Random(index)
    for steps in (5, 15, 30, 45):
        matcher = compiled.matcher()
        text = b""
        for _ in range(steps):
            ids = allowed_token_ids(_mask(matcher, llama3_vocab), llama3_vocab.size)
            ids = [t for t in ids.tolist() if t not in llama3_vocab.eos_token_ids]
            if not ids:
                break
            tid = rng.choice(ids)
            assert matcher.accept_token(tid)
            text += llama3_vocab.token_bytes[tid]
        plan = planner.plan(matcher)
        assert plan is not None, text
        for tid in plan:
            assert matcher.accept_token(tid)
            text += llama3_vocab.token_bytes[tid]
        assert matcher.accept_token(min(llama3_vocab.eos_token_ids))
        value = _no_repeats(text.decode("utf-8"))
        jsonschema.validate(value, schema)
        if isinstance(value, dict) and "tags" in value:
            assert len(set(value["tags"])) == len(value["tags"])


def _mask(matcher, vocab):
    import numpy as np
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(words)
    return words


def test_long_texts_in_one_step():
    """A whole document in one accept_bytes: thousands of distinct items and a 20,000-byte
    key are read once (brackets stepped one after another, long keys never decoded per
    token); a repeated item anywhere is refused."""
    schema = {"type": "object", "properties": {
        "t": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
        "additionalProperties": {"type": "integer"}}
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"],
                                        eos_token_ids=[256])
    compiled = compile_grammar(schema_to_grammar(schema), vocab)
    items = [f'"s{i}"' for i in range(3000)]
    text = '{"t": [' + ",".join(items) + '], "' + "k" * 20000 + '": 1, "[": 2}'
    m = compiled.matcher()
    assert m.accept_string(text) and m.is_accepting()
    m = compiled.matcher()
    assert not m.accept_string('{"t": [' + ",".join(items + ['"s17"']) + "]}")
    m = compiled.matcher()
    assert m.accept_string('{"' + "k" * 20000 + '": 1, "')
    assert not m.accept_string("k" * 20000 + '"')


def test_key_index_round_trips_through_the_disk_cache(tmp_path, monkeypatch, llama3_vocab):
    """A new process reads the key index's tables from the disk cache: equal to a build."""
    from constrained.cfg import key_index as ki
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    built = ki.KeyIndex(llama3_vocab)
    ki._save_tables("keyindex-test.bin", built.tables())
    loaded = ki.KeyIndex(llama3_vocab, ki._load_tables("keyindex-test.bin"))
    for name in ki._TABLES:
        a, b = getattr(built, name), getattr(loaded, name)
        assert set(a) == set(b), name
        assert all(np.array_equal(a[k], b[k]) for k in a), name
    assert set(loaded._head_partials) == set(built._head_partials)
    assert set(loaded._partial_tails) == set(built._partial_tails)
    (tmp_path / "keyindex-test.bin").write_bytes(b"garbage")
    assert ki._load_tables("keyindex-test.bin") is None


def _key_lengths_at_most(text: bytes, most: int) -> bool:
    """Whether every key (every fourth piece between quotes, from the second) of a compact
    object text ``{"k":"v","k":"v"...`` is at most ``most`` bytes long."""
    return all(len(piece) <= most for piece in text.split(b'"')[1::4])


@pytest.mark.parametrize("values, most", [(["p"], 3), (["p", "pq", "pqq"], 2)])
def test_masks_match_the_oracle_with_infinitely_many_keys(values, most):
    """Keys from ``[ab]+`` (infinitely many: every key prefix has unused completions, the
    case where a token's verdict holds whatever keys were written and is kept per grammar
    state): the valid texts are listed with keys of up to 4 letters, every prefix whose keys
    have at most 2 is visited, and its mask is compared with the listing's for each token
    that leaves every key at most 2 letters long (then a viable text has a listed completion,
    its open key taking at most 2 more letters to differ from the used ones). The prefixes
    reach one grammar state with different keys written (``{"a":"p","b`` and
    ``{"b":"p","b``), where a token closing the key and opening another repeats one or not.
    Values of several lengths put tokens that close a value string and open a key at several
    places of one string, which share what they learn about such tokens."""
    schema = {"type": "object", "propertyNames": {"pattern": "^[ab]+$"},
              "additionalProperties": {"enum": values}, "maxProperties": most}
    keys = ["".join(p) for n in range(1, 5) for p in itertools.product("ab", repeat=n)]
    valid = set()
    for k in range(most + 1):
        for chosen in itertools.permutations(keys, k):
            for vals in itertools.product(values, repeat=k):
                valid.add(("{" + ",".join(f'"{c}":"{v}"' for c, v in zip(chosen, vals))
                           + "}").encode())
    prefixes = {v[:i] for v in valid for i in range(len(v) + 1)}
    short = sorted(v.decode() for v in valid if _key_lengths_at_most(v, 2))
    vocab = small_vocab("", short, seed=5, n_pieces=300,
                        extra=(b'":"p","a', b'":"p","b', b'":"p","', b'","a', b'","b', b'"a',
                               b'"b', b'a"', b'b"', b'ab"', b'":"p"}', b'p","ab', b'{"a',
                               b'q","a', b'q","b', b'pq","', b'q"}', b'q","'))
    grammar = schema_to_grammar(schema, whitespace="compact", property_order="any")
    compiled = compile_grammar(grammar, vocab)
    matcher = compiled.matcher()
    seen: set[bytes] = set()
    compared = 0

    def visit(prefix: bytes) -> None:
        nonlocal compared
        if prefix in seen or not _key_lengths_at_most(prefix, 2):
            return
        seen.add(prefix)
        allowed = set(matcher.allowed_token_ids().tolist())
        for t in range(vocab.n_tokens):
            if not vocab.text_token_mask[t]:
                continue
            text = prefix + vocab.token_bytes[t]
            if _key_lengths_at_most(text, 2):
                assert (t in allowed) == (text in prefixes), (prefix, vocab.token_bytes[t])
                compared += 1
        for t in sorted(allowed - set(vocab.eos_token_ids)):
            assert matcher.accept_token(t)
            visit(prefix + vocab.token_bytes[t])
            matcher.rollback(1)

    visit(b"")
    assert {b'{"a":"p","b', b'{"b":"p","b'} <= seen
    assert compared > 10_000
    if len(values) > 1:     # verdicts of tokens closing a value string were shared
        assert any(compiled.__dict__["_distinct_shared"].closing_verdicts.values())
