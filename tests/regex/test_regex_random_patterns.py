"""Random small regexes: masks on a small vocabulary equal the oracle's at random prefixes."""
import random

import numpy as np
import pytest
from regex_oracle import Oracle, oracle_allowed

from constrained import Grammar, Vocabulary, compile_grammar
from constrained.bitmask import allocate_token_bitmask, unpack_bitmask

_ATOMS = ["a", "b", "é", "😀", r"\.", "-", "[a-c]", "[^b]", r"\d", ".", "[é-ü]", r"\s", "[😀a]"]


def _random_regex(rng: random.Random, depth: int = 0) -> str:
    r = rng.random()
    if depth > 2 or r < 0.35:
        out = rng.choice(_ATOMS)
    elif r < 0.6:
        out = "".join(_random_regex(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    elif r < 0.8:
        out = "(" + "|".join(_random_regex(rng, depth + 1) for _ in range(2)) + ")"
    else:
        out = "(" + _random_regex(rng, depth + 1) + ")"
    q = rng.random()
    if q < 0.15:
        out = f"(?:{out})*"
    elif q < 0.25:
        out = f"(?:{out})+"
    elif q < 0.35:
        out = f"(?:{out})?"
    elif q < 0.45:
        lo = rng.randint(0, 2)
        out = f"(?:{out}){{{lo},{lo + rng.randint(0, 2)}}}"
    return out


def _vocab() -> Vocabulary:
    toks = [bytes([b]) for b in range(256)]
    toks += [t.encode() for t in ["ab", "ba", "é", "éa", "a😀", "😀", "1.", ".-", "-2", "a b",
                                  "ü", "ñé", "bb", "ca"]]
    toks += [b"\xc3", b"\xa9\xc3", b"\xf0\x9f\x98", b"\x80a", b"<eos>"]
    return Vocabulary.from_token_bytes(toks, eos_token_ids=[len(toks) - 1])


VOCAB = _vocab()
PATTERNS = [_random_regex(random.Random(seed)) for seed in range(60)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_random_pattern_masks_equal_oracle(pattern):
    oracle = Oracle(pattern)
    cg = compile_grammar(Grammar.from_regex(pattern), VOCAB, cache=False)
    rng = random.Random(pattern)
    prefixes = [b""]
    for _ in range(5):
        data = oracle.random_text(rng).encode()
        if data:
            prefixes.append(data[:rng.randint(1, len(data))])
    for prefix in prefixes:
        m = cg.matcher()
        assert m.accept_bytes(prefix) == oracle.viable(prefix)
        bm = allocate_token_bitmask(VOCAB.size)
        m.fill_next_token_bitmask(bm)
        got = unpack_bitmask(bm, VOCAB.size)
        want = oracle_allowed(oracle, VOCAB, prefix)
        assert np.array_equal(got, want), (pattern, prefix, np.nonzero(got != want)[0][:10])
