"""Strings generated from a pattern are accepted token by token under two tokenizations."""
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from regex_patterns import PATTERNS

from constrained import Grammar, compile_grammar
from constrained.bitmask import allocate_token_bitmask, is_allowed

quicktok = pytest.importorskip("quicktok")
_ENC = quicktok.get_encoding("llama3")
# patterns hypothesis can generate from (it does not take \A...\Z as full-match anchors)
HYP_PATTERNS = [p for p in PATTERNS if not p.startswith(r"\A")]


@pytest.fixture(scope="module")
def byte_ids(llama3_vocab):
    ids = {}
    for tid, tok in enumerate(llama3_vocab.token_bytes):
        if tok and tid not in llama3_vocab.special_token_ids:
            ids.setdefault(tok, tid)
    return ids


def _random_split(data: bytes, byte_ids: dict, rng: random.Random) -> list[int]:
    """A random tokenization of ``data`` into vocabulary tokens (pieces may split characters)."""
    out, i = [], 0
    while i < len(data):
        for _ in range(8):
            j = i + rng.randint(1, min(8, len(data) - i))
            if data[i:j] in byte_ids:
                break
        else:
            j = i + 1
        out.append(byte_ids[data[i:j]])
        i = j
    return out


def _run(cg, ids, eos):
    m = cg.matcher()
    bm = allocate_token_bitmask(cg.vocab.size)
    for tid in ids:
        m.fill_next_token_bitmask(bm)
        assert is_allowed(bm, tid), (tid, cg.vocab.token_bytes[tid])
        assert m.accept_token(tid)
    m.fill_next_token_bitmask(bm)
    assert m.is_accepting() and is_allowed(bm, eos)
    assert m.accept_token(eos) and m.is_terminated()


@pytest.mark.slow
@pytest.mark.parametrize("pattern", HYP_PATTERNS)
def test_generated_strings_are_accepted(pattern, llama3_vocab, byte_ids):
    cg = compile_grammar(Grammar.from_regex(pattern), llama3_vocab, cache=False)
    compiled = re.compile(pattern, re.ASCII)
    eos = 128009

    @settings(max_examples=12, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True).filter(
        lambda s: compiled.fullmatch(s) is not None and not re.search(r"[\ud800-\udfff]", s)))
    def check(text):
        data = text.encode("utf-8")
        greedy = _ENC.encode_ordinary(text)
        assert llama3_vocab.decode(greedy) == data
        _run(cg, greedy, eos)
        split = _random_split(data, byte_ids, random.Random(text))
        assert llama3_vocab.decode(split) == data
        _run(cg, split, eos)

    check()
