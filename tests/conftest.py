"""Shared pytest fixtures (additive: each part of the project adds its own)."""
import gc

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


@pytest.fixture(scope="session")
def smollm2():
    """(model, tokenizer, vocab) of the embedded SmolLM2-135M-Instruct, loaded once."""
    from constrained import Vocabulary
    from constrained.errors import ModelNotFoundError
    from constrained.model import load_model
    try:
        model, tokenizer = load_model("smollm2")
    except ModelNotFoundError as exc:  # pragma: no cover - depends on the install
        pytest.skip(str(exc))
    vocab = Vocabulary.from_hf(tokenizer, vocab_size=model.get_output_embeddings().weight.shape[0])
    return model, tokenizer, vocab


@pytest.fixture
def one_torch_thread():
    """Tiny tensors: one torch thread avoids OpenMP contention on a busy machine (where tiny
    ops can take milliseconds)."""
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


TINY_EXTRA = [b'{"', b'": ', b"\xc3\xa9", b"ab", b"abc", b"12"]


@pytest.fixture(scope="session")
def tiny():
    """(model, vocab): a 1-layer random Llama whose vocabulary is the 256 bytes, a few merges
    and an end-of-sequence token (id 256). Fast enough for many seeded runs."""
    from constrained import Vocabulary
    tokens = [bytes((b,)) for b in range(256)] + [b"</s>"] + TINY_EXTRA
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], name="tiny-bytes")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(tokens), hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1, max_position_embeddings=1024,
                                   bos_token_id=256, eos_token_id=256, pad_token_id=256)
    model = transformers.LlamaForCausalLM(cfg).eval()
    return model, vocab


def pytest_addoption(parser):
    parser.addoption("--integrations", action="store_true",
                     help="run tests/integrations (llama.cpp, vLLM): make test-integrations")


def pytest_ignore_collect(collection_path, config):
    """tests/integrations needs the extra environments of `make test-integrations`."""
    if "integrations" in collection_path.parts and not config.getoption("--integrations"):
        return True
    return None


@pytest.fixture
def collector_off():
    """The cyclic garbage collector off for the test (after one collection), on again after:
    whatever the test leaves unfreed is then visible to ``gc.collect()``."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()
