"""GGUF tokenizers: the SmolLM2 file, and clear errors for missing or corrupt files."""
import pytest

from constrained import ModelNotFoundError, Vocabulary, VocabularyError
from constrained.model.loading import default_gguf_path


def test_smollm2_gguf_vocabulary():
    vocab = Vocabulary.from_gguf(str(default_gguf_path()))
    assert vocab.n_tokens == 49152
    assert vocab.token_bytes[2] == b"<|im_end|>" and 2 in vocab.eos_token_ids
    # byte-level BPE: the space marker is decoded; every printable ASCII byte is a token
    assert b" return" in vocab.token_bytes and b"\n\n" in vocab.token_bytes
    singles = {t for t in vocab.token_bytes if len(t) == 1}
    assert {bytes([b]) for b in range(32, 127)} <= singles


def test_missing_gguf(tmp_path):
    with pytest.raises(ModelNotFoundError, match="nope.gguf"):
        Vocabulary.from_gguf(str(tmp_path / "nope.gguf"))


def test_corrupt_gguf(tmp_path):
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 64)
    with pytest.raises(VocabularyError, match="corrupt.gguf"):
        Vocabulary.from_gguf(str(bad))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(default_gguf_path().read_bytes()[:5000])
    with pytest.raises(VocabularyError, match="truncated.gguf"):
        Vocabulary.from_gguf(str(truncated))
