"""Vocabulary built from raw token bytes: sizes, padding, hashing, byte matrix, bad input."""
import numpy as np
import pytest

from constrained import Vocabulary, VocabularyError

TOKENS = [b"a", b"b", b"ab", b"\xc3", b"\xa9", b"", b"<eos>", b"hello world"]


def make(**kw):
    return Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[6], **kw)


def test_sizes_and_decode():
    v = make()
    assert len(v) == v.size == v.n_tokens == len(TOKENS)
    assert v.decode([0, 1, 3, 4]) == b"ab\xc3\xa9"
    assert 6 in v.special_token_ids and v.eos_token_ids == {6}


def test_padding_ids_never_carry_text():
    v = make(vocab_size=13)
    assert len(v) == 13 and v.n_tokens == len(TOKENS)
    mask = v.text_token_mask
    assert mask.shape == (13,)
    assert not mask[len(TOKENS):].any()
    # empty tokens and special tokens carry no grammar text either
    assert list(np.flatnonzero(mask)) == [0, 1, 2, 3, 4, 7]
    assert v.decode([0, 12]) == b"a"


def test_byte_matrix_matches_tokens():
    v = make()
    for i, tok in enumerate(TOKENS):
        assert bytes(v.byte_matrix[i, : v.token_lengths[i]]) == tok
        assert not v.byte_matrix[i, v.token_lengths[i]:].any()


def test_hash_is_stable_and_sensitive():
    assert make().hash == make().hash
    assert make().hash != make(vocab_size=20).hash
    other = Vocabulary.from_token_bytes(TOKENS[:-1] + [b"hello World"], eos_token_ids=[6])
    assert other.hash != make().hash
    assert make().hash != Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[6],
                                                      special_token_ids=[7]).hash


def test_bad_input_is_named():
    with pytest.raises(VocabularyError, match="end-of-sequence"):
        Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[])
    with pytest.raises(VocabularyError, match="vocab_size=3"):
        Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[6], vocab_size=3)
    with pytest.raises(VocabularyError, match="99"):
        Vocabulary.from_token_bytes(TOKENS, eos_token_ids=[99])


def test_joined_bytes_and_lengths_match_tokens():
    v = make()
    assert v._joined == b"".join(TOKENS)
    assert v.token_lengths.dtype == np.int32
    assert v.token_lengths.tolist() == [len(t) for t in TOKENS]
    # the digest reads tokens' boundaries, not only their concatenation
    moved = Vocabulary.from_token_bytes([b"a", b"ba", b"b"] + TOKENS[3:], eos_token_ids=[6])
    assert moved._joined == v._joined and moved.hash != v.hash


def test_join_tokens_refuses_non_bytes():
    from constrained.vocabulary._token_bytes import join_tokens
    assert join_tokens([]) == (b"", b"")
    with pytest.raises(TypeError, match="token 1"):
        join_tokens([b"a", "b"])
