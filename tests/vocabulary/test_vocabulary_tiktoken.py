"""Real tiktoken-style vocabularies (llama3, qwen3 from quicktok-v1): exact token bytes."""
import pytest

from constrained import Vocabulary
from roundtrip_strings import ROUNDTRIP_STRINGS

quicktok = pytest.importorskip("quicktok")


@pytest.fixture(scope="module", params=["llama3", "qwen3"])
def encoding_and_vocab(request):
    enc = quicktok.get_encoding(request.param)
    return enc, Vocabulary.from_tiktoken(enc)


def test_sizes_and_end_of_generation(encoding_and_vocab):
    enc, vocab = encoding_and_vocab
    assert vocab.n_tokens == enc.n_vocab
    assert enc.eot_token in vocab.eos_token_ids
    names = {vocab.token_bytes[i] for i in vocab.eos_token_ids}
    assert names & {b"<|eot_id|>", b"<|im_end|>"}
    assert all(enc.is_special_token(i) for i in vocab.special_token_ids)
    assert not vocab.text_token_mask[list(vocab.special_token_ids)].any()


@pytest.mark.parametrize("text", ROUNDTRIP_STRINGS)
def test_roundtrip(encoding_and_vocab, text):
    enc, vocab = encoding_and_vocab
    ids = enc.encode_ordinary(text)
    assert vocab.decode(ids) == text.encode("utf-8")


def test_padded_logits(encoding_and_vocab):
    enc, _ = encoding_and_vocab
    wide = Vocabulary.from_tiktoken(enc, vocab_size=enc.n_vocab + 128)
    assert len(wide) == enc.n_vocab + 128
    assert not wide.text_token_mask[enc.n_vocab:].any()
