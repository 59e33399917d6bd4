"""Masks equal a brute-force oracle's verdict token by token, EOS included."""
import random

import numpy as np
import pytest
from regex_oracle import Oracle, oracle_allowed
from regex_patterns import PATTERNS

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, unpack_bitmask


def _small_vocab() -> Vocabulary:
    toks = [bytes([b]) for b in range(256)]
    toks += [w.encode() for w in ["ab", "abc", "bc", "cd", "foo", "bar", "oob", "fooba", "20",
                                  "2024", "-0", "1-", ":3", ".com", "@e", "xa", "yes", "no",
                                  "true", "nul", "é", "éé", "ü", "αβ", "中", "😀", "😀!",
                                  " world", "hello", "SELECT", "Sel", " from", "\"a", "\\\"",
                                  "</", "<b>", "1.5e", "ff-", "Mon,", " 12"]]
    toks += [b"\xc3", b"\xa9\xc3", b"\xf0\x9f", b"\x98\x80", b"\xe4\xb8", b"\xad1", b"\xce\xb1\xce"]
    toks += [b"<|eos|>", b"<|pad|>", b""]
    n = len(toks)
    return Vocabulary.from_token_bytes(toks, eos_token_ids=[n - 3], special_token_ids=[n - 2],
                                       vocab_size=n + 5)


SMALL = _small_vocab()


def _prefixes(oracle: Oracle, rng: random.Random, count: int) -> list[bytes]:
    """The empty prefix plus random byte prefixes of texts walked through the oracle."""
    out = [b""]
    while len(out) < count:
        data = oracle.random_text(rng).encode()
        if data:
            out.append(data[:rng.randint(1, len(data))])
    return out


def _engine_allowed(cg, prefix: bytes) -> np.ndarray:
    m = cg.matcher()
    assert m.accept_bytes(prefix)
    bm = allocate_token_bitmask(cg.vocab.size)
    m.fill_next_token_bitmask(bm)
    return unpack_bitmask(bm, cg.vocab.size)


def _check(cg, oracle, prefix):
    got = _engine_allowed(cg, prefix)
    want = oracle_allowed(oracle, cg.vocab, prefix)
    diff = np.nonzero(got != want)[0]
    assert not len(diff), (prefix, [(int(t), cg.vocab.token_bytes[t] if t < cg.vocab.n_tokens
                                     else "pad", bool(got[t])) for t in diff[:10]])


def test_at_least_forty_patterns():
    assert len(PATTERNS) >= 40


@pytest.mark.parametrize("pattern", PATTERNS)
def test_small_vocabulary_masks_equal_oracle(pattern):
    oracle = Oracle(pattern)
    cg = compile_grammar(Grammar.from_regex(pattern), SMALL, cache=False)
    for prefix in _prefixes(oracle, random.Random(pattern), 8):
        _check(cg, oracle, prefix)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_llama3_masks_equal_oracle(pattern, llama3_vocab):
    oracle = Oracle(pattern)
    cg = compile_grammar(Grammar.from_regex(pattern), llama3_vocab, cache=False)
    for prefix in _prefixes(oracle, random.Random(pattern), 8):
        _check(cg, oracle, prefix)
