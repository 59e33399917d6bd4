"""Random regexes and random token sequences: only the engine's typed errors may escape."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from constrained import ConstrainedError, Grammar, Vocabulary, compile_grammar
from matcher_fuzz import check_token_sequence

ALPHABET = list("ab()[]{}|*+?.^$\\-,:=!<>0123456789dws\u00e9\u4e2d") + ["\\d", "\\w", "(?:"]
TOKENS = [b"a", b"b", b"ab", b"ba", b"0", b"12", b"\xc3", b"\xa9", "中".encode(), b" ",
          b"-", b"aaa", b"<eos>"]
VOCAB = Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[len(TOKENS) - 1],
                                    vocab_size=len(TOKENS) + 3)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ALPHABET), max_size=14).map("".join))
def test_random_regex_compiles_or_raises_typed_error(pattern):
    try:
        compiled = compile_grammar(Grammar.from_regex(pattern), VOCAB, max_states=200,
                                   cache=False)
    except ConstrainedError:
        return
    m = compiled.matcher()
    mask = np.zeros((len(VOCAB) + 31) // 32, dtype=np.int32)
    m.fill_next_token_bitmask(mask)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from([r"a+b?", r"(ab|ba){1,3}", r"[0-9]{2,4}-?", r"中?é*a"]),
       st.lists(st.integers(min_value=-3, max_value=len(TOKENS) + 5), max_size=20),
       st.randoms(use_true_random=False))
def test_random_token_sequences_never_corrupt_state(pattern, tokens, rnd):
    compiled = compile_grammar(Grammar.from_regex(pattern), VOCAB, cache=False)
    check_token_sequence(compiled.matcher(), len(VOCAB), tokens, rnd)
