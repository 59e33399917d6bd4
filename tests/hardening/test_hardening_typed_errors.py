"""Hostile input gets a typed error naming its place, in bounded time, with a short message.

A fuzz corpus of our own: schemas holding values of every JSON type in every keyword, matcher
call sequences with arguments of the wrong type, bitmasks of every wrong shape and dtype,
grammar files that are not UTF-8 or too large, compiles past their time limit, and the disk
cache past its size bound.
"""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.automata import disk_cache
from constrained.bitmask import bitmask_words
from constrained.errors import (ConstrainedError, GrammarError, LimitExceededError,
                                MatcherError)
from constrained.infill import InfillGrammar

TOKENS = [bytes([b]) for b in range(256)] + [b"ab", b'{"', b"</s>"]
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[len(TOKENS) - 1])
WORDS = bitmask_words(VOCAB.size)

KEYWORDS = ["type", "enum", "const", "properties", "required", "items", "prefixItems",
            "additionalProperties", "patternProperties", "propertyNames", "minLength",
            "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
            "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "contains",
            "minContains", "maxContains", "minProperties", "maxProperties", "allOf", "anyOf",
            "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
            "dependencies", "unevaluatedProperties", "unevaluatedItems", "$ref", "$defs",
            "definitions", "$anchor", "$id", "$schema", "title", "default", "examples"]
VALUES = [None, True, False, 0, -1, 3, 1.5, 1e308, 10**40, "", "x", "string", "#/$defs/a",
          "^(a", [], [1], ["a", "a"], [{}], [None], [[]], {}, {"a": 1}, {"a": {}},
          {"a": {"type": "string"}}, {"a": []}, {"a": ["b"]}]


def _message_ok(err: BaseException) -> bool:
    return 0 < len(str(err)) < 700


def test_every_json_type_in_every_keyword_is_compiled_or_a_typed_error():
    rng = random.Random(5)
    outcomes = {"compiled": 0, "refused": 0}
    schemas = [{k: v} for k in KEYWORDS for v in VALUES]
    schemas += [{"type": "object", "properties": {"p": {k: v}}} for k in KEYWORDS
                for v in VALUES]
    for _ in range(300):
        schemas.append({k: rng.choice(VALUES) for k in rng.sample(KEYWORDS, 3)})
    for schema in schemas:
        try:
            grammar = Grammar.from_json_schema(schema)
            compile_grammar(grammar, VOCAB).matcher().allowed_token_ids()
            outcomes["compiled"] += 1
        except ConstrainedError as e:
            assert _message_ok(e), (schema, str(e)[:200])
            if isinstance(e, GrammarError) and not isinstance(e, LimitExceededError):
                assert e.pointer is not None or e.line is not None, (schema, str(e))
            outcomes["refused"] += 1
    assert outcomes["compiled"] > 100 and outcomes["refused"] > 100


def _matchers():
    schema = compile_grammar(Grammar.from_json_schema({"type": "string"}), VOCAB)
    yield compile_grammar(Grammar.from_regex("a+b"), VOCAB).matcher()
    yield compile_grammar(Grammar.from_lark('start: "a"+ "b"'), VOCAB).matcher()
    yield schema.matcher()
    yield InfillGrammar(schema, '"a', '"').matcher()


BAD_BITMASKS = [
    np.zeros(WORDS, dtype=np.float32), np.zeros(WORDS, dtype=np.int64),
    np.zeros(WORDS, dtype=np.uint8), np.zeros(WORDS - 1, dtype=np.int32),
    np.zeros((2, 2, WORDS), dtype=np.int32), np.frombuffer(bytes(4 * WORDS), dtype=np.int32),
    [0] * WORDS, "mask", None, np.zeros((0, WORDS), dtype=np.int32),
]


@pytest.mark.parametrize("matcher", list(_matchers()), ids=lambda m: type(m).__name__)
def test_matcher_misuse_is_a_matcher_error(matcher):
    for bitmask in BAD_BITMASKS:
        with pytest.raises(MatcherError):
            matcher.fill_next_token_bitmask(bitmask)
    rows = np.zeros((2, WORDS), dtype=np.int32)
    for index in (2, -1, 10**9, "0", 1.0):
        with pytest.raises(MatcherError):
            matcher.fill_next_token_bitmask(rows, index)
    for token in ("a", 1.5, None, b"a", [1]):
        with pytest.raises(MatcherError):
            matcher.accept_token(token)
    for data in ("ab", 5, None, [97]):
        with pytest.raises(MatcherError):
            matcher.accept_bytes(data)
    for text in ("\ud800", b"ab", 5):
        with pytest.raises(MatcherError):
            matcher.accept_string(text)
    for n in ("1", 1.0, -1, 10**6):
        with pytest.raises(MatcherError):
            matcher.rollback(n)
    assert matcher.accept_token(10**30) is False and matcher.accept_token(-5) is False
    # after all that, the matcher still works
    assert matcher.fill_next_token_bitmask(np.zeros((2, WORDS), dtype=np.int32), 1) in (True,
                                                                                       False)


def test_random_matcher_call_sequences_raise_only_typed_errors():
    rng = random.Random(11)
    args = [0, 97, 98, len(TOKENS) - 1, -1, 10**12, "a", 2.5, None, b"ab", "ab", b"\xff"]
    for matcher in _matchers():
        for _ in range(400):
            call = rng.choice(["accept_token", "accept_bytes", "accept_string", "rollback",
                               "fill", "forced_bytes", "is_accepting", "reset"])
            try:
                if call == "fill":
                    matcher.fill_next_token_bitmask(rng.choice(BAD_BITMASKS + [
                        np.zeros(WORDS, dtype=np.int32)]))
                elif call in ("forced_bytes", "is_accepting", "reset"):
                    getattr(matcher, call)()
                else:
                    getattr(matcher, call)(rng.choice(args))
            except ConstrainedError as e:
                assert _message_ok(e)


def test_grammar_file_that_is_not_utf8_names_its_line(tmp_path):
    for ext in (".lark", ".gbnf", ".json"):
        path = tmp_path / f"g{ext}"
        path.write_bytes(b'\n\nstart: "caf\xe9"\n')
        with pytest.raises(GrammarError) as err:
            Grammar.from_file(path)
        assert err.value.line == 3


def test_grammar_file_larger_than_the_bound_is_refused_unread(tmp_path):
    path = tmp_path / "big.lark"
    path.write_text('start: "a"\n' + "// filler\n" * 2000)
    with pytest.raises(LimitExceededError):
        Grammar.from_file(path, max_file_bytes=1000)


def test_compile_timeout_stops_a_long_compile():
    grammar = Grammar.from_regex("(a|b)*a(a|b){18}")
    with pytest.raises(LimitExceededError, match="compile_timeout"):
        compile_grammar(grammar, VOCAB, compile_timeout=0.05, max_states=10**7)
    with pytest.raises(LimitExceededError, match="compile_timeout"):
        Grammar.from_json_schema({"type": "object", "properties": {
            f"p{i}": {"type": "string", "pattern": f"^(a|b)*a(a|b){{{i % 9}}}$"}
            for i in range(3000)}}, compile_timeout=0.01)
    with pytest.raises(ValueError):
        compile_grammar(grammar, VOCAB, compile_timeout=-1)


def test_disk_cache_stays_under_its_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("CONSTRAINED_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CONSTRAINED_CACHE_MAX_BYTES", str(30_000))
    for i in range(6):
        assert disk_cache.save_arrays(f"t-{i}.bin", {"a": np.full(2_000, i, dtype=np.int32)})
        os.utime(tmp_path / f"t-{i}.bin", (1000 + i, 1000 + i))
    files, size = disk_cache.cache_usage()
    assert size <= 30_000 and files < 6
    assert disk_cache.load_arrays("t-5.bin") is not None      # the newest survive
    assert disk_cache.load_arrays("t-0.bin") is None          # the oldest went first
    removed, _ = disk_cache.prune_cache(0)
    assert removed >= 1 and disk_cache.cache_usage() == (0, 0)
