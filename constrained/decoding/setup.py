"""Resolve generate()'s inputs: the vocabulary, compiled grammars and sampling parameters."""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Mapping, Sequence

from ..errors import DecodingError, VocabularyError
from ..vocabulary import Vocabulary

_vocab_cache: "weakref.WeakKeyDictionary[Any, dict[int, Vocabulary]]" = weakref.WeakKeyDictionary()
_compiled_cache: "OrderedDict[tuple[str, str], Any]" = OrderedDict()
_cache_lock = threading.Lock()
_COMPILED_CACHE_SIZE = 32


def logits_width(model) -> int:
    """Number of logits the model produces per position."""
    head = getattr(model, "get_output_embeddings", lambda: None)()
    weight = getattr(head, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    size = getattr(getattr(model, "config", None), "vocab_size", None)
    if size is None:
        raise DecodingError("cannot tell the model's logits width: pass a Vocabulary")
    return int(size)


def resolve_vocab(tokenizer_or_vocab, width: int | None) -> tuple[Vocabulary, Any]:
    """(vocabulary, tokenizer or None); builds and caches the vocabulary of a HF tokenizer."""
    if isinstance(tokenizer_or_vocab, Vocabulary):
        vocab = tokenizer_or_vocab
        tokenizer = None
    else:
        tokenizer = tokenizer_or_vocab
        if not hasattr(tokenizer, "convert_ids_to_tokens") and not hasattr(tokenizer, "get_vocab"):
            raise DecodingError(f"expected a Hugging Face tokenizer or a Vocabulary, not "
                                f"{type(tokenizer).__name__}")
        key = width if width is not None else -1
        try:
            per_tok = _vocab_cache.setdefault(tokenizer, {})
        except TypeError:  # not weak-referenceable
            per_tok = {}
        vocab = per_tok.get(key)
        if vocab is None:
            vocab = Vocabulary.from_hf(tokenizer, vocab_size=width)
            per_tok[key] = vocab
    if width is not None and width < vocab.size:
        raise VocabularyError(f"the model produces {width} logits but the vocabulary has "
                              f"{vocab.size} entries: the vocabulary does not fit the model")
    return vocab, tokenizer


def resolve_grammar(grammar, vocab: Vocabulary):
    """A CompiledGrammar for ``vocab`` (or None when unconstrained)."""
    if grammar is None:
        return None
    from ..compiler import CompiledGrammar, compile_grammar
    from ..grammar import Grammar
    if isinstance(grammar, CompiledGrammar):
        if grammar.vocab is not vocab and grammar.vocab.hash != vocab.hash:
            raise VocabularyError(
                f"the grammar was compiled for another vocabulary ({grammar.vocab!r}, hash "
                f"{grammar.vocab.hash[:12]}) than the model's ({vocab!r}, hash {vocab.hash[:12]})")
        return grammar
    if not isinstance(grammar, Grammar):
        raise DecodingError(f"grammar must be a Grammar, a CompiledGrammar or None, not "
                            f"{type(grammar).__name__}")
    key = (grammar.key, vocab.hash)
    with _cache_lock:
        compiled = _compiled_cache.get(key)
        if compiled is not None:
            _compiled_cache.move_to_end(key)
            return compiled
    compiled = compile_grammar(grammar, vocab)
    with _cache_lock:
        _compiled_cache[key] = compiled
        while len(_compiled_cache) > _COMPILED_CACHE_SIZE:
            _compiled_cache.popitem(last=False)
    return compiled


def resolve_sampling(sampling, seed: int | None):
    """A samplers.SamplingParams from params, a dict of familiar names, or None (defaults)."""
    from samplers import SamplingParams, SamplerError
    if sampling is None:
        params = SamplingParams()
    elif isinstance(sampling, SamplingParams):
        params = sampling
    elif isinstance(sampling, Mapping):
        known = set(SamplingParams.field_names())
        unknown = sorted(set(sampling) - known)
        if unknown:
            raise DecodingError(f"unknown sampling parameter(s) {unknown}; known: "
                                f"{', '.join(sorted(known))}")
        try:
            params = SamplingParams(**dict(sampling))
        except SamplerError as exc:
            raise DecodingError(f"bad sampling parameters: {exc}") from exc
    else:
        raise DecodingError(f"sampling must be SamplingParams, a dict or None, not "
                            f"{type(sampling).__name__}")
    if seed is not None:
        params = params.replace(seed=int(seed))
    return params


def per_prompt(value, n: int, name: str, *, scalar_types: tuple = ()) -> list:
    """Broadcast one value to ``n`` prompts, or check a per-prompt list has ``n`` entries."""
    if isinstance(value, (list, tuple)) and not isinstance(value, scalar_types):
        if len(value) != n:
            raise DecodingError(f"{name} has {len(value)} entries for {n} prompts")
        return list(value)
    return [value] * n


def seeds_for(seed, n: int) -> list[int | None]:
    """Per-prompt seeds: a list as given, or seed + row (llama.cpp's batch convention)."""
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        if len(seed) != n:
            raise DecodingError(f"seed has {len(seed)} entries for {n} prompts")
        return [None if s is None else int(s) for s in seed]
    if seed is None:
        return [None] * n
    return [int(seed) + r for r in range(n)]
