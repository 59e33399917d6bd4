"""Fixtures for the decode loop: a tiny random Llama over a byte vocabulary (SmolLM2 is in
tests/conftest.py)."""
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY_EXTRA = [b'{"', b'": ', b"\xc3\xa9", b"ab", b"abc", b"12"]


@pytest.fixture(scope="session")
def tiny():
    """(model, vocab): a 1-layer random Llama whose vocabulary is the 256 bytes, a few merges
    and an end-of-sequence token (id 256). Fast enough for many seeded runs."""
    from constrained import Vocabulary
    tokens = [bytes((b,)) for b in range(256)] + [b"</s>"] + TINY_EXTRA
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], name="tiny-bytes")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=1024,
                                   bos_token_id=256, eos_token_id=256, pad_token_id=256)
    model = transformers.LlamaForCausalLM(cfg).eval()
    return model, vocab
