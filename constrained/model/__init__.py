"""Loading causal language models: the embedded default model or any local Hugging Face folder."""
from .loading import DEFAULT_MODEL, hf_folder, load_model, load_tokenizer

__all__ = ["DEFAULT_MODEL", "hf_folder", "load_model", "load_tokenizer"]
