"""Temporary greedy constrained decode used until constrained.generate exists."""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class _Timings:
    prefill: float = 0.0
    decode: float = 0.0
    n: int = 0

    def summary(self) -> dict[str, float]:
        return {"prefill_ms": self.prefill * 1e3, "decode_ms": self.decode * 1e3,
                "ms_per_token": self.decode * 1e3 / self.n if self.n else 0.0}


@dataclass
class _Result:
    text: str
    token_ids: list
    finish_reason: str
    forced_tokens: int = 0
    prompt_tokens: int = 0
    complete: bool = True
    timings: _Timings = field(default_factory=_Timings)


def generate(model, tokenizer, prompts, *, grammar=None, sampling=None, max_new_tokens=64,
             seed=None, chat=True, **_ignored):
    import torch
    from ..bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
    out = []
    for prompt in prompts:
        ids = [int(t) for t in prompt]
        limit = getattr(model.config, "max_position_embeddings", None)
        if limit is not None and len(ids) + max_new_tokens > limit:
            raise ValueError(f"prompt of {len(ids)} tokens + {max_new_tokens} new tokens "
                             f"exceeds the model's {limit} positions")
        matcher = grammar.matcher() if grammar is not None else None
        mask = allocate_token_bitmask(grammar.vocab.size) if grammar is not None else None
        eos = set(grammar.vocab.eos_token_ids) if grammar is not None else {tokenizer.eos_token_id}
        timings = _Timings()
        t0 = time.perf_counter()
        with torch.no_grad():
            res = model(torch.tensor([ids]), use_cache=True)
        timings.prefill = time.perf_counter() - t0
        past, logits = res.past_key_values, res.logits[0, -1]
        gen, reason = [], "length"
        t0 = time.perf_counter()
        for _ in range(max_new_tokens):
            logits = logits.clone()
            if matcher is not None:
                matcher.fill_next_token_bitmask(mask)
                apply_token_bitmask_inplace(logits, mask)
            tok = int(torch.argmax(logits))
            if matcher is not None:
                matcher.accept_token(tok)
            if tok in eos:
                reason = "stop"
                break
            gen.append(tok)
            with torch.no_grad():
                res = model(torch.tensor([[tok]]), past_key_values=past, use_cache=True)
            past, logits = res.past_key_values, res.logits[0, -1]
        timings.decode, timings.n = time.perf_counter() - t0, len(gen)
        complete = matcher.is_accepting() or matcher.is_terminated() if matcher else True
        out.append(_Result(tokenizer.decode(gen), gen, reason, prompt_tokens=len(ids),
                           complete=complete, timings=timings))
    return out
