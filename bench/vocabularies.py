"""Real vocabularies for benchmarks: a Vocabulary plus the encoder that tokenizes documents."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from constrained import Vocabulary


@dataclass(frozen=True)
class BenchVocabulary:
    """A vocabulary and the tokenizer's own encoder (text -> token ids)."""

    vocab: Vocabulary
    encode: Callable[[str], list[int]]


@lru_cache(maxsize=None)
def load_vocabulary(name: str = "llama3") -> BenchVocabulary:
    """llama3, qwen3, o200k_base, cl100k_base (quicktok-v1), or smollm2 (the embedded GGUF)."""
    if name == "smollm2":
        from constrained.model import load_tokenizer
        tokenizer = load_tokenizer()
        return BenchVocabulary(Vocabulary.from_hf(tokenizer),
                               lambda text: tokenizer.encode(text, add_special_tokens=False))
    import quicktok
    enc = quicktok.get_encoding(name)
    return BenchVocabulary(Vocabulary.from_tiktoken(enc), enc.encode_ordinary)
