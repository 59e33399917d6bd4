"""Hugging Face tokenizers: byte-level BPE (SmolLM2, from its GGUF file) and SentencePiece."""
import random

import pytest

from constrained import Vocabulary, VocabularyError
from constrained.model.loading import default_gguf_path
from roundtrip_strings import ROUNDTRIP_STRINGS


@pytest.fixture(scope="module")
def smollm2_tokenizer():
    from transformers import AutoTokenizer
    path = default_gguf_path()
    return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


@pytest.fixture(scope="module")
def sentencepiece_dir(tmp_path_factory):
    """A byte-fallback SentencePiece BPE model trained here on random multilingual lines."""
    spm = pytest.importorskip("sentencepiece")
    rng = random.Random(0)
    words = ["hello", "world", "naïve", "café", "日本", "テキスト", "the", "quick", "brown",
             "json", "{", "}", '"', ":", "data", "😀", "tab\tbed"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(3000)]
    folder = tmp_path_factory.mktemp("sp")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / "tokenizer"), vocab_size=350,
        byte_fallback=True, model_type="bpe", character_coverage=1.0,
        normalization_rule_name="identity", remove_extra_whitespaces=False,
        minloglevel=2)
    return folder


def test_smollm2_hf_equals_gguf(smollm2_tokenizer):
    from_hf = Vocabulary.from_hf(smollm2_tokenizer)
    from_gguf = Vocabulary.from_gguf(str(default_gguf_path()))
    assert from_hf.n_tokens == from_gguf.n_tokens == 49152
    assert from_hf.token_bytes == from_gguf.token_bytes
    assert from_hf.special_token_ids == from_gguf.special_token_ids
    assert from_hf.eos_token_ids == from_gguf.eos_token_ids
    assert from_hf.token_bytes[2] == b"<|im_end|>" and 2 in from_hf.eos_token_ids


@pytest.mark.parametrize("text", ROUNDTRIP_STRINGS)
def test_smollm2_roundtrip(smollm2_tokenizer, text):
    vocab = Vocabulary.from_hf(smollm2_tokenizer)
    ids = smollm2_tokenizer.encode(text, add_special_tokens=False)
    assert vocab.decode(ids) == text.encode("utf-8")


def test_smollm2_padded_logits(smollm2_tokenizer):
    vocab = Vocabulary.from_hf(smollm2_tokenizer, vocab_size=49152 + 64)
    assert len(vocab) == 49216 and not vocab.text_token_mask[49152:].any()


def test_sentencepiece_pieces(sentencepiece_dir):
    from transformers import LlamaTokenizer
    tok = LlamaTokenizer.from_pretrained(sentencepiece_dir, legacy=False)
    vocab = Vocabulary.from_hf(tok)
    pieces = tok.convert_ids_to_tokens(list(range(vocab.n_tokens)))
    for i, piece in enumerate(pieces):
        if piece.startswith("<0x") and len(piece) == 6:
            assert vocab.token_bytes[i] == bytes([int(piece[3:5], 16)])
        elif i not in vocab.special_token_ids:
            assert vocab.token_bytes[i] == piece.replace("\u2581", " ").encode()
    assert tok.eos_token_id in vocab.eos_token_ids
    assert {tok.bos_token_id, tok.unk_token_id} <= vocab.special_token_ids


@pytest.mark.parametrize("text", ROUNDTRIP_STRINGS)
def test_sentencepiece_roundtrip(sentencepiece_dir, text):
    from transformers import LlamaTokenizer
    tok = LlamaTokenizer.from_pretrained(sentencepiece_dir, legacy=False)
    vocab = Vocabulary.from_hf(tok)
    ids = tok.encode(text, add_special_tokens=False)
    got = vocab.decode(ids)
    # SentencePiece marks the start of the text with a space (its dummy prefix): that space is
    # part of the first token's bytes; everything after it must be exact.
    expected = text.encode("utf-8")
    if text and got != expected:
        expected = b" " + expected
    assert got == expected


def test_tokenizer_without_eos_is_refused():
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    raw = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw)
    with pytest.raises(VocabularyError, match="no end-of-sequence"):
        Vocabulary.from_hf(tok)
    assert Vocabulary.from_hf(tok, eos_token_ids=[2]).eos_token_ids == {2}
