"""Fill in the middle with a model: FIM prompt, grammar-constrained middle, completion."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler import CompiledGrammar, compile_grammar
from .matcher import InfillGrammar
from .prompts import FimTokens, build_fim_prompt, fim_tokens


def fill_in_the_middle(completer, prefix: str, suffix: str, *, grammar=None,
                       fim: FimTokens | str | None = None, layout: str = "psm",
                       max_tokens: int = 64, max_prefix_tokens: int | None = None,
                       max_suffix_tokens: int | None = None, infill_sampler: bool = False,
                       top_k: int = 40, **options: Any):
    """The middle between ``prefix`` and ``suffix``, written by ``completer``'s model.

    ``completer`` is a :class:`constrained.logprobs.completion.Completer` (it encodes text and
    runs the model). ``fim``: FimTokens, a family name, or None to detect them from the
    vocabulary. With ``grammar`` (a Grammar or CompiledGrammar of the *whole* text) the middle
    keeps ``prefix + middle`` viable and may end only where ``suffix`` can follow. The middle
    ends at any of the family's end tokens (EOS, FIM pad, EOT, ...). Other ``options`` go to
    the completer (temperature, seed, logit_bias, top_logprobs). ``infill_sampler`` draws each
    token after top-``top_k`` and llama.cpp's infill sampler (samplers.infill), which ends the
    middle once end tokens hold enough mass. Returns the Completion; ``text`` is the middle.
    """
    vocab = completer.vocab
    tokens = fim if isinstance(fim, FimTokens) else fim_tokens(vocab, fim)
    prompt = build_fim_prompt(completer.encode(prefix) if prefix else [],
                              completer.encode(suffix) if suffix else [], tokens, layout=layout,
                              max_prefix_tokens=max_prefix_tokens,
                              max_suffix_tokens=max_suffix_tokens)
    constraint = None
    if grammar is not None:
        compiled = grammar if isinstance(grammar, CompiledGrammar) else \
            compile_grammar(grammar, vocab)
        constraint = InfillGrammar(compiled, prefix, suffix, end_ids=tokens.end_ids)
    processors = options.pop("processors", ())
    if infill_sampler:
        processors = (*processors, _top_k(top_k), _infill_stage(vocab, tokens))
    return completer(prompt.ids, grammar=constraint, max_tokens=max_tokens,
                     stop_ids=sorted(tokens.end_ids), processors=processors, **options)


def _top_k(k: int):
    def keep_top(x: np.ndarray) -> np.ndarray:
        if k <= 0 or k >= x.size:
            return x
        cut = np.partition(x, x.size - k)[x.size - k]
        return np.where(x >= cut, x, -np.inf)
    return keep_top


def _infill_stage(vocab, tokens: FimTokens):
    from samplers.infill import InfillSampler
    texts = [b"" if i in vocab.special_token_ids else t for i, t in enumerate(vocab.token_bytes)]
    eot = min(tokens.end_ids & vocab.eos_token_ids or tokens.end_ids)
    return InfillSampler(tokens.end_ids, texts, eot_id=eot)
