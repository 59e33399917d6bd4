"""Masks equal a brute-force oracle at random reachable prefixes, for tricky grammars."""
import random

import numpy as np
import pytest

from cfg_grammars import GRAMMARS
from cfg_lark import grammar_from_lark_text, lark_parser
from cfg_oracle import Oracle
from cfg_vocab import small_vocab
from constrained.bitmask import allowed_token_ids
from constrained.cfg import compile_cfg


def _engine_allowed(matcher, vocab) -> set:
    words = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    matcher.fill_next_token_bitmask(words)
    return set(allowed_token_ids(words, vocab.size).tolist())


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_masks_equal_oracle_on_random_walks(name, seed):
    text, docs = GRAMMARS[name]
    grammar = grammar_from_lark_text(text)
    vocab = small_vocab(text, docs)
    oracle = Oracle(grammar)
    compiled = compile_cfg(grammar, vocab)
    lark = lark_parser(text)
    rng = random.Random(sum(name.encode()) + 32 * seed)
    eos = min(vocab.eos_token_ids)
    for walk in range(4):
        matcher = compiled.matcher()
        st = oracle.initial
        out = b""
        for step in range(25):
            expected = oracle.allowed(st, vocab)
            got = _engine_allowed(matcher, vocab)
            assert got == expected, (name, out, [vocab.token_bytes[i] for i in got ^ expected])
            text_ids = sorted(expected - {eos})
            if not text_ids or (eos in expected and rng.random() < 0.15):
                assert matcher.accept_token(eos)
                lark.parse(out.decode())   # every completed output parses with Lark
                break
            # prefer tokens that keep the walk short enough to finish
            tid = rng.choice(text_ids)
            assert matcher.accept_token(tid)
            out += vocab.token_bytes[tid]
            st = oracle.feed(st, vocab.token_bytes[tid])
            assert st is not None


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_masks_equal_oracle_along_sample_documents(name):
    text, docs = GRAMMARS[name]
    grammar = grammar_from_lark_text(text)
    vocab = small_vocab(text, docs, seed=1)
    oracle = Oracle(grammar)
    compiled = compile_cfg(grammar, vocab)
    byte_id = {vocab.token_bytes[i]: i for i in range(256)}
    for doc in docs:
        matcher = compiled.matcher()
        st = oracle.initial
        for b in doc.encode():
            assert _engine_allowed(matcher, vocab) == oracle.allowed(st, vocab)
            assert matcher.accept_token(byte_id[bytes((b,))])
            st = oracle.feed(st, bytes((b,)))
        assert _engine_allowed(matcher, vocab) == oracle.allowed(st, vocab)
        assert matcher.is_accepting()
