"""Shared pytest fixtures (additive: each part of the project adds its own)."""
import pytest


@pytest.fixture(scope="session")
def llama3_vocab():
    """The llama3 vocabulary (128,256 tokens) from quicktok, with its two end-of-turn tokens."""
    quicktok = pytest.importorskip("quicktok")
    from constrained.vocabulary import Vocabulary

    enc = quicktok.get_encoding("llama3")
    return Vocabulary.from_token_bytes(
        [enc.decode_single_token_bytes(i) for i in range(enc.n_vocab)],
        eos_token_ids=[enc.eot_token, 128009],
        special_token_ids=[i for i in range(enc.n_vocab) if enc.is_special_token(i)],
        name="llama3")
