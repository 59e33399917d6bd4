"""An OpenAI-style completion function with logprobs and logit_bias, on a causal LM's forward.

Per generated token it reports the chosen token's logprob and the ``top_logprobs`` most likely
alternatives. **Which distribution**: log_softmax of the model's logits plus ``logit_bias``
(and with -inf outside the grammar when a grammar is given), *before* temperature and any other
sampler: the distribution an API with logit_bias exposes, so a full distribution can be
recovered from it (see :mod:`constrained.logprobs.recovery`).

The logits of a prompt are cached (a small LRU keyed by the token ids), so repeated one-token
calls on the same prompt with different biases cost one log_softmax each, not a forward pass.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ..bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from ..vocabulary import Vocabulary
from .recovery import TopLogprobsOracle


@dataclass
class Completion:
    """One completion: generated tokens with their logprobs (see the module docstring)."""

    text: str
    token_ids: list[int]
    token_logprobs: list[float]
    top_logprobs: list[dict[int, float]]
    finish_reason: str
    prompt_tokens: int
    tokens: list[str] = field(default_factory=list)

    def to_openai(self) -> dict[str, Any]:
        """The legacy OpenAI completions response shape (top_logprobs keyed by token text;
        ``top_logprobs_ids`` keeps the exact ids, since token texts can collide)."""
        offsets, pos = [], 0
        for t in self.tokens:
            offsets.append(pos)
            pos += len(t)
        return {
            "object": "text_completion",
            "choices": [{
                "index": 0,
                "text": self.text,
                "finish_reason": self.finish_reason,
                "logprobs": {
                    "tokens": list(self.tokens),
                    "token_logprobs": list(self.token_logprobs),
                    "top_logprobs": [{_text(self._texts, t): lp for t, lp in alts.items()}
                                     for alts in self.top_logprobs],
                    "top_logprobs_ids": [dict(alts) for alts in self.top_logprobs],
                    "text_offset": offsets,
                },
            }],
            "usage": {"prompt_tokens": self.prompt_tokens,
                      "completion_tokens": len(self.token_ids),
                      "total_tokens": self.prompt_tokens + len(self.token_ids)},
        }

    _texts: Sequence[bytes] = field(default=(), repr=False)


def _text(texts: Sequence[bytes], tid: int) -> str:
    if 0 <= tid < len(texts):
        return texts[tid].decode("utf-8", errors="backslashreplace")
    return ""


class Completer:
    """Completions from a Hugging Face causal LM (``model``) and its tokenizer or Vocabulary.

    ``tokenizer`` encodes text prompts; with a Vocabulary, prompts must be token ids.
    """

    def __init__(self, model, tokenizer, *, vocab: Vocabulary | None = None,
                 cache_size: int = 8) -> None:
        self.model = model
        self.tokenizer = None if isinstance(tokenizer, Vocabulary) else tokenizer
        width = _logits_width(model)
        if vocab is None:
            vocab = tokenizer if isinstance(tokenizer, Vocabulary) else \
                Vocabulary.from_hf(tokenizer, vocab_size=width)
        self.vocab = vocab
        self._cache: "OrderedDict[tuple[int, ...], tuple[torch.Tensor, Any]]" = OrderedDict()
        self._cache_size = cache_size
        self.forward_calls = 0

    # model ------------------------------------------------------------------------------------
    def _forward(self, ids: list[int], past=None) -> tuple[torch.Tensor, Any]:
        self.forward_calls += 1
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([ids], dtype=torch.long),
                             past_key_values=past, use_cache=True)
        return out.logits[0, -1].float().contiguous(), out.past_key_values

    def prompt_logits(self, prompt_ids: Sequence[int]) -> torch.Tensor:
        """Next-token logits after ``prompt_ids`` (cached)."""
        return self._prompt_state(list(prompt_ids))[0]

    def _prompt_state(self, ids: list[int]) -> tuple[torch.Tensor, Any]:
        key = tuple(ids)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        state = self._forward(ids)
        self._cache[key] = state
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return state

    def encode(self, prompt) -> list[int]:
        """Token ids of a prompt (text needs a tokenizer; ids pass through)."""
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise TypeError("a text prompt needs a tokenizer; pass token ids")
            return list(self.tokenizer.encode(prompt, add_special_tokens=False))
        return [int(t) for t in prompt]

    # the completion ------------------------------------------------------------------------------
    def __call__(self, prompt, *, max_tokens: int = 16,
                 logit_bias: Mapping[int | str, float] | None = None, top_logprobs: int = 0,
                 temperature: float = 0.0, seed: int | None = None, grammar=None,
                 token_healing: bool = False, stop_at_eos: bool = True,
                 stop_ids: Sequence[int] | None = None,
                 processors: Sequence[Any] = ()) -> Completion:
        """Complete ``prompt`` (text or ids). ``temperature`` 0 is greedy; else a softmax draw
        at that temperature from the biased distribution (seeded by ``seed``). ``grammar`` (a
        Grammar or CompiledGrammar) masks the tokens. ``top_logprobs`` alternatives per token.

        ``token_healing`` backs the prompt up (constrained.healing) and forces the generation to
        start with the removed bytes; ``text`` is still exactly the continuation after the
        original prompt, while ``token_ids`` and the logprobs cover every generated token.
        ``stop_ids`` end the completion (default: the vocabulary's EOS tokens). ``processors``
        (callables logprobs[V] -> logits[V], e.g. samplers.infill.InfillSampler) reshape the
        distribution the token is drawn from; the reported logprobs stay those before them."""
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if top_logprobs < 0:
            raise ValueError("top_logprobs must be >= 0")
        ids = self.encode(prompt)
        prompt_len = len(ids)
        bias = self._bias_vector(logit_bias)
        matcher = self._matcher(grammar)
        healed = b""
        if token_healing:
            from ..healing import TokenHealer
            healer = TokenHealer(self.vocab)
            plan = healer.prepare(ids, matcher)
            ids, healed = plan.trimmed_ids, plan.prefix_bytes
            matcher = healer.matcher(plan, matcher)
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        stops = frozenset(self.vocab.eos_token_ids if stop_ids is None else
                          (int(t) for t in stop_ids))
        logits, past = self._prompt_state(ids)
        if max_tokens > 1:
            past = copy.deepcopy(past)  # the model extends a KV cache in place; keep the cached one
        out_ids: list[int] = []
        chosen_lp: list[float] = []
        alts: list[dict[int, float]] = []
        finish = "length"
        for step in range(max_tokens):
            lp = self._logprobs(logits, bias, matcher)
            pick = lp
            for proc in processors:
                pick = np.asarray(proc(pick), dtype=np.float64)
            tok = self._choose(pick, temperature, gen)
            chosen_lp.append(float(lp[tok]))
            alts.append(self._top(lp, top_logprobs) if top_logprobs else {})
            if matcher is not None:
                matcher.accept_token(tok)
            out_ids.append(tok)
            if stop_at_eos and tok in stops:
                finish = "stop"
                break
            if step + 1 < max_tokens:
                logits, past = self._forward([tok], past)
        texts = self.vocab.token_bytes
        text_ids = [t for t in out_ids if t not in stops and t not in self.vocab.eos_token_ids]
        data = self.vocab.decode(text_ids)[len(healed):]
        return Completion(
            text=data.decode("utf-8", errors="replace"),
            token_ids=out_ids, token_logprobs=chosen_lp, top_logprobs=alts,
            finish_reason=finish, prompt_tokens=prompt_len,
            tokens=[_text(texts, t) for t in out_ids], _texts=texts)

    def _bias_vector(self, logit_bias) -> tuple[np.ndarray, np.ndarray] | None:
        """(token ids, biases) of a logit_bias mapping (None when empty)."""
        if not logit_bias:
            return None
        ids = [int(t) for t in logit_bias]
        bad = [t for t in ids if not 0 <= t < self.vocab.size]
        if bad:
            raise ValueError(f"logit_bias token id {bad[0]} is outside the vocabulary")
        return (np.array(ids, dtype=np.int64),
                np.array([float(b) for b in logit_bias.values()], dtype=np.float64))

    def _matcher(self, grammar):
        if grammar is None:
            return None
        from ..compiler import CompiledGrammar, compile_grammar
        compiled = grammar if isinstance(grammar, CompiledGrammar) else \
            compile_grammar(grammar, self.vocab)
        return compiled.matcher()

    def _logprobs(self, logits: torch.Tensor, bias, matcher) -> np.ndarray:
        """float64 log_softmax of logits + bias (masked by the grammar), in numpy: no torch
        thread-pool round trips for one 1-D vector."""
        x = logits[: self.vocab.size].numpy().astype(np.float64)
        if bias is not None:
            np.add.at(x, bias[0], bias[1])
        if matcher is not None:
            bm = allocate_token_bitmask(self.vocab.size, backend="numpy")
            matcher.fill_next_token_bitmask(bm)
            apply_token_bitmask_inplace(x, bm, self.vocab.size)
        top = x.max()
        return x - (top + np.log(np.exp(x - top).sum()))

    @staticmethod
    def _top(lp: np.ndarray, k: int) -> dict[int, float]:
        k = min(k, lp.size)
        idx = np.argpartition(-lp, k - 1)[:k]
        idx = idx[np.lexsort((idx, -lp[idx]))]
        return {int(i): float(lp[i]) for i in idx}

    @staticmethod
    def _choose(lp: np.ndarray, temperature: float, gen) -> int:
        if temperature <= 0:
            return int(np.argmax(lp))
        z = lp / temperature
        probs = torch.from_numpy(np.exp(z - z.max()))
        return int(torch.multinomial(probs, 1, generator=gen))


def complete(model, tokenizer, prompt, **options) -> Completion:
    """One-off :class:`Completer` call (no logits cache shared between calls)."""
    return Completer(model, tokenizer)(prompt, **options)


def completion_oracle(completer: Completer, prompt, k: int) -> TopLogprobsOracle:
    """A top-k logprobs oracle over one prompt's next token, for the recovery functions."""
    ids = completer.encode(prompt)

    def oracle(logit_bias: Mapping[int, float]) -> dict[int, float]:
        result = completer(ids, max_tokens=1, logit_bias=logit_bias, top_logprobs=k)
        return dict(result.top_logprobs[0])

    return oracle


def _logits_width(model) -> int | None:
    head = getattr(model, "get_output_embeddings", lambda: None)()
    weight = getattr(head, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    size = getattr(getattr(model, "config", None), "vocab_size", None)
    return None if size is None else int(size)


def true_logprobs(completer: Completer, prompt) -> np.ndarray:
    """The model's exact next-token log-distribution for ``prompt`` (float64, no bias)."""
    logits = completer.prompt_logits(completer.encode(prompt))[: completer.vocab.size]
    return completer._logprobs(logits, None, None)
