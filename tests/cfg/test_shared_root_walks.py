"""Root walks are shared across grammars by what the live terminals accept from their states:
masks read from a shared walk equal masks computed with every process-wide walk cache empty."""
import json

import numpy as np
import pytest

from constrained import Grammar, compile_grammar
from constrained.cfg import token_tables

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}}},
    {"type": "object", "properties": {"id": {"type": "integer"}, "note": {"type": "string",
                                                                         "maxLength": 3}}},
    {"type": "object", "properties": {"nam": {"type": "boolean"}},
     "additionalProperties": {"type": "string", "maxLength": 2}},
    # keys alike up to a point: from '{"ab' on, one byte ahead looks the same, not two
    {"type": "object", "properties": {"abcd": {"type": "integer"}},
     "additionalProperties": False},
    {"type": "object", "properties": {"abce": {"type": "integer"}},
     "additionalProperties": False},
]
TEXTS = ['{"', '{"x', '{"na', '{"nam', '{"name": "a', '{"id": 1, "n', '{"nx": "a',
         '{"note": "ab', '{"zz": "q', '{"ab', '{"abc']


def _masks(vocab, schema) -> list:
    compiled = compile_grammar(Grammar.from_json_schema(schema), vocab)
    out = []
    for text in TEXTS:
        m = compiled.matcher()
        if not m.accept_bytes(text.encode()):
            out.append(None)
            continue
        out.append(m.allowed_token_ids())
    return out


def _clear():
    token_tables._ROOT_WALKS.clear()
    token_tables._SUBTREE_WALKS.clear()


@pytest.mark.parametrize("order", [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0), (1, 2, 0, 4, 3)])
def test_masks_with_shared_walks_equal_fresh_ones(order, llama3_vocab):
    vocab = llama3_vocab
    fresh = {}
    for i in order:
        _clear()
        fresh[i] = _masks(vocab, SCHEMAS[i])
    _clear()
    for i in order:                 # one after the other: later ones read earlier walks
        shared = _masks(vocab, SCHEMAS[i])
        for text, a, b in zip(TEXTS, fresh[i], shared):
            assert (a is None) == (b is None), text
            if a is not None:
                assert np.array_equal(a, b), (json.dumps(SCHEMAS[i]), text)
