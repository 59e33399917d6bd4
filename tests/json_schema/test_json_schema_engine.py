"""JSON Schema grammars on the engine with the llama3 vocabulary: token by token, random walks."""
from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest

from constrained import Grammar, compile_grammar

quicktok = pytest.importorskip("quicktok")

PERSON = {"type": "object",
          "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 12},
                         "age": {"type": "integer", "minimum": 0, "maximum": 130},
                         "email": {"type": "string", "format": "email"},
                         "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                                  "maxItems": 3},
                         "score": {"type": "number", "minimum": -1, "maximum": 1}},
          "required": ["name", "age"], "additionalProperties": False}


@pytest.fixture(scope="module")
def encode():
    return quicktok.get_encoding("llama3").encode_ordinary


def _bitmask(vocab):
    return np.zeros((vocab.size + 31) // 32, dtype=np.int32)


def _allowed(bm, tok):
    return bool((int(bm[tok >> 5]) >> (tok & 31)) & 1)


def _feed(cg, tokens) -> bool:
    m, bm = cg.matcher(), _bitmask(cg.vocab)
    for tok in tokens:
        m.fill_next_token_bitmask(bm)
        if not _allowed(bm, tok):
            return False
        assert m.accept_token(tok)
    return m.is_accepting()


def test_json_schema_engine_token_by_token(llama3_vocab, encode):
    cg = compile_grammar(Grammar.from_json_schema(PERSON), llama3_vocab)
    valid = [{"name": "Bob", "age": 42}, {"name": "Zoë \"Z\"", "age": 0, "email": "z@x.org",
                                          "tags": ["a", "c"], "score": -0.5}]
    invalid = [{"name": "", "age": 1}, {"name": "Bob", "age": 131}, {"age": 3},
               {"name": "Bob", "age": 4, "x": 1}, {"name": "Bob", "age": 4, "score": 1.5},
               {"name": "Bob", "age": 4, "tags": ["a", "b", "c", "a"]}]
    for v in valid:
        assert _feed(cg, encode(json.dumps(v))), v
        assert _feed(cg, encode(json.dumps(v, indent=2))), v
    for v in invalid:
        assert not _feed(cg, encode(json.dumps(v))), v


def _walk(cg, rng, max_steps):
    m, bm = cg.matcher(), _bitmask(cg.vocab)
    vocab = cg.vocab
    eos = sorted(vocab.eos_token_ids)
    text = b""
    for step in range(max_steps):
        m.fill_next_token_bitmask(bm)
        bits = np.unpackbits(bm.view(np.uint8), bitorder="little")[:vocab.size]
        allowed = np.flatnonzero(bits)
        assert len(allowed), "dead end"
        ends = [t for t in eos if bits[t]]
        choices = [t for t in allowed.tolist() if t not in eos]
        if ends and (not choices or step > max_steps // 4 or rng.random() < 0.3):
            assert m.is_accepting()
            return text.decode("utf-8")
        # prefer short tokens so walks finish inside the step budget
        tok = min(rng.sample(choices, min(4, len(choices))),
                  key=lambda t: len(vocab.token_bytes[t]))
        assert m.accept_token(tok)
        text += vocab.token_bytes[tok]
    return None


@pytest.mark.slow
def test_json_schema_engine_random_walks_validate(llama3_vocab):
    rng = random.Random(7)
    schemas = [PERSON,
               {"type": "array", "items": {"type": "integer", "minimum": -20, "maximum": 20},
                "maxItems": 4},
               {"anyOf": [{"type": "boolean"}, {"enum": ["x", 1, None]},
                          {"type": "object", "properties": {"k": {"const": 5}},
                           "required": ["k"], "additionalProperties": False}]}]
    finished = 0
    for schema in schemas:
        cg = compile_grammar(Grammar.from_json_schema(schema, whitespace="compact"), llama3_vocab)
        for _ in range(4):
            text = _walk(cg, rng, 120)
            if text is None:
                continue
            finished += 1
            jsonschema.validate(json.loads(text), schema)
    assert finished >= 6
