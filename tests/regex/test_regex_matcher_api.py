"""Matcher API: bitmask shapes, EOS and special tokens, rollback, reset, forced bytes, errors."""
import numpy as np
import pytest
import torch

from constrained import (CompiledGrammar, Grammar, GrammarMatcher, LimitExceededError,
                         RegexError, Vocabulary, compile_grammar)
from constrained.bitmask import (allocate_token_bitmask, allowed_token_ids,
                                 apply_token_bitmask_inplace, is_allowed, pack_bool,
                                 unpack_bitmask)

TOKENS = [b"a", b"b", b"ab", b"abc", b"c", b"-", b"\xc3", b"\xa9", "é".encode(), b"<eos>",
          b"<sys>", b"x"]
EOS, SYS = 9, 10


def _vocab(size=None):
    return Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[EOS], special_token_ids=[SYS],
                                       vocab_size=size)


def _ids(bitmask, vocab):
    return set(allowed_token_ids(bitmask, vocab.size).tolist())


def test_compiled_grammar_interface():
    vocab = _vocab()
    cg = compile_grammar(Grammar.from_regex("ab"), vocab, cache=False)
    assert isinstance(cg, CompiledGrammar) and cg.vocab is vocab
    assert cg.grammar.regex == "ab"
    m1, m2 = cg.matcher(), cg.matcher()
    assert isinstance(m1, GrammarMatcher) and m1 is not m2


def test_eos_only_when_complete_and_only_eos_at_the_end():
    vocab = _vocab()
    m = compile_grammar(Grammar.from_regex("abc?"), vocab, cache=False).matcher()
    bm = allocate_token_bitmask(vocab.size)
    m.fill_next_token_bitmask(bm)
    assert _ids(bm, vocab) == {0, 2, 3}
    assert not m.accept_token(EOS) and not m.accept_token(1)
    assert m.accept_token(2)
    m.fill_next_token_bitmask(bm)
    assert _ids(bm, vocab) == {4, EOS}
    assert m.accept_token(4)
    m.fill_next_token_bitmask(bm)
    assert _ids(bm, vocab) == {EOS}            # no live continuation: only EOS
    assert m.is_accepting() and not m.is_terminated()
    assert not m.accept_token(SYS)
    assert m.accept_token(EOS) and m.is_terminated()
    assert not m.accept_token(EOS) and not m.accept_token(0)


def test_padding_and_special_never_allowed():
    vocab = _vocab(size=40)
    m = compile_grammar(Grammar.from_regex(r"(?s:.)*"), vocab, cache=False).matcher()
    bm = allocate_token_bitmask(vocab.size)
    m.fill_next_token_bitmask(bm)
    ids = _ids(bm, vocab)
    assert SYS not in ids and not any(i >= len(TOKENS) for i in ids)
    assert {0, 1, 6, 8, 11, EOS} <= ids
    assert not m.accept_token(SYS) and not m.accept_token(35) and not m.accept_token(-1)


def test_two_dimensional_and_numpy_bitmasks():
    vocab = _vocab()
    m = compile_grammar(Grammar.from_regex("é"), vocab, cache=False).matcher()
    bm = allocate_token_bitmask(vocab.size, batch_size=3)
    bm[0] = -1
    m.fill_next_token_bitmask(bm, index=1)
    assert _ids(bm[1], vocab) == {6, 8} and (bm[0] == -1).all() and (bm[2] == 0).all()
    arr = np.full(4, -1, dtype=np.int32)      # wider than needed: the rest is cleared
    m.fill_next_token_bitmask(arr)
    assert _ids(arr[:1], vocab) == {6, 8} and (arr[1:] == 0).all()
    assert m.accept_token(6)
    m.fill_next_token_bitmask(arr)
    assert _ids(arr[:1], vocab) == {7}


def test_rollback_restores_exact_state_and_reset():
    vocab = _vocab()
    m = compile_grammar(Grammar.from_regex("(ab|c)+-?"), vocab, cache=False).matcher()
    bm0, bm1 = allocate_token_bitmask(vocab.size), allocate_token_bitmask(vocab.size)
    m.fill_next_token_bitmask(bm0)
    assert m.accept_token(0)
    m.fill_next_token_bitmask(bm1)
    for tid in (1, 4, 5, EOS):
        assert m.accept_token(tid)
    m.rollback(4)
    again = allocate_token_bitmask(vocab.size)
    m.fill_next_token_bitmask(again)
    assert torch.equal(again, bm1) and not m.is_terminated()
    m.rollback(1)
    m.fill_next_token_bitmask(again)
    assert torch.equal(again, bm0)
    with pytest.raises(ValueError):
        m.rollback(1)
    assert m.accept_string("abc") and m.is_accepting()
    m.reset()
    m.fill_next_token_bitmask(again)
    assert torch.equal(again, bm0)


def test_forced_bytes_and_jump_forward():
    vocab = _vocab()
    m = compile_grammar(Grammar.from_regex('\\{"name": (é|"[a-z]+")\\}'), vocab,
                        cache=False).matcher()
    assert m.forced_bytes() == b'{"name": '
    assert m.find_jump_forward_string() == '{"name": '
    assert m.accept_bytes(b'{"name": \xc3')
    assert m.forced_bytes() == b"\xa9}"
    assert m.find_jump_forward_string() == ""   # starts mid-character
    assert not m.accept_bytes(b"x") and m.accept_bytes(b"\xa9")
    assert m.find_jump_forward_string() == "}"


def test_accept_bytes_rejects_without_change():
    vocab = _vocab()
    m = compile_grammar(Grammar.from_regex("abc"), vocab, cache=False).matcher()
    assert not m.accept_bytes(b"ac") and m.accept_bytes(b"ab") and not m.accept_string("cc")
    assert m.accept_string("c") and m.is_accepting()


def test_bitmask_helpers_roundtrip():
    allowed = np.random.default_rng(0).random(1000) < 0.3
    words = pack_bool(allowed)
    assert (unpack_bitmask(words, 1000) == allowed).all()
    assert is_allowed(words, int(np.argmax(allowed)))
    logits = torch.zeros(2, 1010)
    apply_token_bitmask_inplace(logits, torch.from_numpy(words))
    assert torch.isinf(logits[:, 1000:]).all()
    assert (torch.isfinite(logits[0, :1000]).numpy() == allowed).all()


@pytest.mark.parametrize("pattern,pos", [(r"ab(?=c)", 2), (r"(x)\1", 3), (r"a*+", 1),
                                         (r"[z-a]", 1), (r"ab(", 2), (r"a\bb", 1)])
def test_bad_regex_names_position(pattern, pos):
    with pytest.raises(RegexError) as info:
        compile_grammar(Grammar.from_regex(pattern), _vocab(), cache=False)
    assert info.value.position == pos and f"position {pos}" in str(info.value)


def test_state_limit_is_an_error_not_a_hang():
    with pytest.raises(LimitExceededError):
        compile_grammar(Grammar.from_regex(r"[ab]*a[ab]{30}"), _vocab(), max_states=2000,
                        cache=False)


def test_empty_language_is_an_error():
    with pytest.raises(RegexError):
        compile_grammar(Grammar.from_regex(r"[^\s\S]"), _vocab(), cache=False)


def test_state_key_identifies_equal_futures():
    vocab = _vocab()
    cg = compile_grammar(Grammar.from_regex("(ab|c)+"), vocab, cache=False)
    a, b = cg.matcher(), cg.matcher()
    assert a.accept_token(2) and b.accept_token(4)
    assert a.state_key() == b.state_key()
    assert b.accept_token(0)
    assert a.state_key() != b.state_key()
