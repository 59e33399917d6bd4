"""Sampler chain: llama.cpp and KoboldAI samplers over batched torch logits.

    from samplers import SamplingParams, SamplerChain, SamplerError
    chain = SamplerChain(SamplingParams(top_k=40, top_p=0.95, seed=1), vocab_size=V)
    next_ids = chain.sample(logits, histories)        # logits [B, V], histories: list of id lists

``samplers.operator.sample_from_probs`` is the stateless batched top-k/top-p operator.
This package never imports the grammar engine; it works on any logits.
"""
from .chain import SamplerChain
from .errors import (AllMaskedError, InvalidLogitsError, InvalidParameterError, SamplerError,
                     UnknownSamplerError)
from .params import SamplingParams

__all__ = [
    "SamplingParams", "SamplerChain", "SamplerError", "InvalidParameterError", "UnknownSamplerError",
    "AllMaskedError", "InvalidLogitsError",
]
