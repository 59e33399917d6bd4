"""The OpenAI-style completion function over the decode loop (``generate(logprobs=n)``).

Available once ``generate`` records logprobs; the logprobs are those of the model's distribution
plus logit_bias, masked by the grammar, before the rest of the sampler chain. Every call runs
the loop (a prefill per call), so use :class:`constrained.logprobs.completion.Completer` for
thousands of one-token calls.
"""
from __future__ import annotations

import inspect
from typing import Any, Mapping

from .completion import Completion, _text


def generate_has_logprobs() -> bool:
    """Whether the installed decode loop's generate() accepts ``logprobs``."""
    try:
        from ..decoding.loop import generate
    except ImportError:  # pragma: no cover - no decode loop
        return False
    return "logprobs" in inspect.signature(generate).parameters


def complete_with_generate(model, tokenizer_or_vocab, prompt, *, max_tokens: int = 16,
                           logit_bias: Mapping[int | str, float] | None = None,
                           top_logprobs: int = 0, temperature: float = 0.0,
                           seed: int | None = None, grammar=None, **options: Any) -> Completion:
    """Complete ``prompt`` through ``generate`` and return a :class:`Completion`."""
    from ..decoding.loop import generate
    if not generate_has_logprobs():
        raise NotImplementedError("this decode loop's generate() does not record logprobs")
    sampling = {"temperature": float(temperature)}
    if logit_bias:
        sampling["logit_bias"] = {int(t): float(b) for t, b in logit_bias.items()}
    r = generate(model, tokenizer_or_vocab, prompt, grammar=grammar, sampling=sampling,
                 max_new_tokens=max_tokens, seed=seed, logprobs=int(top_logprobs),
                 force_tokens=False, **options)
    from ..decoding.setup import logits_width, resolve_vocab
    vocab, _ = resolve_vocab(tokenizer_or_vocab, logits_width(model))
    texts = vocab.token_bytes
    return Completion(text=r.text, token_ids=list(r.token_ids),
                      token_logprobs=list(r.token_logprobs),
                      top_logprobs=[dict(a) for a in r.top_logprobs],
                      finish_reason="stop" if r.finish_reason == "stop" else "length",
                      prompt_tokens=r.prompt_tokens,
                      tokens=[_text(texts, t) for t in r.token_ids], token_texts=texts)


def generate_oracle(model, tokenizer_or_vocab, prompt, k: int):
    """A top-k logprobs oracle over ``complete_with_generate`` (one loop run per call)."""
    def oracle(logit_bias: Mapping[int, float]) -> dict[int, float]:
        c = complete_with_generate(model, tokenizer_or_vocab, prompt, max_tokens=1,
                                   logit_bias=logit_bias, top_logprobs=k)
        return dict(c.top_logprobs[0])
    return oracle
